"""The tables moved onto the one table model: each renders in every format (Markdown, CSV, LaTeX, HTML, JSON) from
the same cells, states its N in its own footnote, and carries hand-computed values: the sweep's cells against the
baseline, the rerank ranking, the gate sweep, VetoBench's behaviour summary, the QA loss attribution, the
contradiction study's gate, the quality scoreboard and ``make scale``'s rows; and the one percent formatter."""

from __future__ import annotations

import csv
import io
import json

from memini_bench.core.dataset import Question
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.core.table import FORMATS, fmt_interval, fmt_pct, fmt_points, fmt_share, render
from memini_bench.evaluation.stats import PairedComparison
from memini_bench.results.schema import RankRow, Score


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_percent_formatter():
    assert fmt_pct(0.81234) == "81.2%" and fmt_pct(0.81234, 0) == "81%" and fmt_pct(None) == "-"
    assert fmt_points(0.81234) == "81.2" and fmt_points(-0.0123, signed=True) == "-1.2"
    assert fmt_points(0.05, signed=True) == "+5.0" and fmt_points(0.123456, 2) == "12.35"
    assert fmt_share(3, 4) == "75.0%" and fmt_share(1, 0) == "-"
    assert fmt_interval(-0.0123, 0.034) == "[-1.2, +3.4]"


def _phase():
    from memini_bench.evaluation.significance import Significance
    from memini_bench.modes.sweep import Phase

    questions = tuple(QuestionRun(Question(f"q{i}", "x", ("a",)), (("a",),), (1.0,), (1,), 0.1) for i in range(40))
    baseline = RunResult("baseline", "d", 10, 0.0, 0, questions)

    def score(system, k, r, mrr, ndcg):
        return Score(system, "d", k, 40, {f"recall_any@{k}": r, "mrr": mrr, f"ndcg@{k}": ndcg})

    def test(system, metric, delta, low, high, p, adjusted):
        return PairedComparison(system, "baseline", metric, 40, 0.5, 0.5 - delta, delta, low, high,
                                "mcnemar" if metric.startswith("recall_any@") else "bootstrap", 3, 1, p, adjusted,
                                adjusted < 0.05)

    rows = (test("fusion=0.3", "recall_any@5", 0.125, 0.025, 0.225, 0.01, 0.02),
            test("fusion=0.3", "mrr", 0.0312, -0.004, 0.071, 0.2, 0.2))
    return Phase("tune", ["fusion=0.3"], [], [[score("fusion=0.3", 5, 0.625, 0.5123, 0.55),
                                                  score("fusion=0.3", 10, 0.75, 0.5123, 0.6)]], baseline,
                 [score("baseline", 5, 0.5, 0.48125, 0.5), score("baseline", 10, 0.7, 0.48125, 0.58)],
                 Significance(rows, (5, 10), 1000, 0, 0.05))


def test_a_sweep_table_exports_to_csv_and_latex():
    from memini_bench.modes.sweep import table

    t = table(_phase(), (5, 10), "sweep over fusion")
    csv_rows = _rows(render(t, "csv"))
    assert [r["cell"] for r in csv_rows] == ["baseline (the run's settings)", "fusion=0.3"]
    assert float(csv_rows[1]["recall_any@5"]) == 0.625 and float(csv_rows[1]["recall_any@10"]) == 0.75
    assert float(csv_rows[1]["delta_r"]) == 0.125 and csv_rows[0]["delta_r"] == ""
    tex = render(t, "latex")
    line = next(x for x in tex.splitlines() if x.startswith("fusion=0.3 &"))
    cells = line.removesuffix(r" \\").split(" & ")
    # R@5, R@10, MRR, nDCG@10 in percent; the significant R@5 delta bold, the MRR one (Holm p 0.2) not
    assert cells[1:5] == ["62.5", "75.0", "51.2", "60.0"]
    assert cells[5] == r"\textbf{+12.5}" and cells[7] == "+3.1 [-0.4, +7.1]"
    assert cells[6] == "0.01 (0.02)"
    assert "% N: 40 questions of the tune split" in tex and "% Bold: significant at 0.05 after Holm" in tex
    md = render(t, "md")
    assert "| fusion=0.3 | 62.5 | 75.0 | 51.2 | 60.0 | **+12.5** | 0.01 (0.02) | +3.1 [-0.4, +7.1] | 0.2 (0.2) |" in md
    assert "N: 40 questions of the tune split" in md


