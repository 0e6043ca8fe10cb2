"""The LanceDB adapters (lancedb, lancedb-fts, lancedb-hybrid) on the known-answer fixture, offline."""

from __future__ import annotations

import pytest

pytest.importorskip("lancedb", reason="LanceDB is not installed: pip install 'memini-bench[lancedb]'")

from peer_stores_fixture import (  # noqa: E402
    CAT_QUERY,
    GROUPS,
    QUERIES,
    STOPWORD_QUERY,
    SUN_QUERY,
    TEXT_QUERY,
    exact_ranking,
    ids_of,
    ingested,
    members,
)

NAMES = ("lancedb", "lancedb-fts", "lancedb-hybrid")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The three systems, built through the registry and ingested once, under the socket guard and a fake home."""
    with ingested(tmp_path_factory.mktemp("home"), NAMES) as env:
        yield env


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("group", GROUPS)
def test_vector_search_is_exact_inside_the_group(run, group, query):
    for k in range(1, len(members(group)) + 2):
        hits = run.systems["lancedb"].recall(group, query, k)
        assert ids_of(hits) == exact_ranking(group, query)[:k]
    assert all(0 < h.score <= 1 for h in hits)


def test_full_text_stems_and_drops_stop_words(run):
    fts = run.systems["lancedb-fts"]
    assert ids_of(fts.recall("g1", TEXT_QUERY, 10)) == ["g1/run", "g1/cold"]  # run+cat, then cat alone
    assert ids_of(fts.recall("g1", CAT_QUERY, 10)) == ["g1/run", "g1/cold"]
    assert ids_of(fts.recall("g1", SUN_QUERY, 10)) == ["g1/paint"]  # "painted" and "sunrise"
    assert fts.recall("g1", STOPWORD_QUERY, 10) == []  # every word is an English stop word
    assert fts.recall("g1", "   ", 10) == []


@pytest.mark.parametrize("query", QUERIES)
def test_hybrid_is_reciprocal_rank_fusion_of_its_two_legs(run, query):
    """RRFReranker: score = sum over the legs of 1 / (60 + rank), ranks from 1, each leg k deep."""
    k = 3
    expected: dict[str, float] = {}
    for leg in ("lancedb", "lancedb-fts"):
        for rank, item_id in enumerate(ids_of(run.systems[leg].recall("g1", query, k)), start=1):
            expected[item_id] = expected.get(item_id, 0.0) + 1.0 / (60 + rank)
    hits = run.systems["lancedb-hybrid"].recall("g1", query, k)
    best = sorted(expected.values(), reverse=True)[:k]
    assert [round(h.score, 6) for h in hits] == [round(s, 6) for s in best]
    assert all(abs(expected[h.ids[0]] - h.score) < 1e-6 for h in hits)


@pytest.mark.parametrize("name", NAMES)
def test_no_hit_from_another_group(run, name):
    for group in GROUPS:
        own = {it.id for it in members(group)}
        for query in QUERIES:
            hits = run.systems[name].recall(group, query, 50)
            assert set(ids_of(hits)) <= own and len(hits) <= len(own)
    assert run.systems[name].recall("no-such-group", CAT_QUERY, 5) == []
    assert ids_of(run.systems[name].recall("o'brien", CAT_QUERY, 5)) == ["obrien/cat"]  # a quote in the name


def test_describe_records_library_version_and_settings(run):
    import lancedb

    info = {name: s.describe() for name, s in run.systems.items()}
    assert {i["version"] for i in info.values()} == {lancedb.__version__}
    assert info["lancedb"]["vector_search"].startswith("flat")
    assert info["lancedb-fts"]["fts"]["stem"] is True and info["lancedb-fts"]["fts"]["remove_stop_words"] is True
    assert info["lancedb-hybrid"]["fusion"].startswith("RRFReranker(K=60)")
    assert all(i["dropped_other_group"] == 0 for i in info.values())


def test_offline_home_untouched_and_temp_folder_removed(run):
    folders = [s.workdir() for s in run.systems.values()]
    assert all(f.exists() for f in folders)
    for system in run.systems.values():
        system.close()
    assert not any(f.exists() for f in folders)
    assert run.guard.attempts == [] and run.home_entries() == []
