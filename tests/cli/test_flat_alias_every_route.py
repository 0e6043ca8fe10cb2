"""The flat Go-style form is a pure alias of the verbs: for every row of the routes table
(``modes.routes.FLAT_ROUTES``), the flat flags and the verb typed out build the same plan, byte for byte (``--plan``
prints the verb, the data set, the systems, the K list, the results identity's hash and every path the run would
write), and the run that follows writes files of the same names and identities (``test_cli``'s routes run three
of them end to end)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run_cli
from loopback import ScriptedServer

from memini_bench.modes.routes import FLAT_ROUTES

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
LOCOMO = SHARED / "locomo" / "locomo10.json"
VETO = SHARED / "vetobench"
SAMPLE = ["-suite", "sample", "-embedder", "hash"]


def _scorer(path, body):
    return 200, {"results": [{"index": i, "relevance_score": 1.0 / (1 + i)} for i, _ in enumerate(body["documents"])]}


def _score_inputs(tmp: Path, capsys) -> tuple[str, str]:
    """A TREC run and its qrels, written by a run of the sample suite (``-trec``)."""
    trec = tmp / "trec"
    code, _, err = run_cli([*SAMPLE, "-systems", "keyword", "-out", str(tmp / "inputs"), "-trec", str(trec)], capsys)
    assert code == 0, err
    return str(next(trec.glob("*.run"))), str(next(trec.glob("*.qrels")))


def _per_question(tmp: Path, capsys) -> str:
    pq = tmp / "pq.jsonl"
    code, _, err = run_cli([*SAMPLE, "-systems", "keyword,vector", "-out", str(tmp / "inputs"), "-per-question",
                                str(pq)], capsys)
    assert code == 0, err
    return str(pq)


def _cases(tmp: Path, capsys, url: str) -> dict[str, tuple[list[str], list[str]]]:
    """Per route (its verb and flags): the flat form's arguments and the verb's, each a complete command."""
    run, qrels = _score_inputs(tmp, capsys)
    pq = _per_question(tmp, capsys)
    out = ["-out", str(tmp / "out")]
    cases = {
        "-list": (["-list", "metrics"], ["list", "metrics"]),
        "-compare FILES": (["-compare", pq, *out], ["compare", "-compare", pq, *out]),
        "-run FILE": (["-run", run, "-qrels", qrels, *out], ["score", "-run", run, "-qrels", qrels, *out]),
        "-rerank": ([*SAMPLE, "-rerank", "-rerank-cats", "", *out],
                    ["study", "rerank", *SAMPLE, "-rerank-cats", "", *out]),
        "-rerank-gate": ([*SAMPLE, "-rerank-gate", "0,0.5", "-rerank-url", url, *out],
                         ["study", "gates", *SAMPLE, "-rerank-gate", "0,0.5", "-rerank-url", url, *out]),
        "-rerank-url, -rerank-model or -llm-rerank": ([*SAMPLE, "-rerank-url", url, *out],
                                                      ["study", "rerank-tier", *SAMPLE, "-rerank-url", url, *out]),
        "-vec-gate": ([*SAMPLE, "-vec-gate", "0,0.3", *out], ["study", "gates", *SAMPLE, "-vec-gate", "0,0.3", *out]),
        "-qa": ([*SAMPLE, "-systems", "keyword", "-qa", *out], ["qa", *SAMPLE, "-systems", "keyword", *out]),
        "-sweep SPEC": ([*SAMPLE, "-sweep", "fusion=0.5,-1", *out], ["sweep", *SAMPLE, "-grid", "fusion=0.5,-1", *out]),
        "none of the above": ([*SAMPLE, "-systems", "keyword,vector", *out],
                              ["run", *SAMPLE, "-systems", "keyword,vector", *out]),
    }
    if LOCOMO.is_file():
        locomo = ["-suite", "locomo", "-data", str(LOCOMO), "-embedder", "hash", *out]
        cases["-multihop"] = ([*locomo, "-multihop"], ["study", "multihop", *locomo])
        cases["-entity-bridge"] = ([*locomo, "-entity-bridge"], ["study", "entity-bridge", *locomo])
    if VETO.is_dir():
        veto = ["-data", str(VETO), "-embedder", "hash", "-veto-embedders", "hash", "-composite-embedder", "hash", *out]
        cases["-suite vetobench or -veto-summary"] = (["-suite", "vetobench", *veto], ["vetobench", *veto])
    return cases


def test_every_route_the_flat_form_and_its_verb_print_the_same_plan(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "http://127.0.0.1:9/v1")   # -qa's plan names the models, calls none
    monkeypatch.setenv("MEMINI_LLM_MODEL", "reader")
    monkeypatch.setenv("MEMINI_JUDGE_MODEL", "judge")
    with ScriptedServer(_scorer) as srv:
        cases = _cases(tmp_path, capsys, srv.url)
        missing = [r.flags for r in FLAT_ROUTES if r.flags not in cases]
        if missing and not (LOCOMO.is_file() and VETO.is_dir()):
            pytest.skip(f"../shared/data is absent here: the routes {missing} read its LoCoMo and VetoBench files")
        assert not missing                        # every row of the table has its pair
        for route in FLAT_ROUTES:
            flat, verb = cases[route.flags]
            a = run_cli([*flat, "--plan"], capsys)
            b = run_cli([*verb, "--plan"], capsys)
            assert a[0] == 0, (route.flags, a[2])
            assert (a[0], a[1]) == (b[0], b[1]), route.flags            # the same plan, byte for byte
            assert a[1].startswith(f"plan: memini-bench {route.verb}\n"), route.flags
        assert not srv.requests                   # a plan calls no server
    assert not (tmp_path / "out").exists()       # and writes nothing


def test_the_plan_names_what_the_identity_covers(tmp_path, capsys):
    """The identity hash a plan prints changes with a setting that changes the numbers, and only then."""
    out = ["-out", str(tmp_path / "out"), "--plan"]
    base = run_cli([*SAMPLE, "-systems", "keyword", *out], capsys)[1]
    same = run_cli(["run", *SAMPLE, "-systems", "keyword", *out], capsys)[1]
    other = run_cli([*SAMPLE, "-systems", "keyword", "-k", "3", *out], capsys)[1]

    def ident(text: str) -> str:
        return next(line for line in text.splitlines() if "results identity" in line)

    assert ident(base) == ident(same) != ident(other)
    assert base == same                           # the flat form and the verb: one plan
