"""memini-hybrid-rewrite (memini's -rewrite) against a loopback chat server: the gate, the parsing, RRF over the
variants' recalls (checked against a hand computation over a plain hybrid), LLM calls only in prepare, -rewrite."""

from __future__ import annotations

import json

import pytest
from cli_opts import cli_options
from loopback import ScriptedServer, closed_port_url
from qa_server import ChatScript, rewrite_reply

from memini_bench.cli import main
from memini_bench.clients.llm import ChatClient
from memini_bench.core.contract import Hit
from memini_bench.errors import BenchError
from memini_bench.loaders import load
from memini_bench.systems.lineup import build_systems
from memini_bench.systems.memini import HybridSystem, MeminiBackend
from memini_bench.systems.rewrite import EXPAND_SYSTEM, RewriteSystem, fuse_hits, make, parse_variants, should_expand

ITEMS = [
    ("a1", "Alice moved to Lisbon for a design job."), ("a2", "Alice now lives in Porto after moving again."),
    ("a3", "The payments service is written in Go and deployed on Tuesdays."),
    ("a4", "Bob adopted a cat named Miso from the shelter."), ("a5", "Lisbon and Porto are both in Portugal."),
    ("a6", "The design team moved their offsite to Porto."),
]
QUERIES = ["Where did Alice move to?", "Which language is the payments service written in?", "Bob's cat name?",
           "cat name", "Where did Alice move to?"]


@pytest.fixture
def data(tmp_path):
    doc = {"name": "tiny", "items": [{"id": i, "content": c, "group": "g"} for i, c in ITEMS],
           "questions": [{"id": f"q{n}", "query": q, "group": "g", "gold": ["a2"]} for n, q in enumerate(QUERIES)]}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(("query", "expand"), [
    ("Where did Alice move to?", True), ("cat name", False), ("Bob's cat name?", False), ('find "x" now', False),
    ("123e4567-e89b-12d3-a456-426614174000", False), ("ERR_AUTH_FAILED IN PROD", False),
    ("WHERE IS THE DB", True), ("   ", False),
])
def test_memini_gate(query, expand):
    assert should_expand(query) is expand


def test_variants_parsing():
    reply = "1. alpha beta\n- gamma\n\n  * delta\nfourth"
    assert parse_variants("q", reply) == ["q", "alpha beta", "gamma", "delta"]
    assert parse_variants("q", "") == ["q"]
    assert parse_variants("q", "2.5 litres of water") == ["q", "litres of water"]  # memini strips leading digits


def test_rrf_over_hit_lists_by_hand():
    h = {n: Hit((n,), 0.0, n.lower()) for n in "ABCD"}
    fused = fuse_hits([[h["A"], h["B"], h["C"]], [h["B"], h["D"]], []], 3)
    assert [x.ids[0] for x in fused] == ["B", "A", "D"]  # B 1/6+1/5, A 1/5, D 1/6, C 1/7
    assert [x.score for x in fused] == pytest.approx([1 / 6 + 1 / 5, 1 / 5, 1 / 6])
    tied = fuse_hits([[h["A"], h["B"]], [h["B"], h["A"]]], 5)
    assert [x.ids[0] for x in tied] == ["A", "B"]  # equal scores: first seen first


def _hybrid(ds):
    backend = MeminiBackend(cli_options(embedder="hash").context().encoder)
    hybrid = HybridSystem(backend)
    hybrid.ingest(ds.items)
    return hybrid


