"""The one table model and its renderers: the same Table as Markdown, CSV, LaTeX (booktabs), HTML and JSON; the
best marks by each column's direction; the notes (N, what a mark means) in LaTeX and HTML always; and the CLI's
``-metrics`` table and ``-list metrics``."""

from __future__ import annotations

import csv
import io
import json

import pytest
from cli_run import run_cli

from memini_bench.core.table import Cell, Column, Table, fmt_num, fmt_pct, render
from memini_bench.results.read import load

COLS = (Column("system", "System", "left"), Column("r", "R@5", better="higher"), Column("p50", "p50 ms",
                                                                                       better="lower"))
ROWS = ((Cell("a_b", "a_b"), Cell(0.5, fmt_pct(0.5)), Cell(1.25, fmt_num(1.25))),
        (Cell("c&d", "c&d"), Cell(0.75, fmt_pct(0.75), marks=("†",)), Cell(0.5, fmt_num(0.5))),
        (Cell("e", "e"), Cell(None, fmt_pct(None)), Cell(2.0, fmt_num(2.0))))
NOTES = ("N = 8 questions per system", "bold: best per column; †: differs from the best (McNemar, Holm p < 0.05); "
         "no mark: no test or no difference")
TABLE = Table(COLS, ROWS, title="## toy", notes=NOTES, marks={"†": "differs from the best"}).with_best()


def test_best_marks_follow_each_columns_direction():
    assert [[c.best for c in row] for row in TABLE.rows] == [[False, False, False], [False, True, True],
                                                             [False, False, False]]


def test_markdown():
    assert render(TABLE, "md") == ("## toy\n\n| System | R@5 | p50 ms |\n|---|--:|--:|\n| a_b | 50.0% | 1.25 |\n"
                                   "| c&d | 75.0%† | 0.50 |\n| e | - | 2.00 |\n")
    bold = Table(COLS, ROWS, notes=NOTES, bold_best=True, notes_in_markdown=True).with_best()
    assert "| c&d | **75.0%†** | **0.50** |" in render(bold, "md") and render(bold, "md").endswith(NOTES[1] + "\n")


def test_csv_holds_raw_values():
    rows = list(csv.reader(io.StringIO(render(TABLE, "csv"))))
    assert rows == [["system", "r", "p50"], ["a_b", "0.5", "1.25"], ["c&d", "0.75", "0.5"], ["e", "", "2.0"]]


def test_latex_is_booktabs_with_bold_marks_and_its_own_footnote():
    text = render(TABLE, "latex")
    lines = text.splitlines()
    assert lines[1] == r"\begin{tabular}{lrr}" and lines[2] == r"\toprule" and r"\bottomrule" in lines
    assert r"c\&d & \textbf{75.0\%}$^\dagger$ & \textbf{0.50} \\" in lines and r"a\_b & 50.0\% & 1.25 \\" in lines
    assert lines[-2:] == [f"% {n}" for n in NOTES]  # N and what bold, a dagger and no mark mean


def test_html_and_json():
    page = render(TABLE, "html")
    assert "<caption>toy</caption>" in page and "<strong>75.0%</strong><sup>†</sup>" in page
    assert "c&amp;d" in page and "<tfoot>" in page and "N = 8 questions per system" in page
    doc = json.loads(render(TABLE, "json"))
    assert [c["key"] for c in doc["columns"]] == ["system", "r", "p50"] and doc["notes"] == list(NOTES)
    assert doc["rows"][1]["r"] == {"value": 0.75, "text": "75.0%", "best": True, "marks": ["†"], "strong": False}
    assert doc["rows"][2]["r"]["value"] is None


def test_metrics_flag_prints_those_columns_and_stores_them(tmp_path, capsys):
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "5,10", "-out", str(tmp_path),
                              "-metrics", "recall_frac@5,mrr@10,precision"], capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("| System"))
    assert header == "| System | recall_frac@5 | mrr@10 | precision@5 | precision@10 |"
    assert "Recall@5" not in out and "N = 8 questions per system" in out
    (path,) = tmp_path.glob("*.json")
    doc = load(path)
    row = next(s for s in doc.scores if s.k == 10)
    assert {"recall_frac@5", "mrr@10", "precision@10", "recall_any@10", "mrr"} <= set(row.scores)
    printed = next(line for line in out.splitlines() if line.startswith(f"| {row.system} "))
    assert f"{row.scores['mrr@10'] * 100:.1f}%" in printed


@pytest.mark.parametrize("args, message", [
    (["-metrics", "recal_frac@5"], "-metrics 'recal_frac@5': unknown metric; did you mean recall_frac@5?"),
    (["-metrics", "r_precision@5"], "r_precision takes no cut-off"),
    (["-metrics", ","], "give metric names"),
])
def test_a_bad_metric_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-out", str(tmp_path), *args], capsys)
    assert code == 2 and err.strip().splitlines()[-1].startswith("memini-bench: error: ") and message in err
    assert not list(tmp_path.iterdir())


def test_list_metrics(capsys):
    code, out, _ = run_cli(["-list", "metrics"], capsys)
    assert code == 0 and out.startswith("metrics") and "recall_frac@K" in out and "ndcg_lme@K" in out
    assert "systems:" not in out
    code, out, _ = run_cli(["-list"], capsys)
    assert code == 0 and "systems:" in out and "recall_frac@K" in out
    code, _, err = run_cli(["-list", "metric"], capsys)
    assert code == 2 and "list one of systems, suites, embedders, executors, metrics" in err
