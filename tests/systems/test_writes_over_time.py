"""Writes over time on the real stores (core.contract: incremental ingest, update, forget): after a second ingest
the new item is found; after update(correction) the correction is found and the value it supersedes never comes
back; after forget(id) the id never comes back; a forget of an unknown id is a no-op; the other group is
untouched. Every system is built through the registry on memini's hash embedder, offline (socket guard, stand-in
home)."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime

import pytest
from peer_stores_fixture import offline
from peers_fixture import hash_context

from memini_bench.core.contract import SUPERSEDES, Forgettable, Updatable, appends
from memini_bench.core.dataset import Item

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _item(i: str, text: str, group: str = "g1", day: int = 1, supersedes: tuple[str, ...] = ()) -> Item:
    meta = ((SUPERSEDES, supersedes),) if supersedes else ()
    return Item(id=i, content=text, group=group, time=T0.replace(day=day), meta=meta)


FIRST = (_item("a", "Maya works at Acme Robotics as an engineer."), _item("b", "Maya likes green tea in the morning."),
         _item("c", "Omar works at Acme Robotics too.", "g2"))
LATER = _item("d", "Maya drives a blue Volvo estate.", day=2)
CORRECTION = _item("e", "Maya left the old job and now works at Globex.", day=3, supersedes=("a",))
QUERIES = ("Where does Maya work?", "What car does Maya drive?", "What does Maya drink?", "Where does Omar work?")

NEEDS = {"mem0": "mem0", "lancedb": "lancedb", "lancedb-fts": "lancedb", "lancedb-hybrid": "lancedb",
         "qdrant": "qdrant_client", "qdrant-bm25": "qdrant_client", "chroma": "chromadb",
         "sqlite-vec": "sqlite_vec", "sqlite-vec-hybrid": "sqlite_vec", "inspeximus": "inspeximus",
         "reference": "Stemmer"}
NAMES = ("hybrid", "keyword", "vector", "reference", *NEEDS)


def _ids(system, group: str, query: str) -> set[str]:
    return {i for h in system.recall(group, query, 10) for i in h.ids}


@pytest.mark.parametrize("name", NAMES)
def test_a_store_adds_corrects_and_forgets(name, tmp_path):
    module = NEEDS.get(name)
    if module and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    from memini_bench.core.registry import SYSTEMS

    with offline(tmp_path / "home"):
        system = SYSTEMS.get(name)(hash_context())
        try:
            assert appends(system) and isinstance(system, Updatable) and isinstance(system, Forgettable)
            system.ingest(FIRST)
            system.ingest((LATER, FIRST[0]))  # an id written before is not written twice
            system.prepare(list(QUERIES))
            seen = set().union(*(_ids(system, "g1", q) for q in QUERIES))
            assert seen == {"a", "b", "d"}
            system.update(CORRECTION)
            system.forget("b")
            system.forget("never-written")
            if hasattr(system, "consolidate"):
                system.consolidate(None)
            after = set().union(*(_ids(system, "g1", q) for q in QUERIES))
            assert after == {"d", "e"}
            assert _ids(system, "g2", QUERIES[3]) == {"c"}
        finally:
            if hasattr(system, "close"):
                system.close()


def test_a_store_that_does_not_delete_keeps_what_it_was_told_to_forget():
    """The floors have no forget: the contract's fallback is the harness's (counted), never the system's."""
    from memini_bench.systems.floors import RecentK

    floor = RecentK()
    assert appends(floor) and not isinstance(floor, Forgettable) and not isinstance(floor, Updatable)
    floor.ingest(FIRST)
    floor.ingest((LATER,))
    assert [h.ids[0] for h in floor.recall("g1", "anything", 10)] == ["d", "b", "a"]
