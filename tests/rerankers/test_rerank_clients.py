"""The rerank clients against real HTTP servers on loopback: memini's /rerank shape, caps and batching, the LLM
prompt and reply parsing, and one clear error for every misbehaving server."""

from __future__ import annotations

import time

import pytest
from loopback import ScriptedServer, closed_port_url

from memini_bench.clients.llm import ChatClient
from memini_bench.clients.providers import openai_chat_from_env
from memini_bench.errors import BenchError
from memini_bench.rerankers import Candidate, build_reranker, reorder_by_id
from memini_bench.rerankers.crossencoder import (
    HttpCrossEncoder,
    LocalCrossEncoder,
    doc_cap,
    order_by_scores,
    split_batches,
)
from memini_bench.rerankers.llm import SYSTEM, LLMReranker, apply_order, prompt, truncate_bytes

CANDS = [Candidate("a", "postgres is the database"), Candidate("b", "the cache ttl is ten minutes"),
         Candidate("c", "auth uses bearer tokens"), Candidate("d", "deploys go through helm")]


def keyword_scorer(path, body):
    """A fake cross-encoder: score = number of query words in the document (Cohere reply shape)."""
    words = set(body["query"].split())
    docs = body.get("documents") or body.get("texts")
    return 200, {"results": [{"index": i, "relevance_score": float(len(words & set(d.split())))}
                             for i, d in enumerate(docs)]}


# --- pure helpers ---------------------------------------------------------------------------------------------

def test_reorder_by_id_returned_first_then_the_rest_in_order():
    head = ["a", "b", "c", "d"]
    assert reorder_by_id(head, ["c", "a"]) == ["c", "a", "b", "d"]
    assert reorder_by_id(head, ["c", "zz", "c", "b"]) == ["c", "b", "a", "d"]   # unknown and repeats ignored
    assert reorder_by_id(head, []) == head


def test_order_by_scores_ties_by_id():
    assert order_by_scores({"b": 0.5, "a": 0.5, "c": 0.9}) == ["c", "a", "b"]


def test_doc_cap_and_split_batches_hand_computed():
    assert doc_cap(2048, 6000) == 2048 and doc_cap(2048, 1000) == 1000 and doc_cap(0, 500) == 500
    assert doc_cap(300, 0) == 300 and doc_cap(0, 0) == 0
    # budget = 100 - len("qq") - (38 + len("m")) = 59: docs of 30, 29, 1, 40, 20 chars
    docs = ["x" * 30, "x" * 29, "x", "x" * 40, "x" * 20]
    query, spans = split_batches(docs, "qq", "m", 100)
    assert query == "qq" and [list(s) for s in spans] == [[0, 1], [2, 3], [4]]
    assert split_batches(docs, "qq", "m", 0)[1] == [range(5)]
    # the query alone overflows: it is cut to 100 - 39 = 61 characters, leaving no budget -> one batch
    query, spans = split_batches(docs, "q" * 500, "m", 100)
    assert query == "q" * 61 and spans == [range(5)]
    # a document bigger than the budget still goes out, alone
    assert [list(s) for s in split_batches(["x" * 80, "x" * 80], "", "", 100)[1]] == [[0], [1]]


def test_truncate_bytes_on_a_character_boundary():
    assert truncate_bytes("short") == "short"
    assert truncate_bytes("a" * 300) == "a" * 300
    assert truncate_bytes("a" * 301) == "a" * 300 + "…"
    cut = truncate_bytes("a" * 299 + "é" + "z")          # é is 2 bytes and straddles byte 300
    assert cut == "a" * 299 + "…"


def test_apply_order_parses_numbers():
    assert apply_order("3, 1", CANDS) == ["c", "a", "b", "d"]
    assert apply_order("[2] then 2 then 9 and 0; 4", CANDS) == ["b", "d", "a", "c"]  # repeats, out of range out
    assert apply_order("none", CANDS) == ["a", "b", "c", "d"]


def test_prompt_shape():
    text = prompt("what db?", [Candidate("a", "postgres"), Candidate("b", "x" * 400)])
    assert text == ("Question: what db?\n\nCandidates:\n[1] postgres\n[2] " + "x" * 300 + "…\n\n"
                    "Most relevant candidate numbers (comma-separated, most relevant first):")


# --- the HTTP cross-encoder -----------------------------------------------------------------------------------

