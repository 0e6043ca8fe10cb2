"""sqlite-vec adapters: hand-computed L2 on chosen vectors, and the hybrid against RRF over memini's own legs."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sqlite_vec", reason="needs the sqlite-vec extra: pip install 'memini-bench[sqlite-vec]'")
pytest.importorskip("pysqlite3", reason="needs the sqlite-vec extra: pip install 'memini-bench[sqlite-vec]'")

from peers_fixture import ids, run, table_context  # noqa: E402

from memini_bench.core.dataset import Item  # noqa: E402
from memini_bench.loaders import load  # noqa: E402
from memini_bench.retrieval.keyword_fts5 import FTS5BM25  # noqa: E402
from memini_bench.retrieval.vector import VectorIndex  # noqa: E402
from memini_bench.systems.config import pool_size  # noqa: E402
from memini_bench.systems.peers.sqlite_vec import make, make_hybrid, make_hybrid_pool  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_network")

TABLE = {"north": [1, 0, 0], "east": [0, 1, 0], "between": [0.6, 0.8, 0], "north again": [1, 0, 0],
         "up": [0, 0, 1], "where?": [0.9, 0.3, 0], "??": [0.9, 0.3, 0]}
ITEMS = [Item("a1", "north", "A"), Item("a2", "east", "A"), Item("a3", "between", "A"),
         Item("b1", "north again", "B"), Item("b2", "up", "B")]


def test_exact_l2_knn_inside_the_partition():
    (hits, other, missing) = run(make(table_context(TABLE)), ITEMS, [("A", "where?"), ("B", "where?"),
                                                                    ("C", "where?")], k=10)
    distances = {"a1": math.sqrt(0.1 ** 2 + 0.3 ** 2), "a3": math.sqrt(0.3 ** 2 + 0.5 ** 2),
                 "a2": math.sqrt(0.9 ** 2 + 0.7 ** 2)}
    assert ids(hits) == ["a1", "a3", "a2"]
    assert [h.score for h in hits] == pytest.approx([1 / (1 + distances[d]) for d in ids(hits)], rel=1e-6)
    assert ids(other) == ["b1", "b2"] and missing == []


def test_ties_keep_vec0s_order_descending_rowid():
    items = [*ITEMS, Item("a4", "north again", "A")]  # the same vector as a1
    (hits,) = run(make(table_context(TABLE)), items, [("A", "where?")], k=1)
    assert ids(hits) == ["a4"]  # memini-vector would keep a1 (item order); see the module docstring


def _two_groups():
    """The sample data set twice, as groups "" and "other", with random (tie-free) 16-d vectors: vec0's float32
    sums differ from numpy's in the last bits, so only vectors without near-ties give one exact order."""
    sample = load("sample")
    copies = tuple(Item("x-" + it.id, it.content, "other") for it in sample.items)
    queries = [(q.group, q.query) for q in sample.questions]
    rng = np.random.default_rng(7)
    texts = list(dict.fromkeys([it.content for it in sample.items] + [q for _, q in queries]))
    table = {t: rng.normal(size=16) for t in texts}
    return sample.items + copies, queries, table_context(table)


def test_sqlite_vec_equals_memini_vector_on_the_sample():
    items, queries, ctx = _two_groups()
    index = VectorIndex(ctx.encoder.documents([it.content for it in items]), [it.group for it in items])
    results = run(make(ctx), items, queries, k=5)
    for (group, query), hits in zip(queries, results, strict=True):
        want, scores = index.search(group, ctx.encoder.query(query), 5)
        assert ids(hits) == [items[i].id for i in want.tolist()]
        assert [h.score for h in hits] == pytest.approx(scores.tolist(), rel=1e-6)


@pytest.mark.parametrize("pooled", [False, True])
def test_hybrid_is_rrf_60_over_memini_keyword_and_vector_legs(pooled):
    """Each leg k deep (the post's recipe), or memini's pool deep (``sqlite-vec-hybrid-pool``)."""
    items, queries, ctx = _two_groups()
    contents, groups = [it.content for it in items], [it.group for it in items]
    vectors, keyword = VectorIndex(ctx.encoder.documents(contents), groups), FTS5BM25(contents, groups)
    k = 5
    depth = pool_size(k) if pooled else k
    system = make_hybrid_pool(ctx) if pooled else make_hybrid(ctx)
    results = run(system, items, [*queries, ("other", queries[0][1])], k=k)
    for (group, query), hits in zip([*queries, ("other", queries[0][1])], results, strict=True):
        combined: dict[int, float] = {}
        for leg in (keyword.search(group, query, depth)[0].tolist(),
                    vectors.search(group, ctx.encoder.query(query), depth)[0].tolist()):
            for rank, i in enumerate(leg, start=1):
                combined[i] = combined.get(i, 0.0) + 1.0 / (60 + rank)
        want = sorted(combined, key=lambda i: (-combined[i], i))[:k]
        assert ids(hits) == [items[i].id for i in want]
        assert [h.score for h in hits] == pytest.approx([combined[i] for i in want], rel=1e-9)
        assert {items[i].group for i in want} == {group}


@pytest.mark.parametrize("query", ["where?", "??"])  # no FTS match / no keyword term at all
def test_hybrid_with_an_empty_keyword_leg_ranks_by_the_vector_leg(query):
    (hits,) = run(make_hybrid(table_context(TABLE)), ITEMS, [("A", query)], k=2)
    assert ids(hits) == ["a1", "a3"]
    assert [h.score for h in hits] == pytest.approx([1 / 61, 1 / 62])


def test_database_lives_in_a_temp_folder_removed_on_close():
    system = make_hybrid(table_context(TABLE))
    system.ingest(ITEMS)
    folder = system.workdir()
    assert (folder / "memories.db").exists()
    info = system.describe()
    assert info["version"] and info["rrf_k"] == 60 and "partition key" in info["index"]
    system.close()
    assert not folder.exists()
