"""The claimant adapters (taosmd, engram-search, engrava, fluctlightdb) on the known-answer fixture, offline: ids
back, groups kept apart, nothing in the home folder, the temp folder removed, and the parts with an independent
oracle checked against it (taOSmd's boost formula, Engram's own document builder)."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from peer_stores_fixture import (
    CAT_QUERY,
    GROUPS,
    ITEMS,
    QUERIES,
    SUN_QUERY,
    cosine,
    fixture_context,
    ids_of,
    members,
    offline,
)

from memini_bench.core.registry import SYSTEMS
from memini_bench.errors import BenchError

LIBRARIES = {"taosmd": ("taosmd", "bm25s"), "taosmd-rrf": ("taosmd",), "taosmd-bm25-rrf": ("taosmd", "bm25s"),
             "taosmd-mem0": ("taosmd", "bm25s"), "engram-search": ("engram",), "engrava": ("engrava", "aiosqlite"),
             "fluctlightdb": ("fluctlightdb", "fluctlightdb_native")}


def _missing(name: str) -> str:
    absent = [p for p in LIBRARIES[name] if importlib.util.find_spec(p) is None]
    if "fluctlightdb_native" in absent:
        return ("fluctlightdb-native is not installed (its semantic recall needs the native wheel, built for "
                "manylinux_2_34 x86_64 / macOS): pip install 'memini-bench[fluctlightdb]'")
    return f"{', '.join(absent)} not installed: pip install 'memini-bench[{SYSTEMS.entry(name).extra}]'" \
        if absent else ""


def _param(name: str):
    reason = _missing(name)
    return pytest.param(name, marks=pytest.mark.skipif(bool(reason), reason=reason))


NAMES = [_param(n) for n in LIBRARIES]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Every installed claimant built on the fixture's vectors (lenient: Engram embeds documents of its own making)
    and ingested once, under the socket guard and an empty home folder."""
    with offline(tmp_path_factory.mktemp("home")) as env:
        ctx, _ = fixture_context(lenient=True)
        env.systems = {n: SYSTEMS.get(n)(ctx) for n in LIBRARIES if not _missing(n)}
        folders = {}
        try:
            for name, system in env.systems.items():
                system.ingest(ITEMS)
                system.prepare(list(QUERIES))
                folders[name] = getattr(system, "_workdir", None)
            yield env
        finally:
            for system in env.systems.values():
                system.close()
        assert not env.home_entries()
        assert all(f is None or not f.exists() for f in folders.values())
        assert not env.guard.attempts


@pytest.mark.parametrize("name", NAMES)
def test_ids_back_and_groups_kept_apart(env, name):
    system = env.systems[name]
    for group in GROUPS:
        own = [it.id for it in members(group)]
        for query in QUERIES:
            hits = system.recall(group, query, 50)
            got = ids_of(hits)
            assert set(got) <= set(own) and len(got) == len(set(got)), (name, group, query, got)
            assert ids_of(system.recall(group, query, 1)) == got[:1]
    assert len(system.recall("g1", CAT_QUERY, 2)) == 2
    assert system.recall("no-such-group", CAT_QUERY, 5) == []
    assert system.recall("g1", CAT_QUERY, 0) == []
    assert ids_of(system.recall("o'brien", CAT_QUERY, 5)) == ["obrien/cat"]
    info = system.describe()
    assert info["version"] and info["dropped_other_group"] == 0


def _boost_oracle(group: str, query: str) -> list[tuple[str, float]]:
    """taOSmd's boost fusion, from its documented rule: cosine + 0.3 x (share of the query's keywords found as
    substrings), capped at 1; keywords are words over 2 characters outside its stop list, stripped of ?.,!"""
    stop = {"the", "what", "how", "did", "does", "was", "were", "are", "is", "my", "your", "for", "and", "but", "not",
            "with", "this", "that", "from", "have", "has", "had", "been", "can", "will", "would", "when", "where",
            "which", "who", "whom", "many", "much", "long"}
    words = [w.lower().strip("?.,!") for w in query.split() if len(w) > 2 and w.lower() not in stop]
    scored = []
    for it in members(group):
        share = sum(w in it.content.lower() for w in words) / len(words)
        scored.append((it.id, min(1.0, cosine(it.id, query) + 0.3 * share)))
    return sorted(scored, key=lambda p: -p[1])


