"""The Chroma adapter on the known-answer fixture, offline (and never with Chroma's downloading default embedder)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("chromadb", reason="chromadb is not installed: pip install 'memini-bench[chroma]'")

from peer_stores_fixture import (  # noqa: E402
    CAT_QUERY,
    GROUPS,
    ITEMS,
    QUERIES,
    VECTORS,
    exact_ranking,
    fixture_context,
    ids_of,
    members,
    offline,
    unit,
)

from memini_bench.core.dataset import Item  # noqa: E402
from memini_bench.core.registry import SYSTEMS  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with offline(tmp_path_factory.mktemp("home")) as env:
        ctx, embedder = fixture_context()
        env.system = SYSTEMS.get("chroma")(ctx)
        env.system.ingest(ITEMS)
        env.embedder = embedder
        yield env
        env.system.close()


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("group", GROUPS)
def test_search_is_exact_l2_inside_the_group(run, group, query):
    for k in range(1, len(members(group)) + 2):
        hits = run.system.recall(group, query, k)
        assert ids_of(hits) == exact_ranking(group, query)[:k]
    item = {it.id: it for it in ITEMS}
    for h in hits:  # score 1 / (1 + L2)
        distance = float(np.linalg.norm(VECTORS[item[h.ids[0]].content] - VECTORS[query]))
        assert abs(h.score - 1 / (1 + distance)) < 1e-5


def test_no_hit_from_another_group(run):
    for group in GROUPS:
        own = {it.id for it in members(group)}
        for query in QUERIES:
            hits = run.system.recall(group, query, 50)
            assert set(ids_of(hits)) <= own and len(hits) <= len(own)
    assert run.system.recall("no-such-group", CAT_QUERY, 5) == []


def test_no_embedding_function(run):
    """Chroma got every vector from the run's encoder (the table, a KeyError for any other text) and has no
    embedding function of its own (its default downloads a model)."""
    assert run.system.describe()["embedding_function"] is None
    assert all(c._embedding_function is None for c in run.system.collections.values())


@pytest.mark.filterwarnings("ignore:legacy embedding function config:DeprecationWarning")
def test_each_groups_ef_search_covers_the_group(tmp_path):
    """``ef_search = max(100, the group's size)`` per collection, read back from the collections Chroma made."""
    ctx, _ = fixture_context({f"t{i}": unit(np.cos(i), np.sin(i), 0.1, 0.0) for i in range(130)})
    system = SYSTEMS.get("chroma")(ctx)
    with offline(tmp_path / "home") as env:
        system.ingest([Item(f"a{i}", f"t{i}", group="a") for i in range(130)] + [Item("b0", "t0", group="b")])
        assert {g: c.configuration["hnsw"]["ef_search"] for g, c in system.collections.items()} == {"a": 130,
                                                                                                   "b": 100}
        assert system.describe()["ef_search_max"] == 130
        assert [h.ids for h in system.recall("b", "t5", 3)] == [("b0",)]
        system.close()
    assert env.guard.attempts == []


def test_offline_home_untouched_and_temp_folder_removed(run):
    folder = run.system.workdir()
    info = run.system.describe()
    assert info["library"] == "chromadb" and info["version"] and info["space"] == "l2"
    run.system.close()
    assert not folder.exists()
    assert run.guard.attempts == [] and run.home_entries() == []
