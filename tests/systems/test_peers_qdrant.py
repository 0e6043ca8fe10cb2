"""The Qdrant adapters (qdrant, qdrant-bm25, qdrant-hybrid; local mode) on the known-answer fixture, offline."""

from __future__ import annotations

import math
import re

import pytest

pytest.importorskip("qdrant_client", reason="qdrant-client is not installed: pip install 'memini-bench[qdrant]'")

from peer_stores_fixture import (  # noqa: E402
    CAT_QUERY,
    GROUPS,
    QUERIES,
    STOPWORD_QUERY,
    TEXT_QUERY,
    cosine,
    exact_ranking,
    ids_of,
    ingested,
    members,
)

NAMES = ("qdrant", "qdrant-bm25", "qdrant-hybrid")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The three systems, built through the registry and ingested once, under the socket guard and a fake home."""
    with ingested(tmp_path_factory.mktemp("home"), NAMES) as env:
        yield env


def bm25(group: str, query: str, k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """Okapi BM25 by hand (the oracle): lower-cased alphanumeric words, no stemming, idf ln(1 + (N-df+.5)/(df+.5)),
    the statistics of the group's documents; a repeated query word counts once."""
    words = {gi.id: re.findall(r"[^\W_]+", gi.content.lower()) for gi in members(group)}
    avgdl = sum(map(len, words.values())) / len(words)
    scores = {}
    for item_id, doc in words.items():
        total = 0.0
        for term in set(re.findall(r"[^\W_]+", query.lower())):
            df = sum(term in d for d in words.values())
            tf = doc.count(term)
            if tf:
                idf = math.log(1 + (len(words) - df + 0.5) / (df + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        if total > 0:
            scores[item_id] = total
    return scores


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("group", GROUPS)
def test_dense_search_is_exact_cosine_inside_the_group(run, group, query):
    for k in range(1, len(members(group)) + 2):
        hits = run.systems["qdrant"].recall(group, query, k)
        assert ids_of(hits) == exact_ranking(group, query)[:k]
    assert all(abs(h.score - cosine(h.ids[0], query)) < 1e-5 for h in hits)


@pytest.mark.parametrize("query", [*QUERIES, "cat cats CAT lake", "Dublin"])
@pytest.mark.parametrize("group", GROUPS)
def test_bm25_matches_the_hand_computed_scores(run, group, query):
    expected = bm25(group, query)
    hits = run.systems["qdrant-bm25"].recall(group, query, 10)
    assert sorted(ids_of(hits)) == sorted(expected)
    assert all(abs(h.score - expected[h.ids[0]]) < 1e-4 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_bm25_does_not_stem_and_keeps_stop_words(run):
    bm25_system = run.systems["qdrant-bm25"]
    assert ids_of(bm25_system.recall("g1", TEXT_QUERY, 10)) == ["g1/run"]  # "cats" only: "cat", "running" unmatched
    assert set(ids_of(bm25_system.recall("g1", STOPWORD_QUERY, 10))) == {"g1/paint", "g1/cold"}  # "the", "and"


@pytest.mark.parametrize("query", QUERIES)
def test_hybrid_is_qdrant_rrf_of_its_two_prefetches(run, query):
    """Qdrant's RRF (k 2): score = sum over the prefetches of 1 / (rank0 + 2), each prefetch k deep."""
    k = 3
    expected: dict[str, float] = {}
    for leg in ("qdrant", "qdrant-bm25"):
        for rank0, item_id in enumerate(ids_of(run.systems[leg].recall("g1", query, k))):
            expected[item_id] = expected.get(item_id, 0.0) + 1.0 / (rank0 + 2)
    hits = run.systems["qdrant-hybrid"].recall("g1", query, k)
    assert sorted(round(h.score, 6) for h in hits) == sorted(round(s, 6) for s in expected.values())[-len(hits):]
    assert all(abs(expected[h.ids[0]] - h.score) < 1e-6 for h in hits) and len(hits) == min(k, len(expected))


@pytest.mark.parametrize("name", NAMES)
def test_no_hit_from_another_group(run, name):
    for group in GROUPS:
        own = {it.id for it in members(group)}
        for query in QUERIES:
            hits = run.systems[name].recall(group, query, 50)
            assert set(ids_of(hits)) <= own and len(hits) <= len(own)
    assert run.systems[name].recall("no-such-group", CAT_QUERY, 5) == []


def test_describe_records_library_version_and_settings(run):
    from importlib.metadata import version

    info = {name: s.describe() for name, s in run.systems.items()}
    assert {i["version"] for i in info.values()} == {version("qdrant-client")}
    assert info["qdrant"]["groups"] == "one collection per group" and info["qdrant"]["dense"] == "Distance.COSINE"
    assert info["qdrant-bm25"]["text_index"]["stemmer"] is None and info["qdrant-bm25"]["text_index"]["k1"] == 1.2
    assert info["qdrant-hybrid"]["fusion"].startswith("FusionQuery(RRF), k 2")


def test_offline_and_home_untouched(run):
    for system in run.systems.values():
        system.close()
        assert system.client is None
    assert run.guard.attempts == [] and run.home_entries() == []
