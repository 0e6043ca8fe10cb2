"""The keyword leg: BM25 exactly as SQLite FTS5 computes it, over one global index filtered to a group.

For a query with phrases q_1..q_m (the stems of its ASCII ``[a-z0-9]{2,}`` terms, repeats kept) and a document
d of D tokens, over a corpus of N documents with average length avgdl (all groups together):

    IDF_i  = ln((N - n_i + 0.5) / (n_i + 0.5)), replaced by 1e-6 when <= 0   (n_i = documents containing q_i)
    score  = sum_i IDF_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl)),   k1 = 1.2, b = 0.75

(FTS5's ``bm25()`` returns -score; we report +score, higher is better.) A document matches when it contains
at least one phrase. Ties are broken by corpus (dataset) order, which is FTS5's rowid order for our inserts.

Two backends share this interface: ``NumpyBM25`` (default, postings arrays per group) and ``FTS5BM25``
(``keyword_fts5``, the reference on Python's sqlite3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from memini_bench.text import query_stems, tokenize

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


def bm25_idf(n_docs: int, doc_freq: np.ndarray) -> np.ndarray:
    """FTS5's IDF with its floor: ``ln((N - n + 0.5) / (n + 0.5))``, 1e-6 where that is <= 0."""
    idf = np.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))
    return np.where(idf <= 0.0, IDF_FLOOR, idf)


def top_k(indices: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best (score descending), ties broken by ascending index; returns (indices, scores)."""
    if len(scores) > 4 * k:
        # Keep everything scoring at least the k-th best, so boundary ties are resolved by index below.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        indices, scores = indices[keep], scores[keep]
    order = np.lexsort((indices, -scores))[:k]
    return indices[order], scores[order]


class KeywordIndex(Protocol):
    """A BM25 index over all items of all groups; ``search`` ranks one group's items (global item indices)."""

    def search(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]: ...


class NumpyBM25:
    """In-process FTS5-exact BM25: a global vocabulary and IDF, and for each group a compact CSR postings table
    over the terms that group holds ``term -> (local docs, precomputed per-posting BM25 weight)``, so a query
    costs a few array operations and memory grows with the postings, not with groups x vocabulary."""

    def __init__(self, contents: Sequence[str], groups: Sequence[str]) -> None:
        vocab: dict[str, int] = {}
        doc_terms: list[np.ndarray] = []
        lengths = np.zeros(len(contents), dtype=np.float64)
        for d, text in enumerate(contents):
            tokens = tokenize(text)
            lengths[d] = len(tokens)
            doc_terms.append(np.fromiter((vocab.setdefault(t, len(vocab)) for t in tokens), dtype=np.int64,
                                         count=len(tokens)))
        self.vocab = vocab
        self.n_docs = len(contents)
        avgdl = lengths.sum() / self.n_docs if self.n_docs else 1.0
        n_terms = len(vocab)
        # Global (doc, term, tf) triples.
        rows, cols, tfs = [], [], []
        for d, terms in enumerate(doc_terms):
            if len(terms):
                uniq, counts = np.unique(terms, return_counts=True)
                rows.append(np.full(len(uniq), d, dtype=np.int64))
                cols.append(uniq)
                tfs.append(counts.astype(np.float64))
        doc = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        term = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        tf = np.concatenate(tfs) if tfs else np.zeros(0)
        self.doc_freq = np.bincount(term, minlength=n_terms).astype(np.float64)
        self.idf = bm25_idf(self.n_docs, self.doc_freq)
        norm = K1 * (1.0 - B + B * lengths[doc] / avgdl)
        weight = tf * (K1 + 1.0) / (tf + norm)
        self._groups = self._group_postings(groups, doc, term, weight)

    @staticmethod
    def _group_postings(groups: Sequence[str], doc: np.ndarray, term: np.ndarray, weight: np.ndarray) -> dict:
        """Per group: its members (global item indices, in item order), the sorted distinct terms it holds with
        pointers into its postings, and the postings (local doc number, weight) sorted by (term, doc).
        One global sort, so building costs O(P log P) for P postings whatever the number of groups."""
        group_names = list(dict.fromkeys(groups))
        group_id = {g: i for i, g in enumerate(group_names)}
        doc_group = np.fromiter((group_id[g] for g in groups), dtype=np.int64, count=len(groups))
        by_group = np.argsort(doc_group, kind="stable")
        doc_bounds = np.concatenate(([0], np.cumsum(np.bincount(doc_group, minlength=len(group_names)))))
        local = np.empty(len(groups), dtype=np.int64)
        local[by_group] = np.arange(len(groups)) - np.repeat(doc_bounds[:-1], np.diff(doc_bounds))
        posting_group = doc_group[doc]
        order = np.lexsort((doc, term, posting_group))
        term, local_doc, weight = term[order], local[doc[order]], weight[order]
        post_bounds = np.concatenate(([0], np.cumsum(np.bincount(posting_group, minlength=len(group_names)))))
        out = {}
        for g, name in enumerate(group_names):
            lo, hi = post_bounds[g], post_bounds[g + 1]
            terms, starts = np.unique(term[lo:hi], return_index=True)
            out[name] = (by_group[doc_bounds[g]:doc_bounds[g + 1]], terms, np.append(starts, hi - lo),
                         local_doc[lo:hi], weight[lo:hi])
        return out

    def search(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        empty = (np.zeros(0, np.int64), np.zeros(0))
        if group not in self._groups or k <= 0:
            return empty
        members, terms, ptr, post_doc, post_weight = self._groups[group]
        term_ids = np.array([self.vocab[s] for s in query_stems(query) if s in self.vocab], dtype=np.int64)
        pos = np.searchsorted(terms, term_ids)
        present = pos < len(terms)
        present[present] = terms[pos[present]] == term_ids[present]
        if not present.any():
            return empty
        scores = np.zeros(len(members))
        matched = np.zeros(len(members), dtype=bool)
        for t, p in zip(term_ids[present].tolist(), pos[present].tolist(), strict=True):
            lo, hi = ptr[p], ptr[p + 1]  # repeats kept: each phrase adds its own IDF * weight
            docs = post_doc[lo:hi]
            scores[docs] += self.idf[t] * post_weight[lo:hi]
            matched[docs] = True
        hits = np.flatnonzero(matched)
        local, best = top_k(hits, scores[hits], k)
        return members[local], best