def test_the_rerank_ranking_table_states_n_and_exports():
    from memini_bench.modes.ranking import table

    rows = [RankRow("baseline", "1", 12, 0.25, 0.5, 0.375), RankRow("rerank", "1", 12, 0.5, 0.5, 0.6)]
    t = table(rows, 10, "Hybrid vs x", {"1": "multi-hop"})
    assert render(t, "md").splitlines()[4] == "| 1 (multi-hop) | baseline | 12 | 25.0% | 50.0% | 37.5% |"
    doc = json.loads(render(t, "json"))
    assert doc["rows"][1]["recall_any_at_1"] == {"value": 0.5, "text": "50.0%", "best": False, "marks": [],
                                             "strong": False}
    assert doc["notes"][0].startswith("N: Q, the questions of each category")
    assert "<tfoot>" in render(t, "html") and r"\bottomrule" in render(t, "latex")


def test_the_gate_table_keeps_memini_s_rules():
    from memini_bench.modes.gates import GateRow, _markdown

    text = _markdown([GateRow(0.5, 0.8, 0.125), GateRow(0.55, 0.7, 0.05)], 5, "vec gate", "min_vec_score")
    lines = text.splitlines()
    assert lines[2:6] == ["| min_vec_score | pos R@K | neg inject % |", "|--------------:|--------:|-------------:|",
                          "| 0.500 | 80.0% | 12.5% |", "| 0.550 | 70.0% | 5.0% |"]
    assert lines[-1].startswith("N: the queries above")


def test_vetobench_behaviour_table_through_the_model():
    from memini_bench.vetobench.summary import _behaviour_table, summarize

    def cell(cond, trap, violation, ack=False):
        return {"condition": cond, "trap": trap, "verdict": {"violation": violation, "acknowledged": ack}}

    run1 = summarize([cell("sys", "direct", True), cell("sys", "direct", False, True), cell("sys", "other", False)])
    run2 = summarize([cell("sys", "direct", False), cell("sys", "direct", False), cell("sys", "other", False, True)])
    t = _behaviour_table("## toy", ["sys"], ["direct", "other"], [run1, run2])
    md = render(t, "md")
    # violation: 1/3 in run 1, 0/3 in run 2; acknowledged 1/3 in both; direct violations 1 then 0, of 2
    assert "| sys | 2 | 0%-33% | 33% | 0-1/2 | 0/1 | 0 |" in md
    (row,) = _rows(render(t, "csv"))
    assert row["runs"] == "2" and row["errors"] == "0"
    assert "% N: runs, the archived runs" in render(t, "latex")


def test_the_loss_table_renders_in_every_format():
    from memini_bench.results.loss_table import loss_table

    block = {"a@k5": {"wrong": 3, "buckets": {"gold not retrieved": 1, "judge disagreement": 2},
                      "by_category": {"c1": {"gold not retrieved": 1}, "c2": {"judge disagreement": 2}}}}
    t = loss_table(block)
    assert [c.header for c in t.columns] == ["Arm", "Category", "Wrong", "judge disagreement", "gold not retrieved"]
    assert [[c.text for c in r] for r in t.rows] == [["a@k5", "all", "3", "2", "1"], ["a@k5", "c1", "1", "0", "1"],
                                                     ["a@k5", "c2", "2", "2", "0"]]
    for fmt in FORMATS:
        assert "a@k5" in render(t, fmt)
    assert render(t, "md").startswith("### Where the wrong answers were lost (first pass)\n\n| Arm | Category |")


