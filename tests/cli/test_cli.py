"""The command line: Go- and GNU-style flags, results naming, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from cli_run import run_cli, untimed


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
    (["-suite", "locomo", "-embedder", "hash"], "needs -data"),  # hash: the data's error, on any install
    (["-suite", "file", "-data", "/no/such/file.json", "-embedder", "hash"], "no such file"),
    (["-k"], "requires an argument"),
    (["-holdout", "half"], "'half' is not one of"),
    (["-bogus"], "no such flag -bogus"),
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
    code, _, err = run_cli(["-suite", "file", "-data", str(bad), "-embedder", "hash", "-out", str(results)], capsys)
    assert code == 2 and "not valid JSON" in err and (results / "x.json").read_text() == "previous"


def _help(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "memini_bench", *args], capture_output=True, text=True,
                          check=True).stdout


def test_help_lists_the_verbs_and_each_verb_shows_its_own_flags_grouped():
    """--help: the verbs and the flat form's mapping table; each verb's --help its own flags under headings, one
    line per other topic, at most 60 lines; --help-all and help TOPIC show every flag, with its default."""
    from memini_bench.cli import command
    from memini_bench.core.settings import flag_fields
    from memini_bench.modes import mode_option_classes
    from memini_bench.modes.options import RunOptions
    from memini_bench.modes.routes import FLAT_ROUTES

    short = _help("-h")
    for verb in ("run", "sweep", "compare", "qa", "study NAME", "vetobench", "score", "report", "data", "list",
                 "help"):
        assert f"\n  {verb} " in short, verb
    for route in FLAT_ROUTES:
        assert route.flags in short and route.verb in short
    run = _help("run", "--help")
    assert len(run.splitlines()) <= 60
    for heading in ("Examples:", "Core:", "Systems:", "More (", "Flags of the system comparison:"):
        assert heading in run
    for name in ("-suite", "-significance", "-reference", "[default: sample]", "--plan"):
        assert name in run
    assert "-sweep," not in run and "-qa-k" not in run           # another verb's flags are not this one's
    for topic in ("hybrid", "embedding"):
        assert f"\n  {topic} " in run                           # one line each, named so `help TOPIC` finds it
    assert "-qa-k" in _help("qa", "--help") and "-qa," not in _help("qa", "--help")   # -qa is the verb itself
    everything = _help("--help-all")
    flags = ["-" + f.metadata["flag"] for cls in RunOptions.concern_classes() + mode_option_classes()
             for f in flag_fields(cls)]
    assert len(flags) == len(set(flags)) and len(command.params) >= len(flags)
    for flag in flags:                           # every flag of every concern and mode, none lost (an alias between)
        assert re.search(rf"\n  {flag}, (-[\w-]+, )*-{flag}\b", everything), flag
    assert "-sweep, -grid, --sweep, --grid" in everything
    topic = _help("help", "hybrid")
    assert "--pool-floor" in topic and "-keyword-backend" in topic and "-suite" not in topic


@pytest.mark.parametrize("verb", ["run", "sweep", "compare", "qa", "vetobench", "list", "study rerank",
                                  "study rerank-tier", "study gates", "study multihop", "study entity-bridge"])
def test_each_verb_help_is_at_most_60_lines(verb):
    from click.testing import CliRunner

    from memini_bench.cli.verbs import verb_command

    out = CliRunner().invoke(verb_command(verb), ["--help"], prog_name=f"memini-bench {verb}")
    assert out.exit_code == 0 and ("Core:" in out.output or verb == "list") and "--plan" in out.output
    assert len(out.output.splitlines()) <= 60, (verb, len(out.output.splitlines()))


@pytest.mark.parametrize("args, message", [
    (["-sytems", "x"], "no such flag -sytems; did you mean -systems?"),
    (["--sytems", "x"], "no such flag --sytems; did you mean --systems?"),
    (["-k3", "-embdder", "hash"], "no such flag -embdder; did you mean -embedder?"),
    (["run", "-sufite", "sample"], "no such flag -sufite; did you mean -suite?"),
    (["qa", "-sweep", "fusion=0.3"], "no such flag -sweep here; it is memini-bench sweep's "
                                     "(see memini-bench sweep --help)"),
])
def test_a_mistyped_flag_names_the_closest_in_its_spelling(tmp_path, capsys, args, message):
    code, _, err = run_cli([*args, "-out", str(tmp_path)], capsys)
    assert code == 2 and err.strip() == f"memini-bench: error: {message}" and not list(tmp_path.iterdir())


def test_the_flat_form_and_the_verb_write_the_same_results_file(tmp_path, capsys):
    """The flat form without a mode flag is ``run``: the same results file (name, identity, scores)."""
    flat, verb = tmp_path / "flat", tmp_path / "verb"
    args = ["-suite", "sample", "-embedder", "hash", "-k", "1,5", "-significance", "-resamples", "200"]
    assert run_cli([*args, "-out", str(flat)], capsys)[0] == 0
    assert run_cli(["run", *args, "--out", str(verb)], capsys)[0] == 0
    assert sorted(p.name for p in flat.iterdir()) == sorted(p.name for p in verb.iterdir()) == [
        "memini-sample-emb-hash.json"]
    a, b = (json.loads((d / "memini-sample-emb-hash.json").read_text()) for d in (flat, verb))
    assert a["config"]["identity"] == b["config"]["identity"]
    assert a["significance"] == b["significance"]
    assert untimed(a["results"]) == untimed(b["results"])  # all but the timings


@pytest.mark.parametrize("args, fragment", [
    (["sweep", "-suite", "sample"], "sweep: give -sweep SPEC"),
    (["study", "gates", "-vec-gate", "0.3", "-rerank-url", "http://127.0.0.1:9"], "memini-bench study rerank-tier"),
    (["study", "nope"], "study nope: no such study"),
    (["list", "planets"], "list planets: no such topic"),
])
def test_a_verb_refuses_flags_that_are_another_verbs(tmp_path, capsys, args, fragment):
    code, _, err = run_cli([*args, "-out", str(tmp_path)] if args[0] != "list" else args, capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def test_plan_prints_what_would_run_and_writes_nothing(tmp_path, capsys):
    code, out, _ = run_cli(["run", "-suite", "sample", "-embedder", "hash", "-out", str(tmp_path / "out"),
                            "--plan"], capsys)
    assert code == 0 and not (tmp_path / "out").exists()
    assert "systems (3): memini-hybrid, memini-vector, memini-keyword" in out
    assert "10 items, 8 questions scored" in out and "memini-sample-emb-hash.json" in out
    assert "texts to embed: 18\n" in out          # 10 documents and 8 queries; the hash embedder has no cache
    code, flat, _ = run_cli(["-suite", "sample", "-embedder", "hash", "-out", str(tmp_path / "out"), "-plan"], capsys)
    assert code == 0 and flat == out and not (tmp_path / "out").exists()


def test_list_topics(capsys):
    code, out, _ = run_cli(["list", "suites"], capsys)
    assert code == 0 and out.startswith("suites:\n") and "locomo" in out and "systems:" not in out
    code, everything, _ = run_cli(["-list"], capsys)
    assert code == 0 and "systems:" in everything and "suites:" in everything and "executors:" in everything


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


@pytest.mark.parametrize("flat, verb", [
    (["-rerank", "-rerank-cats", ""], ["study", "rerank", "-rerank-cats", ""]),
    (["-sweep", "fusion=0.3,-1"], ["sweep", "-sweep", "fusion=0.3,-1"]),
    (["-systems", "keyword,vector", "-significance", "-resamples", "200", "-k", "1,3"],
     ["run", "-systems", "keyword,vector", "-significance", "-resamples", "200", "-k", "1,3"]),
])
def test_a_flag_form_and_its_verb_write_files_of_one_name_and_identity(tmp_path, capsys, flat, verb):
    """The flat form's mapping table is the verbs: the same files, each with the same identity."""
    from memini_bench.results.identity import results_identity

    common = ["-suite", "sample", "-embedder", "hash"]
    a, b = tmp_path / "flat", tmp_path / "verb"
    assert run_cli([*common, *flat, "-out", str(a)], capsys)[0] == 0
    assert run_cli([*verb, *common, "-out", str(b)], capsys)[0] == 0
    names = sorted(str(p.relative_to(a)) for p in a.rglob("*.json"))
    assert names and names == sorted(str(p.relative_to(b)) for p in b.rglob("*.json"))
    for name in names:
        assert results_identity(a / name) == results_identity(b / name), name


def test_study_lists_the_studies_and_runs_a_study_script(capsys):
    from memini_bench.cli.verbs import SCRIPTS
    from memini_bench.modes import STUDIES

    code, out, _ = run_cli(["study"], capsys)
    assert code == 0 and all(f"\n    {name} " in out for name in [*STUDIES, *SCRIPTS])
    code, out, _ = run_cli(["study", "contradiction", "--help"], capsys)
    assert code == 0 and "-locomo" in out
    code, out, _ = run_cli(["help", "study"], capsys)
    assert code == 0 and "entity-bridge" in out


def test_every_verb_has_a_row_in_the_flat_forms_table_and_every_mode_a_verb():
    from memini_bench.modes import all_verbs, mode_for
    from memini_bench.modes.routes import FLAT_ROUTES
    from memini_bench.modes.specs import SPECS

    assert {r.verb for r in FLAT_ROUTES} == set(all_verbs())
    assert FLAT_ROUTES[-1].verb == "run"                        # the last row takes everything else
    assert sorted(s.verb for s in SPECS) == sorted(all_verbs())  # one spec a verb, one verb a spec
    assert all(mode_for(v).spec.verb == v for v in all_verbs())