def test_cross_encoder_orders_by_server_scores_and_sends_memini_shape():
    with ScriptedServer(keyword_scorer) as srv:
        ce = HttpCrossEncoder(srv.url + "/v1", "qwen3-reranker", api_key="sekret")
        assert ce.rerank("what is the cache ttl", CANDS) == ["b", "a", "c", "d"]   # 3 words, then 1, ties by id
        path, body, headers = srv.requests[0]
    assert path == "/v1/rerank"
    assert body == {"model": "qwen3-reranker", "query": "what is the cache ttl",
                    "documents": [c.content for c in CANDS]}
    assert headers["Authorization"] == "Bearer sekret"


def test_cross_encoder_one_candidate_needs_no_call():
    with ScriptedServer(keyword_scorer) as srv:
        assert HttpCrossEncoder(srv.url).rerank("q", CANDS[:1]) == ["a"]
        assert srv.requests == []


def test_cross_encoder_caps_and_batches():
    long = [Candidate(str(i), f"doc{i} " + "w" * 100) for i in range(6)]
    with ScriptedServer(keyword_scorer) as srv:
        ce = HttpCrossEncoder(srv.url, "m", max_doc_chars=50, max_batch_chars=150)
        scores = ce.scores("doc3 doc5", long)
        bodies = [body for _, body, _ in srv.requests]
    # each doc is cut to 50 chars; budget 150 - 9 - 39 = 102 -> two docs per request
    assert [len(b["documents"]) for b in bodies] == [2, 2, 2]
    for b in bodies:
        assert all(len(d) == 50 for d in b["documents"])
        assert len(b["query"]) + 38 + len("m") + sum(map(len, b["documents"])) <= 150
    assert scores == {"0": 0.0, "1": 0.0, "2": 0.0, "3": 1.0, "4": 0.0, "5": 1.0}   # indices mapped per batch
    assert order_by_scores(scores)[:2] == ["3", "5"]


def test_cross_encoder_missing_and_out_of_range_indices():
    def partial(path, body):
        return 200, {"results": [{"index": 2, "relevance_score": 0.9}, {"index": 7, "relevance_score": 5.0},
                                 {"index": 0, "relevance_score": 0.1}]}

    with ScriptedServer(partial) as srv:
        order = HttpCrossEncoder(srv.url).rerank("q", CANDS)
    assert order == ["c", "a"]                                     # omitted b, d dropped; index 7 ignored
    assert reorder_by_id([c.id for c in CANDS], order) == ["c", "a", "b", "d"]


def test_cross_encoder_tei_shape():
    def tei(path, body):
        assert set(body) == {"query", "texts"}
        return 200, [{"index": 1, "score": 0.8}, {"index": 0, "score": 0.2}]

    with ScriptedServer(tei) as srv:
        assert HttpCrossEncoder(srv.url, "ignored", api="tei").rerank("q", CANDS[:2]) == ["b", "a"]


@pytest.mark.parametrize(("handler", "message"), [
    (lambda p, b: (500, {"error": "boom"}), "HTTP 500"),
    (lambda p, b: (404, {"error": "no route"}), "answered HTTP 404"),
    (lambda p, b: (200, b"<html>oops"), "not JSON"),
    (lambda p, b: (200, {"results": []}), "sent no results"),
    (lambda p, b: (200, {"data": [1]}), "sent no results"),
    (lambda p, b: (200, {"results": [{"index": "0", "relevance_score": 1}]}), "malformed result"),
    (lambda p, b: (200, {"results": [{"index": 0}]}), "malformed result"),
    (lambda p, b: (200, {"results": [{"index": 0, "relevance_score": "high"}]}), "malformed result"),
    (lambda p, b: (time.sleep(1.0), (200, {}))[1], "no reply within 0.2 s"),
])
def test_misbehaving_rerank_server_is_one_clear_error(handler, message):
    with ScriptedServer(handler) as srv:
        ce = HttpCrossEncoder(srv.url, timeout=0.2, retries=0)
        with pytest.raises(BenchError, match=message) as exc:
            ce.rerank("q", CANDS)
    assert "\n" not in str(exc.value) and "rerank server at" in str(exc.value)


def test_retries_a_500_then_succeeds():
    calls = []

    def flaky(path, body):
        calls.append(1)
        return (503, {}) if len(calls) == 1 else keyword_scorer(path, body)

    with ScriptedServer(flaky) as srv:
        assert HttpCrossEncoder(srv.url, retries=1).rerank("cache", CANDS)[0] == "b"
    assert len(calls) == 2


def test_unreachable_rerank_server_names_the_url():
    url = closed_port_url()
    with pytest.raises(BenchError, match=f"{url}/rerank failed after 1 try in "):
        HttpCrossEncoder(url, retries=0).rerank("q", CANDS)