@pytest.mark.skipif(bool(_missing("taosmd")), reason=_missing("taosmd") or "-")
@pytest.mark.parametrize("query", [CAT_QUERY, SUN_QUERY])
def test_taosmd_boost_is_cosine_plus_keyword_share(env, query):
    hits = env.systems["taosmd"].recall("g1", query, 10)
    expected = _boost_oracle("g1", query)
    assert ids_of(hits) == [i for i, _ in expected]
    assert np.allclose([h.score for h in hits], [s for _, s in expected], atol=1e-4)  # taOSmd rounds to 4 places


@pytest.mark.skipif(bool(_missing("engram-search")), reason=_missing("engram-search") or "-")
def test_engram_documents_are_its_own_builder_and_every_item_comes_back(env):
    from engram.ingestion.parser import session_to_documents

    from memini_bench.systems.peers.engram import turns_of

    expected = sum(len(session_to_documents(turns_of(it.content), session_id="x", include_assistant=True))
                   for it in ITEMS)
    system = env.systems["engram-search"]
    assert system.describe()["documents"]["count"] == expected > len(ITEMS)  # topic docs ("Caroline", "Dublin")
    assert sorted(ids_of(system.recall("g1", CAT_QUERY, 10))) == sorted(it.id for it in members("g1"))


def test_engram_turns_follow_roles_when_the_text_has_them():
    pytest.importorskip("engram", reason="engram-search is not installed")
    from memini_bench.systems.peers.engram import turns_of

    assert turns_of("user: hi there\nmore of it\nassistant: hello\n") == [
        {"role": "user", "content": "hi there\nmore of it"}, {"role": "assistant", "content": "hello"}]
    assert turns_of("[1 May 2023]\nCaroline: hi\nMel: yo") == [
        {"role": "user", "content": "[1 May 2023]"}, {"role": "user", "content": "Caroline: hi"},
        {"role": "user", "content": "Mel: yo"}]


@pytest.mark.skipif(bool(_missing("fluctlightdb")), reason=_missing("fluctlightdb") or "-")
def test_fluctlightdb_maxsim_refuses_an_embedder_without_token_vectors():
    ctx, _ = fixture_context(lenient=True)
    system = SYSTEMS.get("fluctlightdb-maxsim")(ctx)
    try:
        with pytest.raises(BenchError, match="needs a sentence-transformers embedder"):
            system.ingest(ITEMS)
    finally:
        system.close()


@pytest.mark.slow
@pytest.mark.skipif(bool(_missing("fluctlightdb")), reason=_missing("fluctlightdb") or "-")
def test_fluctlightdb_maxsim_on_minilm_token_vectors(tmp_path):
    """The published path on the real MiniLM: ids back, groups apart, an exact-word query finds its item first."""
    from cli_opts import cli_options

    with offline(tmp_path / "home"):
        ctx = cli_options(embedder="minilm", no_cache=True).context()
        system = SYSTEMS.get("fluctlightdb-maxsim")(ctx)
        try:
            system.ingest(ITEMS)
            system.prepare(list(QUERIES))
            for group in GROUPS:
                got = ids_of(system.recall(group, CAT_QUERY, 10))
                assert set(got) <= {it.id for it in members(group)} and got
            assert ids_of(system.recall("g1", "Melanie painted a sunrise", 1)) == ["g1/paint"]
        finally:
            system.close()
    assert os.environ.get("FLUCTLIGHT_CHORUS") == "1"


@pytest.mark.skipif(bool(_missing("fluctlightdb")), reason=_missing("fluctlightdb") or "-")
def test_fluctlightdb_drops_a_memory_the_engine_returns_twice():
    """The native chorus_recall once returned one memory twice on LoCoMo; the adapter keeps the first place."""
    ctx, _ = fixture_context(lenient=True)
    system = SYSTEMS.get("fluctlightdb")(ctx)
    try:
        system.ingest(ITEMS)

        class Repeating:  # the engine's answer as LoCoMo showed it: one memory id twice
            def chorus_recall(self, query, *, limit, semantic_vector):
                return [("0", 0.9), ("2", 0.8), ("0", 0.7), ("1", 0.6)]

        system.brains["g1"] = Repeating()
        assert ids_of(system.recall("g1", CAT_QUERY, 3)) == ["g1/run", "g1/cold", "g1/paint"]
        assert system.describe()["repeats_dropped"] == 1
    finally:
        system.close()
