"""BM25 over any ``Analyzer`` (the reference system's keyword leg), with its variant stated as settings.

For query terms q_1..q_m (the analyzer's terms of the query, repeats kept: a repeated term counts again, as in
FTS5) and a document d of D terms (after stop words), over the statistics' N documents of average length avgdl:

    score(d) = sum_i IDF_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl))

    idf = "lucene":  IDF_i = ln(1 + (N - n_i + 0.5) / (n_i + 0.5))          (Lucene, Tantivy, bm25s; always > 0)
    idf = "fts5":    IDF_i = ln((N - n_i + 0.5) / (n_i + 0.5)), 1e-6 when <= 0  (SQLite FTS5, memini)

``stats = "global"`` takes N, n_i and avgdl over every item of every group (memini, FTS5, LanceDB with a
prefilter); ``"group"`` over the searched group's items alone (one index per group, as bm25s per group). A
document matches when it holds at least one query term (score > 0); ties are broken by item order.

Built once: the analyzer's terms of every item, a sparse (items x vocabulary) matrix of the per-posting weights
above (scipy), laid out per group as ``keyword.GroupPostings`` (IDF folded in), so a query is
``keyword.search_postings``: the compiled kernel of memini's keyword leg, else a ``bincount``, in query order.
With ``Analyzer("porter", "none")``, ``idf="fts5"``, global statistics, k1 1.2 and b 0.75 the scores are
``NumpyBM25``'s on queries of ASCII words (the test checks it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from memini_bench.errors import BenchError
from memini_bench.retrieval.analyzer import IDFS, STATS, Analyzer
from memini_bench.retrieval.keyword import IDF_FLOOR, SENTINEL, GroupPostings, search_postings


def idf_of(kind: str, n_docs: float, doc_freq: np.ndarray) -> np.ndarray:
    """The IDF of ``kind`` (see the module docstring) for document frequencies ``doc_freq`` among ``n_docs``."""
    ratio = (n_docs - doc_freq + 0.5) / (doc_freq + 0.5)
    if kind == "lucene":
        return np.log1p(ratio)
    idf = np.log(ratio)
    return np.where(idf <= 0.0, IDF_FLOOR, idf)


class AnalyzedBM25:
    """A BM25 index over all groups' items, searched one group at a time (global item indices)."""

    def __init__(self, contents: Sequence[str], groups: Sequence[str], analyzer: Analyzer, *, k1: float = 1.2,
                 b: float = 0.75, idf: str = "lucene", stats: str = "global") -> None:
        if idf not in IDFS:
            raise BenchError(f"-ref-bm25-idf {idf!r}: unknown; use one of {', '.join(IDFS)}")
        if stats not in STATS:
            raise BenchError(f"-ref-bm25-stats {stats!r}: unknown; use one of {', '.join(STATS)}")
        self.analyzer = analyzer
        self.vocab: dict[str, int] = {}
        rows, cols = [], []
        lengths = np.zeros(len(contents))
        for d, text in enumerate(contents):
            terms = analyzer.terms(text)
            lengths[d] = len(terms)
            ids = [self.vocab.setdefault(t, len(self.vocab)) for t in terms]
            rows.extend([d] * len(ids))
            cols.extend(ids)
        shape = (len(contents), max(len(self.vocab), 1))
        tf = sparse.csr_matrix((np.ones(len(rows)), (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
                               shape=shape)  # duplicates summed: term frequencies
        tf.sum_duplicates()
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        scopes = {g: np.asarray(ix, dtype=np.int64) for g, ix in members.items()}
        if stats == "global":
            every = np.arange(len(contents), dtype=np.int64)
            weights = self._weights(tf, lengths, every, k1, b, idf)
            self._groups = {g: _postings(ix, weights[ix]) for g, ix in scopes.items()}
        else:
            self._groups = {g: _postings(ix, self._weights(tf, lengths, ix, k1, b, idf)) for g, ix in scopes.items()}
        self._queries: dict[str, tuple[list[int], np.ndarray]] = {}

    @staticmethod
    def _weights(tf: sparse.csr_matrix, lengths: np.ndarray, rows: np.ndarray, k1: float, b: float,
                 idf: str) -> sparse.csr_matrix:
        """The BM25 weight of every posting of ``rows``, with the statistics of ``rows`` (global: every row)."""
        sub = tf[rows]
        n = len(rows)
        avgdl = lengths[rows].sum() / n if n and lengths[rows].sum() > 0 else 1.0
        doc_freq = np.bincount(sub.indices, minlength=tf.shape[1]).astype(np.float64)
        term_idf = idf_of(idf, float(n), doc_freq)
        sub = sub.tocoo()
        f = sub.data
        norm = k1 * (1.0 - b + b * lengths[rows][sub.row] / avgdl)
        data = term_idf[sub.col] * (f * (k1 + 1.0) / (f + norm))
        return sparse.csr_matrix((data, (sub.row, sub.col)), shape=(n, tf.shape[1]))

    def query_terms(self, query: str) -> tuple[list[int], np.ndarray]:
        """The query's known term ids in query order, repeats kept (each adds again), as a list and as int64;
        computed once per query text."""
        out = self._queries.get(query)
        if out is None:
            ids = [self.vocab[t] for t in self.analyzer.terms(query) if t in self.vocab]
            out = self._queries[query] = (ids, np.array(ids, dtype=np.int64))
        return out

    def search(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        g = self._groups.get(group)
        ids, term_ids = self.query_terms(query)
        if g is None or k <= 0 or not ids:
            return np.zeros(0, np.int64), np.zeros(0)
        return search_postings(g, ids, term_ids, k)


def _postings(members: np.ndarray, weights: sparse.csr_matrix) -> GroupPostings:
    """One group's weights (rows: its members in item order) as ``GroupPostings``: per term present, its rows
    (ascending) and weights side by side."""
    csc = weights.tocsc()
    csc.sort_indices()
    counts = np.diff(csc.indptr)
    terms = np.flatnonzero(counts > 0)
    spans = np.stack((np.append(csc.indptr[terms], csc.nnz), np.append(csc.indptr[terms + 1], csc.nnz)),
                     axis=1).astype(np.int64)  # the sentinel's span is empty
    postings = np.empty((csc.nnz, 2))
    postings[:, 0] = csc.indices
    postings[:, 1] = csc.data
    return GroupPostings(np.asarray(members, dtype=np.int64), np.append(terms, SENTINEL).astype(np.int32), spans,
                         postings)
