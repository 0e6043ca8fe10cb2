"""-compare: paired significance from -per-question files, one file (reference vs the rest) or two."""

from __future__ import annotations

import json

import pytest
from cli_run import run_cli

from memini_bench.evaluation.metrics import score
from memini_bench.results.per_question import read_per_question


@pytest.fixture()
def two_runs(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, fusion in ((a, "0.5"), (b, "-1")):
        code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "1,3", "-fusion", fusion, "-out",
                             str(tmp_path / "runs"), "-per-question", str(path)], capsys)
        assert code == 0, err
    return a, b


def test_one_file_compares_the_reference_with_each_system(two_runs, tmp_path, capsys):
    a, _ = two_runs
    code, out, err = run_cli(["-compare", str(a), "-k", "1,3", "-resamples", "500", "-out", str(tmp_path)], capsys)
    assert code == 0, err
    assert "| memini-hybrid | memini-vector | recall_any@1 |" in out
    assert "| memini-hybrid | memini-keyword | mrr |" in out
    doc = json.loads((tmp_path / "compare-a.json").read_text())
    rows = {(r["system_b"], r["metric"]): r for r in doc["results"]}
    results = {r.system: r for r in read_per_question(a)}
    expected = score(results["memini-hybrid"], 3)["mrr"] - score(results["memini-vector"], 3)["mrr"]
    assert rows[("memini-vector", "mrr")]["delta"] == pytest.approx(expected)


def test_two_files_pair_each_system_with_itself(two_runs, tmp_path, capsys):
    a, b = two_runs
    code, out, err = run_cli(["-compare", f"{a},{b}", "-compare-systems", "memini-hybrid", "-k", "1",
                           "-resamples", "500", "-no-write"], capsys)
    assert code == 0, err
    assert "| a.jsonl:memini-hybrid | b.jsonl:memini-hybrid | recall_any@1 |" in out


@pytest.mark.parametrize(("extra", "fragment"), [
    (["-compare-systems", "memini-hybrid"], "pairs systems of two files"),
    (["-fusion", "-1"], "-fusion: not used by -compare"),
])
def test_flag_mistakes_are_one_line(two_runs, capsys, extra, fragment):
    a, _ = two_runs
    code, _, err = run_cli(["-compare", str(a), "-k", "1", "-no-write", *extra], capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_a_results_json_is_refused_with_the_fix(two_runs, tmp_path, capsys):
    results = next((tmp_path / "runs").glob("*.json"))
    code, _, err = run_cli(["-compare", str(results), "-no-write"], capsys)
    assert code == 2 and "-per-question" in err and len(err.strip().splitlines()) == 1
