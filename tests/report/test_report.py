"""memini-bench report: the exports against the committed README and hand-computed cases, the inputs' errors,
and the site's files (the browser tests are in test_report_browser.py)."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from memini_bench.errors import BenchError
from memini_bench.report import exports, model
from memini_bench.report.collect import collect

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
MAIN = [RESULTS / n for n in ("locomo.json", "locomo-sessions.json", "longmemeval.json", "longmemeval-shared.json")]


def _readme_block(name: str) -> str:
    text = (ROOT / "README.md").read_text()
    begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->"
    if begin not in text:
        pytest.skip(f"README.md has no {name} block")
    return text.split(begin, 1)[1].split(end, 1)[0]


def _report(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memini_bench", "report", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_markdown_export_is_the_readme_results_table():
    """The README lists the main files' runs of at least the boards' minimum of questions (not smoke tests)."""
    from memini_bench.report.boards import MIN_QUESTIONS

    ranked = [p for p in MAIN if json.loads(p.read_text())["config"]["questions"] >= MIN_QUESTIONS]
    assert len(ranked) == len(MAIN) - 1  # longmemeval.json: one LongMemEval-S record
    out = _report(*map(str, ranked), "-format", "md")
    assert out.returncode == 0, out.stderr
    assert out.stdout == _readme_block("results")


def test_csv_and_json_hold_every_score_of_the_files():
    inputs = collect([str(p) for p in MAIN])
    raw = [r for p in MAIN for r in json.loads(p.read_text())["results"]]
    rows = list(csv.DictReader(io.StringIO(exports.csv_text(inputs))))
    assert len(rows) == len(raw)
    for got, want in zip(rows, raw, strict=True):
        assert (got["system"], int(got["k"])) == (want["system"], want["k"])
        assert float(got["recall_any@K"]) == want["scores"][f"recall_any@{want['k']}"]
        assert float(got["latency_p95"]) == want["scores"]["latency_p95"]
    doc = json.loads(exports.json_text(inputs))
    assert sum(len(r["by_k"]) for r in doc["rows"]) == len(raw)
    assert [p["data_sha256"] for p in doc["provenance"]] == [json.loads(p.read_text())["config"]["data_sha256"]
                                                            for p in MAIN]


def test_latex_bolds_the_best_and_marks_significant_differences():
    path = RESULTS / "locomo.json"
    doc = json.loads(path.read_text())
    text = exports.latex(collect([str(path)]))
    assert r"\toprule" in text and r"\midrule" in text and r"\bottomrule" in text
    lines = {line.split(" & ")[1]: line.split(" & ")[2:] for line in text.splitlines() if line.startswith("locomo &")}
    r10 = {r["system"]: r["scores"][f"recall_any@{r['k']}"] for r in doc["results"] if r["k"] == 10}
    best = max(r10, key=r10.get)
    assert lines[best][1].startswith(r"\textbf{")  # the R@10 column (R@5, R@10, ...)
    for system in r10:
        if system == best:
            continue
        test = next((t for t in doc["significance"] if {t["system_a"], t["system_b"]} == {best, system}
                     and t["metric"] == "recall_any@10"), None)
        assert (r"$^\dagger$" in lines[system][1]) == bool(test and test["significant"])
    assert exports.tex_escape("a_b & 50%") == r"a\_b \& 50\%"
    notes = text.split("\\end{tabular}\n", 1)[1].splitlines()  # the table's own footnote, under it
    assert notes[0].startswith(f"% N (questions per data set): locomo {max(r['questions'] for r in doc['results'])};")
    assert any(n.startswith(r"% †: differs from the best") for n in notes)
    assert any(n.startswith("% no mark: tested against that best and not significant") for n in notes)
    page = exports.export(collect([str(path)]), "html")
    assert page.startswith("<table>") and "<tfoot>" in page and "<strong>" in page


def test_pareto_front_and_wilson_interval():
    # (latency, recall): (1, .5) dominates (2, .4); (3, .9) is on the front; (3, .9) again ties (neither dominates)
    assert model.pareto([(1, .5), (2, .4), (3, .9), (3, .9)]) == [True, False, True, True]
    lo, hi = model.wilson(0.6, 100)
    # hand-computed: (0.6 + z²/200 ± z·sqrt(0.0024 + z²/40000)) / (1 + z²/100), z = 1.96
    z = 1.959963984540054
    assert lo == pytest.approx((0.6 + z * z / 200 - z * math.sqrt(0.0024 + z * z / 40000)) / (1 + z * z / 100))
    assert (round(lo, 4), round(hi, 4)) == (0.5020, 0.6906)


@pytest.mark.parametrize("args, needle", [
    (["nowhere.json", "-o", "x"], "nowhere.json: no such file or folder"),
    ([str(RESULTS / "quality.json"), "-o", "x"], "no leaderboard results"),
    ([str(RESULTS / "locomo.json")], "give -o DIR"),
    ([str(RESULTS / "locomo.json"), "-format", "md", "-k", "7"], "-k 7: the inputs were scored at K = 5, 10"),
    ([str(RESULTS / "locomo.json"), "-format", "csv", "-k", "5"], "-k: only -format md and -format latex"),
    ([str(RESULTS / "locomo.json"), "-format", "pdf"], "'pdf' is not one of"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, needle):
    out = _report(*args, cwd=ROOT)
    assert out.returncode == 2, out.stderr
    assert needle in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert not (ROOT / "x").exists()


def test_a_per_question_file_that_fits_no_results_file_is_refused(tmp_path):
    pq = tmp_path / "other.jsonl"
    pq.write_text(json.dumps({"system": "nobody", "id": "q1", "gold": ["a"], "ranked": [["a"]]}) + "\n")
    with pytest.raises(BenchError, match="matches 0 results files"):
        collect([str(RESULTS / "locomo.json"), str(pq)])


@pytest.mark.slow
def test_a_longmemeval_m_sized_run_builds_in_under_a_minute(tmp_path, capsys):
    pytest.importorskip("jinja2", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    from devbench.report_scale import main

    assert main(["--dir", str(tmp_path), "--no-browser"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert (line["items"], line["questions"], line["systems"]) == (250_000, 500, 20) and line["build_s"] < 60
    index = (tmp_path / "site" / "receipts" / "longmemeval-m-synthetic" / "index.js").read_text()
    assert len(json.loads(index[index.index("(") + 1:index.rindex(")")])["questions"]) == 500


def test_category_heatmap_takes_rates_of_zero_and_one():
    """Rates of exactly 0 and 1 are drawn and printed (0.0 and 100.0)."""
    pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    from memini_bench.report.plots import category_figure

    fig = category_figure([("s", 0.5, {"a": 0.0, "b": 1.0, "c": 1 / 3}, {"a": 3, "b": 1, "c": 3})], {},
                          "recall_any@10", "t")
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["0.0", "100.0", "33.3", "50.0"]


def _qa_file(path: Path, losses) -> Path:
    from memini_bench.results.schema import study_document
    from memini_bench.results.write import write_results_file

    write_results_file(path, study_document({"config": {"mode": "qa", "dataset": "tiny"}, "results": [],
                                             "losses": losses}))
    return path


class _Tables(__import__("html.parser").parser.HTMLParser):
    """Every table of a page: its caption, header cells, body rows of cell texts, and footnote text."""

    def __init__(self):
        super().__init__()
        self.tables, self.where, self.text = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"caption": "", "head": [], "rows": [], "foot": ""})
        elif tag in ("caption", "thead", "tbody", "tfoot"):
            self.where = tag
        elif tag == "tr" and self.where == "tbody":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self.text = ""

    def handle_data(self, data):
        if self.text is not None:
            self.text += data
        elif self.where == "caption":
            self.tables[-1]["caption"] += data

    def handle_endtag(self, tag):
        if tag == "caption":
            self.where = None
        if tag in ("td", "th") and self.text is not None:
            t = self.tables[-1]
            {"thead": t["head"], "tbody": t["rows"][-1] if t["rows"] else [], "tfoot": []}[self.where].append(
                self.text)
            if self.where == "tfoot":
                t["foot"] = self.text
            self.text = None


def test_qa_results_show_their_loss_table_with_names_escaped(tmp_path):
    """A QA results file gets the QA page: the loss-attribution table through the table model's HTML renderer, one
    row per arm (all) and per category, the counts as the file holds them, a hostile arm name shown as text."""
    pytest.importorskip("jinja2", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    evil = '<script>alert("x")</script>'
    losses = {"memini-hybrid@k5": {"wrong": 3, "buckets": {"gold not retrieved": 2, "gold given, answer wrong": 1},
                                   "by_category": {"multi-hop": {"gold not retrieved": 2},
                                                   "temporal & <b>": {"gold given, answer wrong": 1}}},
              evil: {"wrong": 1, "buckets": {"no gold ids": 1}, "by_category": {"adversarial": {"no gold ids": 1}}}}
    path = _qa_file(tmp_path / "tiny-qa.json", losses)
    out = _report(str(path), "-o", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "site" / "qa.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    assert 'href="qa.html"' in (tmp_path / "site" / "index.html").read_text()
    parser = _Tables()
    parser.feed(page)
    (table,) = parser.tables
    assert table["caption"] == "Where the wrong answers were lost (first pass)"
    assert table["head"] == ["Arm", "Category", "Wrong", "no gold ids", "gold not retrieved",
                             "gold given, answer wrong"]  # the buckets some arm used, in the rules' order
    assert table["rows"] == [["memini-hybrid@k5", "all", "3", "0", "2", "1"],
                             ["memini-hybrid@k5", "multi-hop", "2", "0", "2", "0"],
                             ["memini-hybrid@k5", "temporal & <b>", "1", "0", "0", "1"],
                             [evil, "all", "1", "1", "0", "0"],
                             [evil, "adversarial", "1", "1", "0", "0"]]
    assert table["foot"].startswith("N: the wrong answers of the first pass per arm")


def test_a_damaged_losses_block_is_one_line(tmp_path):
    path = _qa_file(tmp_path / "bad-qa.json", {"arm": {"wrong": -1, "buckets": {}}})
    out = _report(str(path), "-o", str(tmp_path / "site"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "losses arm 'arm' is not" in out.stderr and out.stderr.count("\n") == 1
    assert not (tmp_path / "site").exists()


def test_the_vetobench_page_table_is_the_model_s(tmp_path):
    """vetobench.html's table: one row per suite and system, veto recall@1 and @5 in percent as the file holds them,
    its footnote stating N."""
    pytest.importorskip("jinja2", reason="the report extra is not installed: pip install 'memini-bench[report]'")
    path = RESULTS / "vetobench.json"
    doc = json.loads(path.read_text())
    out = _report(str(path), "-o", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    parser = _Tables()
    parser.feed((tmp_path / "site" / "vetobench.html").read_text())
    (table,) = parser.tables
    assert table["head"] == ["suite", "system", "veto_recall@1", "veto_recall@5"]
    metrics = ("veto_recall@1", "veto_recall@5")
    assert table["rows"] == [[s["suite"], r["system"], *(f"{r[m] * 100:.1f}" for m in metrics)]
                             for s in doc["suites"] for r in s["veto"]]
    assert "N: each suite's scenarios" in table["foot"]


def _latex_rows(text: str) -> list[dict[str, str]]:
    head, body = text.split("\\midrule\n", 1)
    names = [c.strip() for c in head.splitlines()[-1].rstrip(" \\").split(" & ")]
    lines = [line.rstrip(" \\") for line in body.split("\\bottomrule", 1)[0].splitlines() if " & " in line]
    return [dict(zip(names, line.split(" & "), strict=True)) for line in lines]


IDENTITY = ("data set", "questions", "system", "embedder", "file")


def test_latex_keeps_the_identity_columns_its_rows_need_to_be_told_apart():
    """Two memini-hybrid rows of one data set with other embedders (MiniLM, mpnet) need the embedder column (and,
    since memini-keyword has no embedder, the file); one file alone needs neither."""
    files = [RESULTS / "locomo.json", RESULTS / "locomo-mpnet.json"]
    rows = _latex_rows(exports.latex(collect([str(p) for p in files])))
    hybrid = [r for r in rows if r["system"] == "memini-hybrid"]
    assert len(hybrid) == 2 and {h["embedder"] for h in hybrid} == {"all-MiniLM-L6-v2 @512", "all-mpnet-base-v2 @384"}
    identity = [tuple(r[c] for c in IDENTITY if c in r) for r in rows]
    assert len(set(identity)) == len(identity) and "file" in rows[0] and "questions" not in rows[0]
    md = exports.markdown(collect([str(p) for p in files]))
    assert md.count("| memini-hybrid |") == 2  # the Markdown table has the embedder too
    alone = _latex_rows(exports.latex(collect([str(RESULTS / "locomo.json")])))
    assert set(alone[0]) & set(IDENTITY) == {"data set", "system"}
