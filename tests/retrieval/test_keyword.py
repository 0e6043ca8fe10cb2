"""The keyword leg: the numpy backend against the SQLite FTS5 reference, and memini's published numbers."""

from __future__ import annotations

import numpy as np
import pytest

from memini_bench.core.dataset import Dataset
from memini_bench.evaluation.metrics import score
from memini_bench.evaluation.runner import run_system
from memini_bench.retrieval.keyword import NumpyBM25, bm25_idf, top_k
from memini_bench.retrieval.keyword_fts5 import FTS5BM25
from memini_bench.systems.memini import KeywordSystem, MeminiBackend

POOL = 50


def _agree(ds: Dataset) -> None:
    contents = [i.content for i in ds.items]
    groups = [i.group for i in ds.items]
    fast, ref = NumpyBM25(contents, groups), FTS5BM25(contents, groups)
    for q in ds.questions:
        ids_f, sc_f = fast.search(q.group, q.query, POOL)
        ids_r, sc_r = ref.search(q.group, q.query, POOL)
        assert ids_f.tolist() == ids_r.tolist(), q.id
        np.testing.assert_allclose(sc_f, sc_r, rtol=1e-9, atol=0, err_msg=q.id)


def test_numpy_matches_fts5_turn_level(locomo, kernel_path):
    _agree(locomo)


def test_numpy_matches_fts5_session_level(locomo_sessions, kernel_path):
    _agree(locomo_sessions)


def test_hand_computed_bm25(kernel_path):
    # Two groups, three docs; IDF and avgdl are global. Query "apple apple" repeats its phrase.
    contents = ["apple banana", "apple apple cherry", "banana"]
    index = NumpyBM25(contents, ["a", "a", "b"])
    ids, scores = index.search("a", "apple apple", 10)
    n, avgdl = 3, 6 / 3
    idf = np.log((n - 2 + 0.5) / (2 + 0.5))  # negative -> floored
    assert idf <= 0 and bm25_idf(3, np.array([2.0]))[0] == 1e-6
    w0 = 1 * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * 2 / avgdl))
    w1 = 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / avgdl))
    assert ids.tolist() == [1, 0]
    np.testing.assert_allclose(scores, [2 * 1e-6 * w1, 2 * 1e-6 * w0], rtol=1e-12)
    assert index.search("b", "apple", 10)[0].tolist() == []
    assert index.search("a", "a !", 10)[0].tolist() == []  # no ASCII term of length >= 2


def test_top_k_breaks_ties_by_index():
    ids, scores = top_k(np.arange(10), np.array([1, 3, 3, 0, 3, 2, 3, 3, 1, 3.0]), 4)
    assert ids.tolist() == [1, 2, 4, 6] and scores.tolist() == [3, 3, 3, 3]


@pytest.mark.parametrize("backend", ["numpy", "fts5"])
def test_published_keyword_numbers(locomo, locomo_sessions, backend):
    """memini's published keyword rows (anchors.md): turn 58.7/67.1/44.8, session 92.6/96.8/79.4."""
    for ds, expected in ((locomo, (58.7, 67.1, 44.8)), (locomo_sessions, (92.6, 96.8, 79.4))):
        result = run_system(KeywordSystem(MeminiBackend(None, backend)), ds, 10)
        s5, s10 = score(result, 5), score(result, 10)
        got = (round(s5["recall_any@{k}"] * 100, 1), round(s10["recall_any@{k}"] * 100, 1), round(s10["mrr"] * 100, 1))
        assert got == expected
