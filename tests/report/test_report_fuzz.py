"""The report over any mix of real results files: random subsets of the committed results/ (sub-folders and
per-question records included) and of fresh runs with different K lists, identities, splits and modes build a
site and every table export, or stop with one BenchError line: never another exception (a raw traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memini_bench.errors import BenchError
from memini_bench.report import exports, site
from memini_bench.report.collect import collect
from tests.conftest import needs_report

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
SAMPLE = ROOT / "memini_bench" / "data" / "sample.json"
#: Fresh runs of the sample suite (hash embedder): (folder, extra flags, per-question file or None).
RUNS = (("k5", ["-k", "5"], True), ("k5-10", ["-k", "5,10"], True), ("reinforce", ["-k", "5,10", "-reinforce"], False),
        ("k3-fusion", ["-k", "3", "-systems", "hybrid", "-fusion", "0.3"], True),
        ("tune", ["-k", "5,10", "-holdout", "tune"], False),
        ("sweep", ["-k", "5,10", "-sweep", "fusion=0.3,0.5"], False))


def _committed() -> list[Path]:
    paths = sorted(RESULTS.glob("*.json")) + sorted(RESULTS.glob("*.jsonl*"))
    paths += sorted((RESULTS / "reference").glob("*.json")) + sorted((RESULTS / "reference").glob("*.jsonl.gz"))
    paths += sorted(RESULTS.glob("*/summary.json")) + sorted(RESULTS.glob("bench/*.json"))
    return paths


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("fuzz")
    fresh = []
    for name, flags, per_question in RUNS:
        out = tmp / name
        extra = ["-per-question", str(tmp / f"{name}.jsonl")] if per_question else []
        run = subprocess.run([sys.executable, "-m", "memini_bench", "-suite", "sample", "-data", str(SAMPLE),
                              "-embedder", "hash", *flags, "-out", str(out), *extra], capture_output=True, text=True,
                             cwd=ROOT)
        assert run.returncode == 0, run.stderr
        fresh += sorted(out.rglob("*.json")) + ([tmp / f"{name}.jsonl"] if per_question else [])
    return fresh + _committed()


def _build(paths: list[Path], out: Path) -> None:
    """Build the site and every export of ``paths``; only a one-line BenchError may stop it."""
    try:
        inputs = collect([str(p) for p in paths])
        site.build(inputs, out)
        for fmt in ("md", "csv", "latex", "json"):
            exports.export(inputs, fmt, None)
    except BenchError as exc:
        assert "\n" not in str(exc) and str(exc), repr(exc)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(data=st.data())
def test_any_few_results_files_build_or_stop_in_one_line(pool, tmp_path, data):
    subset = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True))
    _build(subset, tmp_path / f"site-{abs(hash(tuple(subset)))}")


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_any_results_files_build_or_stop_in_one_line(pool, tmp_path, data):
    subset = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=16, unique=True))
    _build(subset, tmp_path / f"site-{abs(hash(tuple(subset)))}")


def test_runs_with_different_k_lists_of_one_data_set_build(pool, tmp_path):
    """The pair that crashed the category bars (``-k 5`` beside ``-k 5,10`` and ``-reinforce``), via the CLI."""
    needs_report()
    picks = [p for p in pool if p.parent.name in ("k5", "k5-10", "reinforce") and p.suffix == ".json"]
    assert len(picks) == 3
    out = subprocess.run([sys.executable, "-m", "memini_bench", "report", *map(str, picks), "-o",
                          str(tmp_path / "site")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert (tmp_path / "site" / "index.html").is_file()
