"""One metric vocabulary, end to end: a metric registered in one file (here, this test) reaches the CLI's run
table, a significance row, the results file, the report's HTML and the API's DataFrame under its registered name,
with no other file touched; the old spellings still read; the depth rule is one function."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest
from cli_run import run_cli

from memini_bench.core import metrics
from memini_bench.core.dataset import Question
from memini_bench.core.registry import METRICS
from memini_bench.core.runs import QuestionRun, RunResult
from tests.conftest import needs_extra, needs_report


@dataclass(frozen=True)
class FirstHitHalf(metrics.Metric):
    """first_hit_half@K: 1 when the first relevant hit lies in the top half of K (a throwaway metric)."""

    params: ClassVar[tuple[str, ...]] = ()
    family: ClassVar[str] = "first_hit_half"
    citation: ClassVar[str] = "this test"
    formula: ClassVar[str] = "1 if the first hit meeting G is at rank < K / 2, else 0; mean over questions"

    def per_question(self, run: QuestionRun) -> float:
        half = (self.k or 0) / 2
        return next((1.0 for r, ids in enumerate(self.top(run)) if r < half and self.relevant(run) & set(ids)), 0.0)


@pytest.fixture
def throwaway():
    METRICS.add("first_hit_half", FirstHitHalf, "first relevant hit in the top half of K (test)")
    yield "first_hit_half@4"
    METRICS._entries.pop("first_hit_half")


def test_a_registered_metric_reaches_the_table_significance_file_report_and_dataframe(throwaway, tmp_path, capsys):
    needs_report()
    needs_extra("api", "pandas")
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "4,8", "-metrics",
                              f"{throwaway},recall_any@4", "-significance", "-out", str(tmp_path)], capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("| System"))
    assert f"| {throwaway} |" in header  # the CLI's table
    sig = next(line for line in out.splitlines() if f"| {throwaway} |" in line and "McNemar" not in line
               and "bootstrap" in line)
    assert sig  # a paired test of it, by the bootstrap (the metric declares no 0/1 test)
    path = next(tmp_path.glob("*.json"))
    doc = json.loads(path.read_text())
    assert all(throwaway in row["scores"] for row in doc["results"])
    names = {row["metric"] for row in doc["significance"]}
    assert throwaway in names and {"recall_any@4", "mrr", "ndcg@8"} <= names  # registered names only
    assert not names & {"R@4", "MRR", "nDCG@8"}

    code, _, err = run_cli(["report", "--out", str(tmp_path / "site"), str(path)], capsys)
    assert code == 0, err
    html = "".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "first_hit_half@K" in html and throwaway in html  # a leaderboard column and its significance block

    from memini_bench import evaluate

    report = evaluate(["memini-keyword", "memini-vector"], embedder="hash", k=(4, 8), metrics=throwaway,
                      significance=True)
    frame = report.to_dataframe()
    assert throwaway in frame.columns and frame[throwaway].between(0, 1).all()
    assert throwaway in {row["metric"] for row in report.significance}


def test_old_spellings_read_and_the_registered_name_is_written():
    assert [metrics.canonical(n) for n in ("R@5", "RA@5", "MRR", "nDCG@10", "p95_ms")] == [
        "recall_any@5", "recall_all@5", "mrr", "ndcg@10", "latency_p95"]
    assert metrics.normalize("R@5") == "recall_any@5" and metrics.normalize("not a metric") == "not a metric"
    assert metrics.parse_list("R@5,MRR") == (metrics.RecallAnyAtK(k=5), metrics.MRR())


def _run(depth: int, rank: int) -> RunResult:
    q = Question(id="q", query="", gold=("g",), group="x")
    ranked = tuple((f"x{i}",) if i != rank else ("g",) for i in range(depth))
    return RunResult("s", "d", depth, 0.0, 1, (QuestionRun(q, ranked, (0.0,) * depth, (1,) * depth, 0.0),))


def test_the_depth_rule_is_one_function():
    """``mrr`` without @K is MRR at the run's largest K, whatever the ranking's depth (``resolve_cutoff``); a
    metric that needs a cut-off takes the row's K; one with its own @K keeps it."""
    from memini_bench.evaluation.metrics import score

    deep = _run(depth=20, rank=9)  # the gold at rank 10 of a 20-deep ranking
    assert metrics.resolve_cutoff(metrics.MRR(), 5, (5, 10)).value(deep) == pytest.approx(1 / 10)
    assert metrics.resolve_cutoff(metrics.MRR(), 5, (5,)).value(deep) == 0.0
    assert metrics.resolve_cutoff(metrics.MRR(), 5, (5,)).name == "mrr"
    assert metrics.resolve_cutoff(metrics.RecallFrac(), 5, (5, 10)) == metrics.RecallFrac(k=5)
    assert metrics.resolve_cutoff(metrics.MRR(k=20), 5, (5,)).value(deep) == pytest.approx(1 / 10)
    assert score(deep, 5, ks=(5,))["mrr"] == 0.0 and score(deep, 5, ks=(5, 10))["mrr"] == pytest.approx(0.1)
