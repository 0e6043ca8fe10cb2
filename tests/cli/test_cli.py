"""The command line: Go- and GNU-style flags, results naming, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_run import run_cli


def test_sample_run_writes_results(tmp_path, capsys):
    code, out, err = run_cli(["-suite", "sample", "-embedder", "hash", "-out", str(tmp_path)], capsys)
    assert code == 0
    assert "## memini-sample — 8 questions, recall_any@5" in out
    for name in ("memini-hybrid", "memini-vector", "memini-keyword"):
        assert f"| {name} |" in out
    doc = json.loads((tmp_path / "memini-sample-emb-hash.json").read_text())
    assert doc["config"]["suite"] == "sample" and doc["config"]["embed_model"] == "hash-fnv1a32-256"
    assert len(doc["config"]["data_sha256"]) == 64
    assert [(r["system"], r["k"]) for r in doc["results"]] == [
        ("memini-hybrid", 5), ("memini-vector", 5), ("memini-keyword", 5)]
    assert 'dataset "memini-sample": 10 items, 8 questions' in err


def test_gnu_style_flags_limit_suffix_and_per_question(tmp_path, capsys):
    pq = tmp_path / "pq.jsonl"
    code, out, _ = run_cli(["--suite=sample", "--embedder", "hash", "--k", "1,3", "--limit", "4", "--out",
                         str(tmp_path), "--per-question", str(pq), "--systems", "keyword"], capsys)
    assert code == 0 and "recall_any@1" in out and "recall_any@3" in out
    doc = json.loads((tmp_path / "memini-sample-limit4-sys-keyword.json").read_text())
    assert doc["config"]["limit"] == 4 and doc["results"][0]["questions"] == 4
    rows = [json.loads(line) for line in pq.read_text().splitlines()]
    assert len(rows) == 4 and set(rows[0]) >= {"id", "group", "gold", "ranked", "scores", "first_gold_rank",
                                                "latency_ms"}
    assert not (tmp_path / "memini-sample-emb-hash.json").exists()


@pytest.mark.parametrize("args, fragment", [
    (["-suite", "nope"], "unknown suite"),
    (["-suite", "locomo"], "needs -data"),
    (["-suite", "file", "-data", "/no/such/file.json"], "no such file"),
    (["-k"], "requires an argument"),
    (["-holdout", "half"], "'half' is not one of"),
    (["-bogus"], "No such option"),
    (["-embedder", "nonsense"], "unknown"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, fragment):
    code, out, err = run_cli(["-out", str(tmp_path), *args], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memini-bench: error:") and fragment in lines[0]
    assert "Traceback" not in err and not list(tmp_path.iterdir())


def test_malformed_file_leaves_previous_results_untouched(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "items": [{"id": 1}]')
    results = tmp_path / "out"
    results.mkdir()
    (results / "x.json").write_text("previous")
    code, _, err = run_cli(["-suite", "file", "-data", str(bad), "-out", str(results)], capsys)
    assert code == 2 and "not valid JSON" in err and (results / "x.json").read_text() == "previous"


def _help(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "memini_bench", *args], capture_output=True, text=True,
                          check=True).stdout


def test_help_is_grouped_short_and_points_to_the_rest():
    """--help: the everyday flags in full under headings, one line per other topic, at most 120 lines;
    --help-all and help TOPIC show every flag, with its default."""
    from memini_bench.cli import command
    from memini_bench.core.settings import flag_fields
    from memini_bench.modes import mode_option_classes
    from memini_bench.modes.options import RunOptions

    short = _help("-h")
    assert len(short.splitlines()) <= 120
    for heading in ("Examples:", "Core:", "Data and its preparation:", "Systems:", "Outputs:", "More ("):
        assert heading in short
    for name in ("-suite", "-holdout", "-per-question", "[default: sample]"):
        assert name in short
    for topic in ("hybrid", "embedding", "sweep", "qa", "vetobench", "rerank-tier"):
        assert f"\n  {topic} " in short        # one line each, named so `help TOPIC` finds it
    everything = _help("--help-all")
    flags = ["-" + f.metadata["flag"] for cls in RunOptions.concern_classes() + mode_option_classes()
             for f in flag_fields(cls)]
    assert len(flags) == len(set(flags)) and len(command.params) >= len(flags)
    for flag in flags:                           # every flag of every concern and mode, none lost
        assert f"{flag}, -{flag}" in everything, flag
    topic = _help("help", "hybrid")
    assert "--pool-floor" in topic and "-keyword-backend" in topic and "-suite" not in topic


def test_trec_export_scores_the_same_in_ir_measures(tmp_path, capsys):
    import ir_measures
    from ir_measures import RR, Success, nDCG

    code, _, _ = run_cli(["-suite", "sample", "-embedder", "hash", "-k", "1,5", "-out", str(tmp_path),
                       "-trec", str(tmp_path / "trec")], capsys)
    assert code == 0
    doc = json.loads((tmp_path / "memini-sample-emb-hash.json").read_text())
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "trec" / "memini-sample-emb-hash.qrels")))
    for row in doc["results"]:
        run = list(ir_measures.read_trec_run(str(tmp_path / "trec" / f"memini-sample-emb-hash.{row['system']}.run")))
        agg = ir_measures.calc_aggregate([Success @ row["k"], nDCG @ row["k"], RR @ 5], qrels, run)
        assert agg[Success @ row["k"]] == pytest.approx(row["scores"][f"recall_any@{row['k']}"])
        assert agg[nDCG @ row["k"]] == pytest.approx(row["scores"][f"ndcg@{row['k']}"], abs=1e-4)
        assert agg[RR @ 5] == pytest.approx(row["scores"]["mrr"])


@pytest.mark.parametrize("flag_name", ["-trec", "-out"])
def test_an_output_folder_that_is_a_file_is_refused_before_any_work(tmp_path, capsys, flag_name):
    taken = tmp_path / "taken"
    taken.write_text("x")
    args = ["-suite", "sample", "-embedder", "hash", flag_name, str(taken)]
    if flag_name != "-out":
        args += ["-out", str(tmp_path / "out")]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and f"{flag_name} {taken}: is a file" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_per_question_onto_a_folder_is_refused(tmp_path, capsys):
    code, _, err = run_cli(["-suite", "sample", "-embedder", "hash", "-out", str(tmp_path / "out"),
                         "-per-question", str(tmp_path)], capsys)
    assert code == 2 and "-per-question" in err and not (tmp_path / "out").exists()