def test_the_contradiction_gate_table_marks_missing_published_figures():
    from memini_bench.studies.contradiction import gate_table

    floors = [{"floor": 0.5, "update_routed": 40, "update_fired": 37, "restatement_fired": 0, "distinct_fired": 1},
              {"floor": 0.55, "update_routed": 37, "update_fired": 34, "restatement_fired": 0, "distinct_fired": 0}]
    t = gate_table(floors, 40, {0.55: (27, 0, 1)})
    assert render(t, "md").splitlines()[2:] == ["| 0.500 | 40/40 | 37/40 | 0 | 1 | - |",
                                                "| 0.550 | 37/40 | 34/40 | 0 | 0 | 27/36, 0/1 |"]
    assert [r["update_fired"] for r in _rows(render(t, "csv"))] == ["37", "34"]
    assert "% N: 40 authored quads" in render(t, "latex")


def test_the_quality_scoreboard_table():
    from memini_bench.core.dataset import Dataset, Item
    from quality.scoreboard import Board, Config, table

    ds = Dataset("q", (Item("m1", "g", "x"),), (Question("f", "x", ("m1",), category="fact"),
                                                 Question("d", "x", ("m1",), category="detail")))
    board = Board(0.5, 0.25, 1.0, 0.75, 0.667, 0.6, 1, 2, 3, 4, 1, 3)
    text = table("hash", ds, [(Config("production", 2, 5), board)])
    assert "| production | 5 | 2 | 50.0% / 0.250 | 100.0% / 0.750 | 0.667 | 0.600 | 1/2 | 3/4 | 1/3 |" in text
    assert "N: 2 queries asked in order per config" in text


def test_the_scale_rows_through_the_model():
    from devbench.scale import HEADER, Measured, row

    report = {"items": 10, "distinct_texts": 8, "cpu_s": 2.25, "phases_s": {"load": 0.5, "ingest+recall": 3.0},
              "backend_s": {"keyword_index": 0.25, "embed": 1.0}, "recall_s": {"a": 0.5, "b": 0.25},
              "p50_ms": {"memini-hybrid": 0.1234}}
    line = row(Measured("S", "warm", 4.0, 0.5, report))
    assert line == ("| S | warm | 10 / 8 | 4.0 | 2.2 | 0.50 | 0.5 | 0.2 | 0.0 | 1.0 | 2.2 | 0.8 | 0.123 | nan | nan |")
    assert HEADER.splitlines()[1] == "|---|---|---|" + "--:|" * 12
    failed = row(Measured("M", "once", 9.0, 8.5, error="stopped above 8 GB RSS"))
    assert failed.startswith("| M | once | failed: stopped above 8 GB RSS | 9.0 | - | 8.50 | - |")


def test_report_to_latex_is_the_model_s():
    """Report.to_latex renders through the model: the best of each column bold, N stated."""
    from memini_bench.api.report import Report

    scores = (Score("a", "d", 5, 20, {"recall_any@5": 0.5, "recall_all@5": 0.25, "mrr": 0.4, "ndcg@5": 0.45,
                                      "latency_p50": 1.5}),
              Score("b_x", "d", 5, 20, {"recall_any@5": 0.75, "recall_all@5": 0.25, "mrr": 0.3, "ndcg@5": 0.5,
                                        "latency_p50": 0.5}))
    report = Report("d", (5,), scores)
    tex = report.to_latex()
    assert r"b\_x & \textbf{75.0} & \textbf{25.0} & 30.0 & \textbf{50.0} & \textbf{0.50} \\" in tex
    assert r"a & 50.0 & \textbf{25.0} & \textbf{40.0} & 45.0 & 1.50 \\" in tex
    assert "% N = 20 questions per system" in tex
