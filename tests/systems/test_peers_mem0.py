"""The mem0 adapter on the known-answer fixture, offline: infer=False (semantic only, threshold 0), and infer=True
against a scripted OpenAI-compatible chat server on loopback (mem0's own extraction decides the memories)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

if importlib.util.find_spec("mem0") is None:  # not importorskip: importing mem0 here would write ~/.mem0
    pytest.skip("mem0ai is not installed: pip install 'memini-bench[mem0]'", allow_module_level=True)

from loopback import ScriptedServer  # noqa: E402
from peer_stores_fixture import (  # noqa: E402
    CAT_QUERY,
    GROUPS,
    ITEMS,
    PADDED_QUERY,
    QUERIES,
    VECTORS,
    cosine,
    exact_ranking,
    fixture_context,
    ids_of,
    members,
    offline,
    unit,
)

from memini_bench.core.registry import SYSTEMS  # noqa: E402

LLM_VARIABLES = ("MEMINI_LLM_BASE_URL", "MEMINI_LLM_MODEL", "MEMINI_LLM_API_KEY", "MEMINI_LLM_API")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with offline(tmp_path_factory.mktemp("home")) as env, pytest.MonkeyPatch.context() as patch:
        for name in LLM_VARIABLES:
            patch.delenv(name, raising=False)
        ctx, embedder = fixture_context()
        env.system = SYSTEMS.get("mem0")(ctx)
        env.system.ingest(ITEMS)
        env.embedder = embedder
        yield env
        env.system.close()


@pytest.mark.parametrize("query", [*QUERIES, PADDED_QUERY])
@pytest.mark.parametrize("group", GROUPS)
def test_ranks_by_cosine_inside_the_group_and_drops_negative_cosines(run, group, query):
    """mem0 semantic search at threshold 0: the exact order, every hit of cosine >= 0, score = cosine."""
    expected = [i for i in exact_ranking(group, query) if cosine(i, query) >= 0]
    for k in range(1, len(members(group)) + 2):
        hits = run.system.recall(group, query, k)
        assert ids_of(hits) == expected[:k]
        assert all(abs(h.score - cosine(h.ids[0], query)) < 1e-5 for h in hits)


def test_a_negative_cosine_is_never_returned(run):
    assert cosine("g1/talk", CAT_QUERY) < 0
    assert ids_of(run.system.recall("g1", CAT_QUERY, 10)) == ["g1/run", "g1/cold", "g1/paint"]


def test_only_the_runs_vectors_are_used(run):
    """mem0 asked the run's encoder only for the items and the questions as given (the padded question's own
    vector: its stripped text is not in the table, so asking for it would be a KeyError)."""
    assert "What did Melanie paint?" not in run.embedder.table
    assert ids_of(run.system.recall("g1", PADDED_QUERY, 3)) == exact_ranking("g1", PADDED_QUERY)[:3]


def test_no_hit_from_another_group(run):
    for group in GROUPS:
        own = {it.id for it in members(group)}
        for query in QUERIES:
            hits = run.system.recall(group, query, 50)
            assert set(ids_of(hits)) <= own
    assert run.system.recall("no-such-group", CAT_QUERY, 5) == []
    assert run.system.recall("g1", "   ", 5) == []


def test_describe_home_and_telemetry(run):
    from importlib.metadata import version

    import mem0.memory.main as mem0_main
    import mem0.memory.setup as mem0_setup

    from memini_bench.systems.peers import mem0 as adapter

    info = run.system.describe()
    assert info["version"] == version("mem0ai") and info["infer"] is False and info["threshold"] == 0.0
    assert info["memories"] == len(ITEMS) and info["dropped_other_group"] == 0
    assert sorted(h.ids for h in run.system.memories("g1")) == sorted((it.id,) for it in members("g1"))
    home = Path(mem0_setup.mem0_dir)  # the folder mem0 read at import: one of ours, not under HOME
    assert home.name.startswith("memini-bench-mem0-home-") and home.parent == Path(adapter.MEM0_HOME).parent
    assert mem0_main.MEM0_TELEMETRY is False
    assert run.system.memory.vector_store.keyword_search("cat", 5) is None  # the BM25 leg is off, not fetched


def test_offline_home_untouched_and_temp_folder_removed(run):
    folder = run.system.workdir()
    run.system.close()
    assert not folder.exists() and run.system.memory is None
    assert run.guard.attempts == [] and run.home_entries() == []


EXTRACTED = {  # what the scripted LLM extracts from an add() whose new messages contain the key
    "Caroline runs": ["Caroline leads a support group for cats", "Melanie paints sunrises"],
    "weather was cold": [],
    "Running cats": ["The cats of g2 run a support group"],
    "Dublin": ["A cat lives in Dublin."],
}
MEMORY_VECTORS = {"Caroline leads a support group for cats": unit(1.0, 0.1, 0.0, 0.0),
                  "Melanie paints sunrises": unit(0.2, 1.0, 0.0, 0.0),
                  "The cats of g2 run a support group": unit(1.0, 0.0, 0.0, 0.0)}


def chat_reply(path: str, body: object) -> tuple[int, object]:
    """An OpenAI chat completion whose content is mem0's extraction JSON for the add() in the prompt."""
    assert path == "/v1/chat/completions" and isinstance(body, dict)
    prompt = body["messages"][-1]["content"]
    new = prompt.split("## New Messages", 1)[1].split("## Observation Date", 1)[0]
    texts = next(v for key, v in EXTRACTED.items() if key in new)
    content = json.dumps({"memory": [{"text": t} for t in texts]})
    return 200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def test_infer_maps_extracted_memories_to_the_items_they_came_from(tmp_path, monkeypatch):
    with ScriptedServer(chat_reply) as server, offline(tmp_path / "home") as env:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                     "OPENROUTER_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("MEMINI_LLM_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("MEMINI_LLM_MODEL", "scripted")
        monkeypatch.setenv("MEMINI_LLM_API_KEY", "test-key")
        ctx, _ = fixture_context({**VECTORS, **MEMORY_VECTORS}, lenient=True)
        system = SYSTEMS.get("mem0")(ctx)
        assert system.name == "mem0-infer"
        system.ingest(ITEMS)
        g1 = system.recall("g1", CAT_QUERY, 5)
        g2 = system.recall("g2", CAT_QUERY, 5)
        dublin = system.recall("o'brien", CAT_QUERY, 5)
        info = system.describe()
        listed = system.memories("g1")
        system.close()
    # one extraction call per add(): g1 in two pairs, g2 in one, o'brien alone
    assert len(server.requests) == 4
    assert all(body["model"] == "scripted" and {k.lower(): v for k, v in headers.items()}["authorization"]
               == "Bearer test-key" for _, body, headers in server.requests)
    assert [(h.content, h.ids) for h in g1] == [
        ("Caroline leads a support group for cats", ("g1/run", "g1/paint")),
        ("Melanie paints sunrises", ("g1/run", "g1/paint"))]  # nothing was extracted from g1/cold, g1/talk
    assert [(h.content, h.ids) for h in g2] == [("The cats of g2 run a support group", ("g2/cats", "g2/sun"))]
    assert [h.ids for h in dublin] == [("obrien/cat",)]
    assert info["infer"] is True and info["memories"] == 4 and info["llm_model"] == "scripted"
    assert sorted((h.content, h.ids) for h in listed) == sorted((h.content, h.ids) for h in g1)
    assert env.guard.attempts == [] and env.home_entries() == []
