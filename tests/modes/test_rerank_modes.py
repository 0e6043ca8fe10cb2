"""The re-ranking modes end to end through the CLI: ``-rerank`` (hand-computed on a tiny dated LongMemEval file),
the rerank tier against loopback cross-encoder and LLM servers, the gate sweeps, memini's dispatch precedence,
and ``-temporal-boost`` on the hybrid system."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click
import numpy as np
import pytest
from cli_opts import cli_options
from loopback import ScriptedServer

from memini_bench.cli import main
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.hashing import HashEmbedder
from memini_bench.modes.gates import GateOptions, Probe, foreign_groups, sweep
from memini_bench.modes.ranking import RankTally
from memini_bench.retrieval.recency import STRATEGIES, rank
from memini_bench.retrieval.temporal import Anchor
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, MeminiBackend

NOW = datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
DAY = 86400.0


def _record(qid, qtype, question, sessions, gold):
    return {"question_id": qid, "question_type": qtype, "question": question, "answer": "x",
            "question_date": "2023/05/30 (Tue) 23:40", "answer_session_ids": gold,
            "haystack_session_ids": [s for s, _, _ in sessions], "haystack_dates": [d for _, d, _ in sessions],
            "haystack_sessions": [[{"role": "user", "content": text}] for _, _, text in sessions]}


@pytest.fixture()
def lme_file(tmp_path):
    """q1: an old and a new session both match; the new one (dated yesterday) is gold, the old one ranks first
    in both legs (it holds only query words, so it wins BM25 and the hash-vector cosine)."""
    records = [
        _record("q1", "knowledge-update", "where do I keep my spare keys yesterday", [
            ("old", "2023/03/31 (Fri) 23:40", "where do I keep my spare keys"),
            ("new", "2023/05/29 (Mon) 23:40", "where do I keep my spare keys these days after the move"),
            ("pizza", "2023/05/01 (Mon) 10:00", "I like pizza")], ["new"]),
        _record("q2", "temporal-reasoning", "which cafe did I visit 3 days ago", [
            ("cafe1", "2023/05/27 (Sat) 12:00", "I visited the blue cafe downtown"),
            ("gym", "2023/05/20 (Sat) 12:00", "went to the gym and then a cafe")], ["cafe1"]),
        _record("q3", "multi-session", "how many books did I read", [
            ("books", "2023/04/01 (Sat) 12:00", "I read four books this spring"),
            ("tv", "2023/04/02 (Sun) 12:00", "I watched a tv show")], ["books"]),
    ]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(records))
    return path


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def base_args(lme_file, tmp_path, *extra):
    return ["-suite", "longmemeval", "-data", str(lme_file), "-embedder", "hash", "-out", str(tmp_path / "out"),
            *extra]


# --- the strategy math, by hand -------------------------------------------------------------------------------

def test_strategies_hand_computed():
    """fused [1, .9, .5]; ages 30 d, 0 d, 1 d. recency0.25: .6 + .25 e^-30/7 = .6034 < .54 + .25 = .79 -> item 1
    first; recency0.05: .8007 > .77; temporal0.40 with anchor (1 d, tol 1): item 1 (delta 1) and item 2 (delta 0)
    get x1.4: 1.078 > .8007 > .4433 x 1.4 = .6206."""
    ids, fused = np.array([0, 1, 2]), np.array([1.0, 0.9, 0.5])
    dates = NOW.timestamp() - DAY * np.array([30.0, 0.0, 1.0])
    by_name = {s.name: s for s in STRATEGIES}

    def order(name, anchor=None):
        return rank(by_name[name], ids, fused, dates_s=dates, importance=np.zeros(3), now=NOW,
                    anchor=anchor).tolist()

    assert order("rrf") == [0, 1, 2]
    assert order("recency0.05") == [0, 1, 2]
    assert order("recency0.25") == [1, 0, 2]
    assert order("temporal0.40") == [0, 1, 2]                  # no anchor: the recency0.05 composite
    assert order("temporal0.40", Anchor(1, 1)) == [1, 0, 2]


def test_rank_tally_hand_computed():
    tally = RankTally(k=2)
    from memini_bench.core.dataset import Question

    for n, (cat, ranked) in enumerate([("a", ["g", "x"]), ("a", ["x", "y", "g"]), ("b", ["x", "g"]), ("", ["y"])]):
        tally.add("s", Question(f"q{n}", "query", ("g",), category=cat), ranked)
    rows = {r.category: r for r in tally.rows()}
    assert list(rows) == ["a", "all", "b"]
    assert (rows["a"].questions, rows["a"].recall_any_at_1, rows["a"].recall_any_at_k) == (2, 0.5, 0.5)
    assert rows["a"].mrr == pytest.approx((1 + 1 / 3) / 2)
    assert (rows["all"].questions, rows["all"].recall_any_at_k) == (4, 0.5)
    assert rows["all"].mrr == pytest.approx((1 + 1 / 3 + 1 / 2) / 4)


# --- -rerank --------------------------------------------------------------------------------------------------

def test_rerank_mode_hand_computed_and_json(lme_file, tmp_path, capsys):
    """q1: RRF gives old 2/5 and new 2/6 (rank 0 and 1 in both legs): rrf and recency0.05 keep old first;
    recency0.15: .75 x (5/6) + .15 e^(-1/7) = .755 > .75 + .15 e^(-60/7) = .75003; temporal0.40 reads
    "yesterday" and lifts new x1.4."""
    pq = tmp_path / "pq.jsonl"
    code, out, err = run_cli(base_args(lme_file, tmp_path, "-rerank", "-per-question", str(pq)), capsys)
    assert code == 0, err
    assert "## Recency-aware re-rank vs pure RRF (recall_any@1 / recall_any@5 / mrr)" in out
    rows = [json.loads(line) for line in pq.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2"]              # default cats: knowledge-update, temporal-reasoning
    assert rows[0]["ranks"] == {"rrf": 1, "recency0.05": 1, "recency0.15": 0, "recency0.25": 0, "temporal0.40": 0}
    assert rows[0]["anchor"] == [1, 1] and rows[1]["anchor"] == [3, 2]
    doc = json.loads((tmp_path / "out" / "longmemeval-rerank-emb-hash.json").read_text())
    assert doc["config"]["mode"] == "rerank" and doc["config"]["rerank_pool"] == 50
    got = {(r["category"], r["system"]): r for r in doc["results"]}
    assert [r["system"] for r in doc["results"][:5]] == [s.name for s in STRATEGIES]
    assert {c for c, _ in got} == {"all", "knowledge-update", "temporal-reasoning"}
    ku = got[("knowledge-update", "rrf")]
    assert (ku["questions"], ku["recall_any_at_1"], ku["mrr"]) == (1, 0.0, 0.5)
    assert got[("knowledge-update", "recency0.15")]["recall_any_at_1"] == 1.0
    assert "| knowledge-update | rrf | 1 | 0.0% | 100.0% | 50.0% |" in out
    assert "temporal anchors (regex): 2 of 2 questions" in out


def test_rerank_all_categories_and_extended_label(lme_file, tmp_path, capsys):
    code, out, _ = run_cli(base_args(lme_file, tmp_path, "-rerank", "-rerank-cats", "", "-temporal-extractor",
                                     "extended", "-no-write"), capsys)
    assert code == 0 and "| multi-session | temporal0.40-extended | 1 |" in out and "| all | rrf | 3 |" in out
    assert not (tmp_path / "out").exists()


def test_rerank_unknown_categories_is_one_line(lme_file, tmp_path, capsys):
    code, _, err = run_cli(base_args(lme_file, tmp_path, "-rerank", "-rerank-cats", "1,2"), capsys)
    errors = [line for line in err.splitlines() if "error" in line]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err
    assert "no question has these categories" in errors[0] and "knowledge-update" in errors[0]


# --- the rerank tier ------------------------------------------------------------------------------------------

def word_scorer(path, body):
    words = set(body["query"].lower().split())
    return 200, {"results": [{"index": i, "relevance_score": len(words & set(d.lower().split())) / (1 + len(d))}
                             for i, d in enumerate(body["documents"])]}


def test_rerank_tier_with_a_cross_encoder_server(lme_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMINI_RERANK_API_KEY", "rk")
    with ScriptedServer(word_scorer) as srv:
        code, out, err = run_cli(base_args(lme_file, tmp_path, "-rerank-url", srv.url, "-rerank-model", "bge",
                                           "-llm-rerank-pool", "2"), capsys)
        requests = srv.requests
    assert code == 0, err
    assert len(requests) == 3                                     # one call per question (every head has 2)
    assert all(body["model"] == "bge" and len(body["documents"]) == 2 and headers["Authorization"] == "Bearer rk"
               for _, body, headers in requests)
    assert "| all | baseline | 3 |" in out and "| all | cross-encoder | 3 |" in out
    assert "+ cross-encoder (added)" in out
    doc = json.loads((tmp_path / "out" / "longmemeval-rerank-tier-cross-encoder-emb-hash.json").read_text())
    got = {(r["category"], r["system"]): r for r in doc["results"]}
    # q1's head is [old, new]; the scorer prefers the short "old" too, so both miss R@1 there
    assert got[("knowledge-update", "baseline")]["recall_any_at_1"] == 0.0
    assert got[("knowledge-update", "cross-encoder")]["mrr"] == 0.5
    assert doc["config"]["llm_rerank_pool"] == 2 and set(doc["latency"]) == {"baseline", "rerank_added"}


def test_rerank_tier_with_an_llm(lme_file, tmp_path, capsys, monkeypatch):
    def reply(path, body):  # always puts candidate 2 first
        return 200, {"choices": [{"message": {"content": "2, 1"}}]}

    with ScriptedServer(reply) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url)
        monkeypatch.setenv("MEMINI_LLM_MODEL", "tiny")
        code, out, err = run_cli(base_args(lme_file, tmp_path, "-llm-rerank", "-no-write"),
                                 capsys)
        prompts = [body["messages"][1]["content"] for _, body, _ in srv.requests]
    assert code == 0, err
    assert len(prompts) == 3 and prompts[0].startswith("Question: where do I keep my spare keys yesterday\n")
    # q1: baseline [old, new, pizza] -> the LLM's "2, 1" puts new first
    assert "| knowledge-update | llm-rerank | 1 | 100.0% | 100.0% | 100.0% |" in out


@pytest.mark.parametrize("content", ["none", "I cannot rank these."])
def test_an_llm_that_names_no_candidate_is_noted(lme_file, tmp_path, capsys, monkeypatch, content):
    """A model that never ranks gives a row equal to the baseline; the run says so (stderr, table, results)."""
    def reply(path, body):
        return 200, {"choices": [{"message": {"content": content}}]}

    with ScriptedServer(reply) as srv:
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", srv.url)
        monkeypatch.setenv("MEMINI_LLM_MODEL", "tiny")
        code, out, err = run_cli(base_args(lme_file, tmp_path, "-llm-rerank"), capsys)
    assert code == 0, err
    assert "llm-rerank: 3 of 3 replies named no candidate number" in err
    assert "Note: llm-rerank: 3 of 3 replies named no candidate" in out
    [written] = (tmp_path / "out").glob("*.json")
    assert "3 of 3 replies" in json.loads(written.read_text())["config"]["notes_rerank"][0]


@pytest.mark.parametrize(("handler", "fragment"), [
    (lambda p, b: (200, {"results": []}), "sent no results"),
    (lambda p, b: (200, b"garbage"), "not JSON"),
    (lambda p, b: (401, {"error": "bad key"}), "HTTP 401"),
])
def test_bad_rerank_server_is_one_line_and_writes_nothing(lme_file, tmp_path, capsys, handler, fragment):
    with ScriptedServer(handler) as srv:
        code, _, err = run_cli(base_args(lme_file, tmp_path, "-rerank-url", srv.url), capsys)
    lines = err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("memini-bench: error: rerank server at") and fragment in lines[-1]
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_llm_without_endpoint_is_one_line(lme_file, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MEMINI_LLM_BASE_URL", raising=False)
    code, _, err = run_cli(base_args(lme_file, tmp_path, "-llm-rerank"), capsys)
    assert code == 2 and "MEMINI_LLM_BASE_URL is not set" in err and len(err.strip().splitlines()) == 1


def test_llm_api_anthropic_is_one_line_before_any_work(lme_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMINI_LLM_API", "anthropic")
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    code, out, err = run_cli(base_args(lme_file, tmp_path, "-llm-rerank"), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "only the OpenAI-compatible chat API" in err
    assert not out and not (tmp_path / "out").exists()


# --- gate sweeps ----------------------------------------------------------------------------------------------

def test_sweep_math_and_threshold_parsing():
    probes = [Probe(0.9, 0.2, True), Probe(0.5, 0.6, True), Probe(0.3, 0.1, False)]
    rows = sweep(probes, [0.0, 0.55])                           # rows in the given order (parse_thresholds sorts)
    assert [(r.threshold, r.pos_recall_any, r.neg_injection_rate) for r in rows] == [
        (0.0, 2 / 3, 1.0), (0.55, 1 / 3, 1 / 3)]
    assert cli_options(vec_gate="0.5, 0,0.5").mode(GateOptions).vec_gate == (0.0, 0.5)   # sorted, unique
    for bad in ("0.5, abc", "0.5,-1", "0.5,,1", "nan"):                 # one list policy: every bad entry is an error
        with pytest.raises(click.BadParameter):
            cli_options(vec_gate=bad)


def test_foreign_group_is_the_next_different_group():
    from memini_bench.core.dataset import Question

    qs = [Question(str(i), "q", (), group=g) for i, g in enumerate(["a", "a", "b", "c", "c"])]
    assert foreign_groups(qs, "vec-gate") == ["b", "b", "c", "a", "a"]


def test_vec_gate_mode(lme_file, tmp_path, capsys):
    code, out, err = run_cli(base_args(lme_file, tmp_path, "-vec-gate", "0,2,0.5"), capsys)
    assert code == 0, err
    assert "top vector-score distribution (1/(1+L2)) over 3 queries:" in out
    assert "| min_vec_score | pos R@K | neg inject % |" in out
    doc = json.loads((tmp_path / "out" / "longmemeval-vec-gate-emb-hash.json").read_text())
    rows = doc["results"]
    assert [r["threshold"] for r in rows] == [0.0, 0.5, 2.0]
    assert rows[0]["neg_injection_rate"] == 1.0 and rows[0]["pos_recall_any"] == 1.0  # every gold is in the top 5
    assert rows[2]["pos_recall_any"] == 0.0 and rows[2]["neg_injection_rate"] == 0.0  # 1/(1+L2) <= 1


def test_rerank_gate_mode(lme_file, tmp_path, capsys):
    with ScriptedServer(word_scorer) as srv:
        code, out, err = run_cli(base_args(lme_file, tmp_path, "-rerank-url", srv.url, "-rerank-gate", "0,0.2",
                                           "-rerank-gate-pool", "2"), capsys)
        n_requests = len(srv.requests)
    assert code == 0, err
    assert n_requests == 6                                         # positive and negative head per question
    assert "top rerank-score distribution over 3 queries (pool=2):" in out     # memini's header
    assert "| min_rerank_score | pos R@K | neg inject % |" in out
    doc = json.loads((tmp_path / "out" / "longmemeval-rerank-gate-emb-hash.json").read_text())
    assert doc["config"]["rerank_gate_pool"] == 2 and doc["results"][0]["neg_injection_rate"] == 1.0


@pytest.mark.parametrize(("extra", "fragment"), [
    (["-rerank-gate", "0.1"], "-rerank-gate needs a cross-encoder"),
    (["-rerank-gate", "0.1", "-llm-rerank"], "-llm-rerank: not used by the gate sweeps"),
    (["-vec-gate", "x,-2"], "'x' is not a number"),
    (["-vec-gate", "0.1,-2"], "below the allowed minimum"),
    (["-vec-gate", "0.1,,2"], "empty entry"),
])
def test_gate_input_errors(lme_file, tmp_path, capsys, extra, fragment):
    code, _, err = run_cli(base_args(lme_file, tmp_path, *extra), capsys)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_single_group_gate_is_one_line(lme_file, tmp_path, capsys):
    code, _, err = run_cli(base_args(lme_file, tmp_path, "-shared-haystack", "-vec-gate", "0"), capsys)
    assert code == 2 and "at least two groups" in err


# --- dispatch: -rerank, then the tier (unless -rerank-gate), then the gates; a flag the chosen mode ignores fails -

def test_dispatch_precedence_and_ignored_flags(lme_file, tmp_path, capsys):
    with ScriptedServer(word_scorer) as srv:
        code, out, err = run_cli(base_args(lme_file, tmp_path, "-rerank", "-rerank-url", srv.url, "-no-write"),
                                 capsys)
        assert code == 2 and "-rerank-url: not used by -rerank" in err and not out and not srv.requests
        _, out, _ = run_cli(base_args(lme_file, tmp_path, "-rerank-url", srv.url, "-rerank-gate", "0",
                                      "-no-write"), capsys)
        assert "cross-encoder rerank-gate sweep" in out
        code, _, err = run_cli(base_args(lme_file, tmp_path, "-rerank-url", srv.url, "-vec-gate", "0",
                                         "-no-write"), capsys)
        assert code == 2 and "-vec-gate: not used by the rerank tier" in err
        code, _, err = run_cli(base_args(lme_file, tmp_path, "-vec-gate", "0", "-rerank-gate", "0", "-no-write"),
                               capsys)
        assert code == 2 and "give one sweep per run" in err


# --- -temporal-boost on the hybrid system ----------------------------------------------------------------------

def test_hybrid_temporal_boost_reorders_by_the_named_time():
    items = [Item("old", "where do I keep my spare keys", "g", NOW.replace(month=3, day=1)),
             Item("new", "where do I keep my spare keys these days after the move", "g",
                  NOW.replace(day=29)),
             Item("pizza", "I like pizza", "g", None)]
    backend = MeminiBackend(TextEncoder(HashEmbedder(256)))
    backend.ingest(items)
    query = "where do I keep my spare keys yesterday"

    def top(boost, now=NOW, extractor="regex"):
        system = HybridSystem(backend, HybridConfig(temporal_boost=boost, temporal_extractor=extractor))
        return [h.ids[0] for h in system.recall("g", query, 3, now=now)]

    assert top(0.0) == ["old", "new", "pizza"]
    assert top(10.0) == ["new", "old", "pizza"]                   # "yesterday" -> the item dated May 29
    assert top(10.0, now=None) == ["old", "new", "pizza"]         # no now, no boost (memini)


def test_cli_passes_temporal_boost_to_the_hybrid(lme_file, tmp_path, capsys):
    code, _, err = run_cli(base_args(lme_file, tmp_path, "-temporal-boost", "0.4", "-temporal-extractor",
                                     "extended", "-systems", "hybrid"), capsys)
    assert code == 0, err
    out = tmp_path / "out" / "longmemeval-emb-hash-tboost0.4-tx-extended-sys-hybrid.json"
    config = json.loads(out.read_text())["config"]
    assert (config["temporal_boost"], config["temporal_extractor"]) == (0.4, "extended")
    code, _, err = run_cli(base_args(lme_file, tmp_path, "-temporal-boost", "-1"), capsys)
    assert code == 2 and "-temporal-boost" in err


# --- one hybrid from RunOptions, flag checks, the temporal hot path -------------------------------------------

def test_hybrid_for_applies_every_hybrid_setting():
    from memini_bench.modes.rerank_tier import hybrid_for

    opts = cli_options(fusion=-1.0, pool_factor=3, pool_floor=7, semantic_reserve=2, temporal_boost=0.4,
                       temporal_extractor="extended", reinforce=True, keyword_backend="fts5")
    hybrid = hybrid_for(opts, TextEncoder(HashEmbedder(32)))
    c = hybrid.config
    assert (c.fusion, c.pool_factor, c.pool_floor, c.semantic_reserve, c.temporal_boost,
            c.reinforce, hybrid.backend.keyword_backend) == (-1.0, 3, 7, 2, 0.4, True, "fts5")


@pytest.mark.parametrize("mode", [["-rerank-gate", "0"], []])
def test_gates_and_tier_build_the_hybrid_from_the_run_options(lme_file, tmp_path, capsys, monkeypatch, mode):
    """-vec-gate used to drop -reinforce and -semantic-reserve, and both gates -temporal-boost. Both modes build
    their hybrid through rerank_tier.hybrid_for (gates by ingested_hybrid)."""
    import memini_bench.modes.rerank_tier as tier

    built, real = [], tier.hybrid_for

    def spy(opts, encoder):
        built.append(real(opts, encoder))
        return built[-1]

    monkeypatch.setattr(tier, "hybrid_for", spy)
    with ScriptedServer(word_scorer) as srv:
        code, _, err = run_cli(base_args(lme_file, tmp_path, "-rerank-url", srv.url, *mode, "-reinforce",
                                         "-semantic-reserve", "1", "-temporal-boost", "0.4", "-no-write"), capsys)
    assert code == 0, err
    assert [(h.config.reinforce, h.config.semantic_reserve, h.config.temporal_boost) for h in built] == [
        (True, 1, 0.4)]


def test_ranked_with_an_explicit_pool_cuts_each_leg():
    items = [Item(f"i{n}", f"spare keys note {n} " + "word " * n, "g", NOW) for n in range(8)]
    backend = MeminiBackend(TextEncoder(HashEmbedder(64)))
    backend.ingest(items)
    hybrid = HybridSystem(backend)
    ids, _ = hybrid.ranked("g", "spare keys", 5, pool=2)
    old_way, _ = HybridSystem(backend, HybridConfig(pool_factor=1, pool_floor=1)).ranked("g", "spare keys", 2)
    assert ids.tolist() == old_way.tolist() and len(ids) <= 4
    assert len(hybrid.ranked("g", "spare keys", 5)[0]) == 8                 # default pool max(25, 50) holds all


@pytest.mark.parametrize("extra", [["-rerank-model", "bge"], ["-rerank-model", "bge", "-llm-rerank"],
                                   ["-rerank-model", "bge", "-rerank-gate", "0"],
                                   ["-rerank-model", "bge", "-vec-gate", "0"]])
def test_rerank_model_name_without_url_is_one_line(lme_file, tmp_path, capsys, extra):
    """It used to fall through to the normal comparison (or the LLM, or the vector gate) silently."""
    code, out, err = run_cli(base_args(lme_file, tmp_path, *extra), capsys)
    assert code == 2 and err.strip() == ("memini-bench: error: -rerank-model 'bge' needs -rerank-url, or "
                                         "local:PATH for a local cross-encoder")
    assert not out and not (tmp_path / "out").exists()


def test_temporal_step_extracts_the_anchor_before_reading_dates(monkeypatch):
    items = [Item("a", "walked the dog", "g", NOW.replace(day=29)), Item("b", "walked the cat", "g", None)]
    backend = MeminiBackend(TextEncoder(HashEmbedder(64)))
    backend.ingest(items)
    hybrid = HybridSystem(backend, HybridConfig(temporal_boost=0.4))
    hybrid.recall("g", "walked the dog yesterday", 2, now=NOW)             # builds the per-item arrays once

    def untouchable():
        raise AssertionError("dates read without an anchor")

    monkeypatch.setattr(backend, "item_times", untouchable)
    assert len(hybrid.recall("g", "what is my dog's name", 2, now=NOW)) == 2       # no date was read


def test_backend_item_times_are_unix_seconds_or_nan():
    backend = MeminiBackend(None)
    backend.ingest([Item("a", "x", "g", NOW), Item("b", "y", "g", None)])
    times = backend.item_times()
    assert times[0] == NOW.timestamp() and np.isnan(times[1]) and backend.item_times() is times
