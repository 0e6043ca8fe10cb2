"""bm25s adapters against hand-computed Lucene BM25 (tokens listed by hand: bm25s stop words, Porter stems)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("bm25s", reason="needs the bm25s extra: pip install 'memini-bench[bm25s]'")
pytest.importorskip("Stemmer", reason="needs the bm25s extra: pip install 'memini-bench[bm25s]'")

from peers_fixture import ids, run  # noqa: E402

from memini_bench.core.dataset import Item  # noqa: E402
from memini_bench.systems.peers.bm25s import BM25sSystem  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_network")

ITEMS = [
    Item("a1", "The cat sat on the mat.", "A"),                  # cat sat mat
    Item("a2", "A dog chased the cat and the cats ran.", "A"),   # dog chase cat cat ran
    Item("a3", "Dogs are loyal.", "A"),                          # dog loyal
    Item("b1", "Cats sleep.", "B"),                              # cat sleep
    Item("b2", "The zebra sat.", "B"),                           # zebra sat
]
LENGTHS = {"a1": 3, "a2": 5, "a3": 2, "b1": 2, "b2": 2}
CAT_TF = {"a1": 1, "a2": 2, "b1": 1}


def lucene(tf: int, df: int, n: int, dl: int, avgdl: float, k1: float = 1.5, b: float = 0.75) -> float:
    """Lucene's BM25 term score: ln(1 + (N - df + .5)/(df + .5)) * tf / (tf + k1 (1 - b + b dl/avgdl))."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_per_group_index_uses_the_groups_own_statistics():
    (hits,) = run(BM25sSystem(scope="group"), ITEMS, [("A", "cats?")], k=5)
    avgdl = (3 + 5 + 2) / 3
    expected = {d: lucene(CAT_TF[d], 2, 3, LENGTHS[d], avgdl) for d in ("a1", "a2")}
    assert ids(hits) == ["a2", "a1"]
    assert [h.score for h in hits] == pytest.approx([expected["a2"], expected["a1"]], rel=1e-6)


def test_global_index_uses_statistics_over_every_group():
    (hits,) = run(BM25sSystem(scope="global"), ITEMS, [("A", "cat")], k=5)
    avgdl = sum(LENGTHS.values()) / 5
    expected = {d: lucene(CAT_TF[d], 3, 5, LENGTHS[d], avgdl) for d in ("a1", "a2")}
    assert ids(hits) == ["a2", "a1"]
    assert [h.score for h in hits] == pytest.approx([expected["a2"], expected["a1"]], rel=1e-6)


def test_the_weight_mask_trap_exists_and_the_guard_removes_it():
    import bm25s

    system = BM25sSystem(scope="global")
    system.ingest(ITEMS)
    retriever, _ = system._indexes[""]
    docs, scores = retriever.retrieve(system._tokenize(["zebra"]), k=4, weight_mask=system._masks["A"],
                                      show_progress=False)
    assert isinstance(retriever, bm25s.BM25)
    assert {ITEMS[d].group for d in docs[0]} == {"A", "B"} and not scores[0].any()  # k slots filled with score 0
    assert system.recall("A", "zebra", 4) == []
    assert ids(system.recall("A", "cat", 4)) == ["a2", "a1"]
    assert ids(system.recall("B", "zebra sat", 4)) == ["b2"]
    system.close()


@pytest.mark.parametrize("scope", ["group", "global"])
def test_no_hit_without_a_matching_term_and_never_another_group(scope):
    queries = [("A", "the of and"), ("A", "unicorn"), ("A", "sat"), ("B", "sat"), ("B", "dog"), ("C", "cat")]
    results = run(BM25sSystem(scope=scope), ITEMS, queries, k=10)
    assert [ids(h) for h in results] == [[], [], ["a1"], ["b2"], [], []]


def test_k_larger_than_the_group_and_describe():
    system = BM25sSystem()
    (hits,) = run(system, ITEMS, [("A", "dog cat loyal")], k=50)
    assert sorted(ids(hits)) == ["a1", "a2", "a3"]
    info = system.describe()
    assert info["version"] and info["scope"] == "group" and info["stemmer"] == "PyStemmer porter"
    assert (info["method"], info["k1"], info["b"]) == ("lucene", 1.5, 0.75)
    assert np.isfinite([h.score for h in hits]).all()