def test_build_reranker_choice_and_api_key(monkeypatch):
    monkeypatch.setenv("MEMINI_RERANK_API_KEY", "k1")
    ce = build_reranker(url="http://h:1/v1", model="m", llm=True)        # the URL wins, as in memini
    assert isinstance(ce, HttpCrossEncoder) and ce.api_key == "k1" and ce.url == "http://h:1/v1/rerank"
    assert isinstance(build_reranker(model="local:/x"), LocalCrossEncoder)
    monkeypatch.delenv("MEMINI_LLM_BASE_URL", raising=False)
    with pytest.raises(BenchError, match="MEMINI_LLM_BASE_URL"):
        build_reranker(llm=True)
    with pytest.raises(BenchError, match="-rerank-url"):
        build_reranker()


def test_local_cross_encoder_missing_path_is_one_line(tmp_path):
    with pytest.raises(BenchError, match="no such folder"):
        LocalCrossEncoder(str(tmp_path / "nope")).rerank("q", CANDS)


# --- the LLM reranker -----------------------------------------------------------------------------------------

def chat_reply(text):
    return lambda path, body: (200, {"choices": [{"message": {"role": "assistant", "content": text}}]})


def test_llm_reranker_prompt_and_order():
    with ScriptedServer(chat_reply("Most relevant: 3, 1")) as srv:
        rr = LLMReranker(ChatClient(srv.url + "/v1", model="qwen", api_key="k", retries=0))
        assert rr.rerank("who handles auth?", CANDS) == ["c", "a", "b", "d"]
        path, body, headers = srv.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "qwen" and headers["Authorization"] == "Bearer k"
    assert body["messages"] == [{"role": "system", "content": SYSTEM},
                                {"role": "user", "content": prompt("who handles auth?", CANDS)}]


def test_llm_reranker_one_candidate_needs_no_call():
    with ScriptedServer(chat_reply("1")) as srv:
        assert LLMReranker(ChatClient(srv.url)).rerank("q", CANDS[:1]) == ["a"]
        assert srv.requests == []


@pytest.mark.parametrize(("handler", "message"), [
    (lambda p, b: (500, {"error": "down"}), "HTTP 500"),
    (lambda p, b: (200, {"choices": []}), "no choices"),
    (lambda p, b: (200, b"not json"), "not JSON"),
    (lambda p, b: (time.sleep(1.0), (200, {}))[1], "no reply within 0.2 s"),
])
def test_misbehaving_llm_is_one_clear_error(handler, message):
    with ScriptedServer(handler) as srv:
        rr = LLMReranker(ChatClient(srv.url, timeout=0.2, retries=0))
        with pytest.raises(BenchError, match=message) as exc:
            rr.rerank("q", CANDS)
    assert "\n" not in str(exc.value)


# --- the Reranker protocol and the LLM API choice -------------------------------------------------------------

def test_every_reranker_has_load_and_only_the_local_one_does_work(tmp_path):
    """load() is part of the protocol (the tier calls it before timing); HTTP and LLM clients load nothing."""
    from memini_bench.rerankers import Reranker

    http, llm = HttpCrossEncoder("http://h:1"), LLMReranker(ChatClient("http://h:1"))
    local = LocalCrossEncoder(str(tmp_path / "nope"))
    assert all(isinstance(r, Reranker) for r in (http, llm, local))
    assert http.load() is None and llm.load() is None                  # no network touched
    with pytest.raises(BenchError, match="no such folder"):
        local.load()


def test_rerank_model_name_without_url_is_refused():
    with pytest.raises(BenchError, match="-rerank-model 'bge' needs -rerank-url, or local:PATH"):
        build_reranker(model="bge", llm=True)


@pytest.mark.parametrize("api", ["", "openai", "OpenAI"])
def test_llm_api_openai_or_unset_is_fine(monkeypatch, api):
    monkeypatch.setenv("MEMINI_LLM_API", api)
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "http://h:1/v1")
    assert openai_chat_from_env().url == "http://h:1/v1/chat/completions"


def test_llm_api_anthropic_is_one_clear_error(monkeypatch):
    """memini's MEMINI_LLM_API=anthropic used to be ignored (requests went out in the OpenAI shape)."""
    monkeypatch.setenv("MEMINI_LLM_API", "anthropic")
    monkeypatch.setenv("MEMINI_LLM_BASE_URL", "http://h:1/v1")
    with pytest.raises(BenchError, match="MEMINI_LLM_API='anthropic': only the OpenAI-compatible chat API") as exc:
        openai_chat_from_env()
    assert "\n" not in str(exc.value)