def test_prepare_expands_once_per_query_and_recall_fuses_the_variants(data, monkeypatch):
    ds = load("file", str(data))
    with ScriptedServer(ChatScript()) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        (system,) = build_systems(["memini-hybrid-rewrite"], cli_options(embedder="hash").context())
        system.ingest(ds.items)
        system.prepare(QUERIES)
        bodies = [b for _, b, _ in srv.requests]
        got = {q: system.recall("g", q, 3) for q in QUERIES}
        assert len(srv.requests) == len(bodies)  # recall makes no LLM call
    expandable = ["Where did Alice move to?", "Which language is the payments service written in?"]
    assert sorted(b["messages"][1]["content"] for b in bodies) == sorted("Question: " + q for q in expandable)
    assert all(b["messages"][0]["content"] == EXPAND_SYSTEM and b["temperature"] == 0.0 for b in bodies)
    plain = _hybrid(ds)
    for q in QUERIES:
        if q not in expandable:
            assert got[q] == plain.recall("g", q, 3)
            continue
        variants = parse_variants(q, rewrite_reply("Question: " + q))
        assert len(variants) == 4
        score: dict[tuple, float] = {}
        for v in variants:
            for rank, hit in enumerate(plain.recall("g", v, 3)):
                score[hit.ids] = score.get(hit.ids, 0.0) + 1 / (5 + rank)
        expected = sorted(score, key=lambda ids: -score[ids])[:3]  # sorted() is stable: first seen wins ties
        assert [h.ids for h in got[q]] == expected
        assert [h.score for h in got[q]] == pytest.approx([score[i] for i in expected])
    info = system.describe()
    assert info["expanded"] == 2 and info["rewrite_failures"] == 0 and info["queries"] == 4
    assert info["rewrites"]["Where did Alice move to?"] == parse_variants(
        "Where did Alice move to?", rewrite_reply("Question: Where did Alice move to?"))
    assert info["fusion"] == 0.5 and info["rewrite_model"] == "gpt-4o-mini"


def test_a_failed_call_falls_back_and_a_dead_endpoint_is_an_error(data):
    ds = load("file", str(data))
    with ScriptedServer(ChatScript(fail=frozenset({1}))) as srv:
        system = RewriteSystem(_hybrid(ds), ChatClient(srv.url, retries=0).complete, url=srv.url)
        system.prepare(QUERIES)
    failed = list(system.failures)
    assert len(failed) == 1 and "HTTP 500" in system.failures[failed[0]]
    assert system.variants[failed[0]] == [failed[0]] and system.describe()["expanded"] == 1
    assert system.recall("g", failed[0], 3) == _hybrid(ds).recall("g", failed[0], 3)
    dead = RewriteSystem(_hybrid(ds), ChatClient(closed_port_url(), retries=0).complete, url="http://dead")
    with pytest.raises(BenchError, match=r"all 2 rewrite calls to http://dead failed \(last: .*unreachable") as exc:
        dead.prepare(QUERIES)
    assert "\n" not in str(exc.value)


def test_factory_needs_the_llm_endpoint(monkeypatch):
    monkeypatch.delenv("MEMINI_LLM_BASE_URL", raising=False)
    with pytest.raises(BenchError, match="MEMINI_LLM_BASE_URL is not set"):
        make(cli_options(embedder="hash").context())


def _cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_rewrite_flag_runs_the_rewrite_system_in_place_of_the_hybrid(data, tmp_path, capsys, monkeypatch):
    with ScriptedServer(ChatScript()) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url + "/v1")
        code, out, err = _cli(["-suite", "file", "-data", str(data), "-embedder", "hash", "-rewrite", "-out",
                               str(tmp_path)], capsys)
        assert code == 0, err
        doc = json.loads((tmp_path / "tiny-emb-hash-sys-hybrid-rewrite+vector+keyword.json").read_text())
        assert [s["name"] for s in doc["config"]["systems"]] == ["memini-hybrid-rewrite", "memini-vector",
                                                                 "memini-keyword"]
        assert doc["config"]["systems"][0]["expanded"] == 2 and "| memini-hybrid-rewrite |" in out
        code, out, err = _cli(["-suite", "file", "-data", str(data), "-embedder", "hash", "-rewrite", "-qa",
                               "-qa-k", "2", "-out", str(tmp_path)], capsys)
        assert code == 0, err
        assert "QA accuracy (LLM-judge) memini-hybrid-rewrite@k2" in out
    code, _, err = _cli(["-suite", "file", "-data", str(data), "-rewrite", "-systems", "keyword", "-out",
                         str(tmp_path)], capsys)
    assert code == 2 and "-rewrite: memini-hybrid is not among the systems run" in err
    code, _, err = _cli(["-suite", "file", "-data", str(data), "-rewrite", "-rerank", "-out", str(tmp_path)], capsys)
    assert code == 2 and "-rewrite: not used by -rerank" in err
