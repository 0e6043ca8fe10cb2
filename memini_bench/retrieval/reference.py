"""The reference hot path: memini's hybrid pieces written plainly, kept to check the fast path against.

Each piece is the straightforward transcription the fast implementations in ``keyword``, ``vector``, ``fusion``
and ``composite`` replaced; the fast ones must give the same ids AND the same float scores, bit for bit
(``tests/retrieval/test_fast_path.py`` compares every ranking and score of both on LoCoMo and a LongMemEval-S-shaped
file).
``MeminiBackend(..., reference=True)`` runs the three memini systems on these.

- ``ReferenceBM25``: per query, the terms' postings added one phrase at a time, ``scores[docs] += IDF_t * w``.
- ``ReferenceVectorIndex``: per query, the whole group's difference array, ``1 / (1 + sqrt(einsum(diff, diff)))``.
- ``fuse_legs``: the fused totals kept in a Python dict (first-seen order), then a stable sort.
- the composite always runs the full quality maths (``composite.qualities_from``); dedup keys are the regex
  ``composite.normalize_content`` of each candidate, computed on first touch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memini_bench.retrieval.fusion import DEFAULT_ALPHA, DEFAULT_RRF_K, Ranked, min_max
from memini_bench.retrieval.keyword import K1, B, bm25_idf, top_k
from memini_bench.text import query_stems, tokenize


class ReferenceBM25:
    """FTS5-exact BM25 (formula in ``retrieval.keyword``) with per-group CSR postings of unfolded weights."""

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


class ReferenceVectorIndex:
    """Exact top-k by float32 L2 over the whole group, scored ``1 / (1 + L2)``, ties by item order."""

    def __init__(self, vectors: np.ndarray, groups: Sequence[str]) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        self._groups = {g: (np.asarray(ix, dtype=np.int64), self.vectors[ix]) for g, ix in members.items()}

    def scores(self, group: str, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if group not in self._groups:
            return np.zeros(0, np.int64), np.zeros(0)
        ids, mat = self._groups[group]
        diff = mat - np.asarray(query, dtype=np.float32)
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return ids, 1.0 / (1.0 + dist.astype(np.float64))

    def search(self, group: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        ids, scores = self.scores(group, query)
        if k <= 0 or not len(ids):
            return ids[:0], scores[:0]
        pos, best = top_k(np.arange(len(ids)), scores, k)
        return ids[pos], best


def _accumulate(contributions: Sequence[tuple[np.ndarray, np.ndarray]]) -> Ranked:
    total: dict[int, float] = {}
    for ids, values in contributions:
        for i, v in zip(ids.tolist(), values.tolist(), strict=True):
            total[i] = total.get(i, 0.0) + v
    if not total:
        return np.zeros(0, np.int64), np.zeros(0)
    ids = np.fromiter(total.keys(), dtype=np.int64, count=len(total))
    scores = np.fromiter(total.values(), dtype=np.float64, count=len(total))
    order = np.argsort(-scores, kind="stable")
    return ids[order], scores[order]


def fuse_legs(vector: Ranked, keyword: Ranked, alpha: float = DEFAULT_ALPHA, rrf_k: float = DEFAULT_RRF_K) -> Ranked:
    """``fusion.fuse_legs`` through a Python dict."""
    if alpha < 0:
        return _accumulate([(ids, 1.0 / (rrf_k + np.arange(len(ids), dtype=np.float64)))
                            for ids, _ in (vector, keyword)])
    return _accumulate([(ids, w * min_max(scores)) for (ids, scores), w in ((vector, alpha), (keyword, 1.0 - alpha))])
