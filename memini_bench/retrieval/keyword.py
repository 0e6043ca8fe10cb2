"""The keyword leg: BM25 exactly as SQLite FTS5 computes it, over one global index filtered to a group.

For a query with phrases q_1..q_m (the stems of its ASCII ``[a-z0-9]{2,}`` terms, repeats kept) and a document
d of D tokens, over a corpus of N documents with average length avgdl (all groups together):

    IDF_i  = ln((N - n_i + 0.5) / (n_i + 0.5)), replaced by 1e-6 when <= 0   (n_i = documents containing q_i)
    score  = sum_i IDF_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl)),   k1 = 1.2, b = 0.75

(FTS5's ``bm25()`` returns -score; we report +score, higher is better.) A document matches when it contains
at least one phrase. Ties are broken by corpus (dataset) order, which is FTS5's rowid order for our inserts.

Two backends share this interface: ``NumpyBM25`` (default, postings arrays per group) and ``FTS5BM25``
(``keyword_fts5``, the reference on Python's sqlite3); ``reference.ReferenceBM25`` is the plain numpy transcription
the fast ``NumpyBM25`` is checked against bit for bit. ``NumpyBM25`` answers a query in one call of the compiled
kernel (``kernels.KERNELS.bm25_top_k``) where it was built, else with numpy; both give the same ids and floats.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from types import ModuleType
from typing import Protocol

import numpy as np

from memini_bench.retrieval import kernels
from memini_bench.text import folded_stretch, folded_tokens, porter_stem, query_stems

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
PARTITION_OVER = 1024
TOKEN_BATCH = 1 << 19  # tokens per np.unique when the index is built
CHAR_BATCH = 1 << 23  # characters per call of the compiled count_terms
WEIGHT_CHUNK = 1 << 22  # postings per chunk when the weights are computed
SHARE_ABOVE = 2  # the "texts" layout when the groups' postings would be over twice the distinct texts'
GROUPS_MAX_POSTINGS = 1 << 26  # nor past this many postings in all (16 bytes each: about 1 GB), however shared
LAYOUTS = ("auto", "groups", "texts")
SPAN_TABLE_LIMIT = 1_000_000  # up to this many (group, term) pairs, terms are looked up in per-group dicts
SENTINEL = np.iinfo(np.int32).max  # above every term id
TINY = 5e-324  # the smallest positive float: ``score >= TINY`` is ``score > 0``


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


def top_k_ascending(indices: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``top_k`` for ``indices`` already ascending: a stable sort on ``-score`` then breaks ties by index."""
    n = len(scores)
    if n > PARTITION_OVER and n > 2 * k:  # a partition first pays only on long lists
        kth = np.partition(scores, n - k)[n - k]
        keep = np.flatnonzero(scores >= kth)  # every boundary tie stays, so the stable sort resolves it by index
        indices, scores = indices[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")[:k]
    return indices[order], scores[order]


def top_k_positive(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``top_k`` over the positions whose score is > 0 (ties by position), straight from a dense score array."""
    n = len(scores)
    floor = TINY
    if n > k:
        floor = max(float(np.partition(scores, n - k)[n - k]), TINY)  # boundary ties all stay
    keep = np.flatnonzero(scores >= floor)
    best = scores[keep]
    order = np.argsort(-best, kind="stable")[:k]
    return keep[order], best[order]


class KeywordIndex(Protocol):
    """A BM25 index over all items of all groups; ``search`` ranks one group's items (global item indices)."""

    def search(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True, slots=True)
class GroupPostings:
    """One group's share of the index: its members (global item indices, in item order), the sorted distinct term
    ids it holds (then a sentinel above every id, so a lookup never runs off the end), and per term ``terms[j]``
    the postings ``spans[j] = [start, end)``: rows of ``postings`` (float64) holding (local doc number, ascending;
    ``IDF_t * w``), side by side so that one slice per term fetches both."""

    members: np.ndarray
    terms: np.ndarray
    spans: np.ndarray
    postings: np.ndarray
    span_of: dict[int, tuple[int, int]] | None = None  # term id -> span, for small indexes (see SPAN_TABLE_LIMIT)


class _TermIds(dict):
    """folded token -> the term id of its Porter stem in ``vocab`` (new stems get the next id)."""

    def __init__(self, vocab: dict[str, int]) -> None:
        super().__init__()
        self.vocab = vocab

    def __missing__(self, token: str) -> int:
        value = self[token] = self.vocab.setdefault(porter_stem(token), len(self.vocab))
        return value


@dataclass(frozen=True, slots=True)
class _TextPostings:
    """Every distinct text's postings, text after text: text t holds ``terms[start[t]:start[t + 1]]`` (its distinct
    term ids) with their frequencies ``tf``; ``length[t]`` is its token count."""

    terms: np.ndarray
    tf: np.ndarray
    start: np.ndarray
    length: np.ndarray


class NumpyBM25:
    """In-process FTS5-exact BM25: a global vocabulary and IDF, and for each group a compact CSR postings table
    over the terms that group holds, so a query costs a few array operations and memory grows with the
    postings, not with groups x vocabulary.

    Built for speed and scale: each distinct text is tokenized once (each distinct folded token stemmed once per
    index, term frequencies counted over term ids), per-text term ids and frequencies are int32, the IDF is folded
    into each group's stored (doc, weight) pairs, and a query is one ``bincount`` over its terms' postings (in
    query order, so each document's sum adds the same terms in the same order as ``ReferenceBM25``) and a stable
    top-k (or the compiled kernel's one pass doing the same). ``prepare(queries)`` turns queries into term ids
    ahead of the timed recalls.

    ``layout``: ``groups`` is that per-group table; ``texts`` keeps each distinct text's postings once (ascending
    terms, IDF-folded weights) and a group as its members' text numbers, a query then summing, per member, the
    weight of each query term its text holds, in query order (the same floats: ``search_texts``). ``auto`` takes
    ``texts`` when the groups' tables would hold over ``SHARE_ABOVE`` times the distinct texts' postings (haystacks
    sharing their sessions, as LongMemEval's do) or over ``GROUPS_MAX_POSTINGS`` postings in all (so the index's
    memory follows the distinct texts on a corpus the size of LongMemEval-M, however little its haystacks share),
    else ``groups``."""

    def __init__(self, contents: Sequence[str], groups: Sequence[str], *, layout: str = "auto") -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout {layout!r}: use one of {', '.join(LAYOUTS)}")
        kernels.note_slow_path()
        self.vocab: dict[str, int] = {}
        self._query_ids: dict[str, tuple[list[int], np.ndarray]] = {}
        texts, item_text = self._distinct_texts(contents)
        self.n_docs = len(contents)
        sizes = np.diff(texts.start)
        lengths = texts.length[item_text].astype(np.float64)
        avgdl = lengths.sum() / self.n_docs if self.n_docs else 1.0
        del lengths
        copies = np.bincount(item_text, minlength=len(sizes)).astype(np.float64)
        self.doc_freq = _doc_freq(texts, sizes, copies, len(self.vocab))
        self.idf = bm25_idf(self.n_docs, self.doc_freq)
        weights = _text_weights(texts, sizes, self.idf, avgdl)
        slots = int(np.dot(sizes, copies.astype(np.int64))) if len(sizes) else 0
        shared = slots > SHARE_ABOVE * len(texts.terms) or slots > GROUPS_MAX_POSTINGS
        self.layout = layout if layout != "auto" else "texts" if shared else "groups"
        self._texts: _SharedTexts | None = None
        self._groups: dict[str, GroupPostings | GroupTexts] = {}
        if self.layout == "texts":
            self._texts = _SharedTexts(texts.start, texts.terms, weights)
            self._groups.update(self._group_texts(groups, item_text))
            return
        postings = self._group_postings(groups, texts, weights, item_text)
        if kernels.KERNELS is None and sum(len(g.terms) for g in postings.values()) <= SPAN_TABLE_LIMIT:
            for name, g in postings.items():
                table = dict(zip(g.terms.tolist(), map(tuple, g.spans.tolist()), strict=True))
                postings[name] = dataclasses.replace(g, span_of=table)
        self._groups.update(postings)

    def _distinct_texts(self, contents: Sequence[str]) -> tuple[_TextPostings, np.ndarray]:
        """Each distinct text's postings (first-seen order) and, per item, the number of its text.

        Distinct texts are taken in batches of about ``TOKEN_BATCH`` tokens: every token becomes its term id (a
        dict from folded token to the id of its Porter stem, each distinct token stemmed once), and one
        ``np.unique`` over ``text * V + term`` gives each text's distinct terms (ascending) with their counts, so
        tokens sharing a stem add up. The compiled kernel (``count_terms``), where built, does the same per batch
        of about ``CHAR_BATCH`` characters with one term lookup per distinct token of the batch: the same
        vocabulary, term ids and counts."""
        number: dict[str, int] = {}
        item_text = np.empty(len(contents), dtype=np.int64)
        distinct: list[str] = []
        for d, text in enumerate(contents):
            t = number.get(text)
            if t is None:
                t = number[text] = len(distinct)
                distinct.append(text)
            item_text[d] = t
        term_of = _TermIds(self.vocab)
        parts = [self._count_batch([], term_of)]  # an empty batch: the dtypes when there is no text at all
        compiled = kernels.KERNELS
        if compiled is not None:
            parts += [_compiled_batch(compiled, batch, term_of) for batch in _char_batches(distinct, CHAR_BATCH)]
        else:
            batch: list[list[str]] = []
            budget = 0
            for text in distinct:
                tokens = folded_tokens(text)
                batch.append(tokens)
                budget += len(tokens) + 1
                if budget >= TOKEN_BATCH:
                    parts.append(self._count_batch(batch, term_of))
                    batch, budget = [], 0
            parts.append(self._count_batch(batch, term_of))
        term_ids, counts, pairs, length = (np.concatenate(column) for column in zip(*parts, strict=True))
        start = np.zeros(len(distinct) + 1, dtype=np.int64)
        np.cumsum(pairs, out=start[1:])
        return _TextPostings(term_ids, counts, start, length), item_text

    @staticmethod
    def _count_batch(batch: list[list[str]], term_of: _TermIds) -> tuple[np.ndarray, ...]:
        """One batch of texts' tokens as (term ids, their counts) text after text, terms ascending within a
        text, with each text's number of distinct terms and of tokens."""
        sizes = np.fromiter(map(len, batch), dtype=np.int64, count=len(batch))
        ids = np.fromiter(map(term_of.__getitem__, chain.from_iterable(batch)), dtype=np.int64,
                          count=int(sizes.sum()))
        width = max(len(term_of.vocab), 1)
        keys, counts = np.unique(np.repeat(np.arange(len(batch), dtype=np.int64) * width, sizes) + ids,
                                 return_counts=True)
        pairs = np.bincount(keys // width, minlength=len(batch)).astype(np.int64)
        return (keys % width).astype(np.int32), counts.astype(np.int32), pairs, sizes

    @staticmethod
    def _group_postings(groups: Sequence[str], texts: _TextPostings, weights: np.ndarray,
                        item_text: np.ndarray) -> dict[str, GroupPostings]:
        """Per group, its members' text postings stable-sorted by term (so docs stay ascending within a term)."""
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        out: dict[str, GroupPostings] = {}
        for name, ix in members.items():
            own = item_text[ix]
            sizes = texts.start[own + 1] - texts.start[own]
            ends = np.cumsum(sizes)
            at = np.repeat(texts.start[own] - (ends - sizes), sizes) + np.arange(ends[-1] if len(ends) else 0)
            order = np.argsort(texts.terms[at], kind="stable")
            at = at[order]
            term = texts.terms[at]
            docs = np.repeat(np.arange(len(ix), dtype=np.int32), sizes)[order]
            del order
            terms, starts = np.unique(term, return_index=True)
            bounds = np.append(starts, len(docs))
            spans = np.stack((bounds, np.append(bounds[1:], len(docs))), axis=1)
            postings = np.empty((len(docs), 2))
            postings[:, 0] = docs
            postings[:, 1] = weights[at]
            del docs, at
            out[name] = GroupPostings(np.asarray(ix, dtype=np.int64), np.append(terms, SENTINEL).astype(np.int32),
                                      spans, postings)
        return out

    @staticmethod
    def _group_texts(groups: Sequence[str], item_text: np.ndarray) -> dict[str, GroupTexts]:
        """Per group, its members and their text numbers (the postings stay shared, per distinct text)."""
        members: dict[str, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        return {name: GroupTexts(np.asarray(ix, dtype=np.int64), item_text[ix]) for name, ix in members.items()}

    def prepare(self, queries: Sequence[str]) -> None:
        """Turn each query into its term ids (the stems in the vocabulary, repeats kept) once, before recalls."""
        for q in queries:
            if q not in self._query_ids:
                self._query_ids[q] = self._term_ids(q)

    def _term_ids(self, query: str) -> tuple[list[int], np.ndarray]:
        ids = [self.vocab[s] for s in query_stems(query) if s in self.vocab]
        return ids, np.array(ids, dtype=np.int64)

    def search(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        g = self._groups.get(group)
        if g is None or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        prepared = self._query_ids.get(query)
        ids, term_ids = prepared if prepared is not None else self._term_ids(query)
        if isinstance(g, GroupTexts):
            assert self._texts is not None
            return search_texts(self._texts, g, term_ids, k, len(self.vocab))
        return search_postings(g, ids, term_ids, k)


def search_postings(g: GroupPostings, ids: list[int], term_ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` of one group's postings for a query's term ids (``ids`` as a list, ``term_ids`` the same as
    int64; repeats add again): the compiled kernel where it was built, else a ``bincount`` and a stable top k."""
    compiled = kernels.KERNELS
    if compiled is not None:
        room = min(k, len(g.members))
        out_ids, out_scores = np.empty(room, dtype=np.int64), np.empty(room)
        n = compiled.bm25_top_k(g.terms, g.spans, g.postings, term_ids, g.members, k, out_ids, out_scores)
        return out_ids[:n], out_scores[:n]
    if g.span_of is not None:
        spans = [span for span in map(g.span_of.get, ids) if span is not None]
    else:
        pos = np.searchsorted(g.terms, term_ids)
        spans = g.spans[pos[g.terms[pos] == term_ids]].tolist()
    if not spans:
        return np.zeros(0, np.int64), np.zeros(0)
    if len(spans) == 1:
        (lo, hi), = spans
        hit = g.postings[lo:hi]
    else:  # repeats kept: each phrase adds its own IDF * weight, in query order
        hit = np.concatenate([g.postings[lo:hi] for lo, hi in spans])
    scores = np.bincount(hit[:, 0].astype(np.intp), weights=hit[:, 1], minlength=len(g.members))
    local, best = top_k_positive(scores, k)  # every posting weight is > 0: matched is exactly score > 0
    return g.members[local], best


@dataclass(frozen=True, slots=True)
class GroupTexts:
    """One group's share of a ``texts``-layout index: its members (global item indices, in item order) and each
    member's distinct-text number in the shared postings."""

    members: np.ndarray
    texts: np.ndarray


class _SharedTexts:
    """Every distinct text's postings once: text x holds ``terms[start[x]:start[x + 1]]`` (ascending) with their
    ``weights`` (IDF folded in); ``keys`` (``text * V + term``, ascending) is built on the numpy path's first use."""

    __slots__ = ("start", "terms", "weights", "keys")

    def __init__(self, start: np.ndarray, terms: np.ndarray, weights: np.ndarray) -> None:
        self.start, self.terms, self.weights = start, terms, weights
        self.keys: np.ndarray | None = None


def search_texts(texts: _SharedTexts, g: GroupTexts, term_ids: np.ndarray, k: int,
                 width: int) -> tuple[np.ndarray, np.ndarray]:
    """``search_postings`` over shared per-text postings: each member's score is 0.0 plus the weight of each query
    term its text holds, added in query order (repeats again), the same floats as the ``bincount`` there; the
    compiled kernel (one binary search per member and term) where built, else one ``searchsorted`` per query."""
    compiled = kernels.KERNELS
    if compiled is not None:
        room = min(k, len(g.members))
        out_ids, out_scores = np.empty(room, dtype=np.int64), np.empty(room)
        n = compiled.bm25_text_top_k(texts.start, texts.terms, texts.weights, g.texts, term_ids, g.members, k,
                                     out_ids, out_scores)
        return out_ids[:n], out_scores[:n]
    if texts.keys is None:
        texts.keys = np.repeat(np.arange(len(texts.start) - 1, dtype=np.int64) * width, np.diff(texts.start)) \
            + texts.terms
    scores = np.zeros(len(g.members))
    if len(texts.keys):
        for term in term_ids.tolist():  # query order: each document adds its terms in the reference's order
            wanted = g.texts * width + term
            at = np.minimum(np.searchsorted(texts.keys, wanted), len(texts.keys) - 1)
            scores += np.where(texts.keys[at] == wanted, texts.weights[at], 0.0)
    local, best = top_k_positive(scores, k)  # every weight is > 0: matched is exactly score > 0
    return g.members[local], best


def _char_batches(texts: list[str], chars: int) -> Iterator[list[str]]:
    """``texts`` in consecutive batches of about ``chars`` characters."""
    batch: list[str] = []
    budget = 0
    for text in texts:
        batch.append(text)
        budget += len(text) + 1
        if budget >= chars:
            yield batch
            batch, budget = [], 0
    yield batch


def _compiled_batch(compiled: ModuleType, batch: list[str], term_of: _TermIds) -> tuple[np.ndarray, ...]:
    """``NumpyBM25._count_batch`` of the batch's texts, by the compiled ``count_terms``."""
    terms, counts, pairs, sizes = compiled.count_terms(batch, term_of, folded_stretch)
    return (np.frombuffer(terms, dtype=np.int32), np.frombuffer(counts, dtype=np.int32),
            np.frombuffer(pairs, dtype=np.int64), np.frombuffer(sizes, dtype=np.int64))


def _doc_freq(texts: _TextPostings, sizes: np.ndarray, copies: np.ndarray, width: int) -> np.ndarray:
    """Per term, the number of documents holding it: each distinct text's terms counted once per item holding the
    text (in chunks of texts; the sums are whole numbers, so exact in any order)."""
    out = np.zeros(width)
    for lo, hi in _text_chunks(texts.start):
        part = np.bincount(texts.terms[texts.start[lo]:texts.start[hi]],
                           weights=np.repeat(copies[lo:hi], sizes[lo:hi]), minlength=width)
        out += part
    return out


def _text_weights(texts: _TextPostings, sizes: np.ndarray, idf: np.ndarray, avgdl: float) -> np.ndarray:
    """The reference's per-posting expression ``IDF_t * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * D / avgdl)))``,
    once per distinct text's posting, in chunks of texts (element-wise, so the same floats in one piece)."""
    weights = np.empty(len(texts.terms))
    for lo, hi in _text_chunks(texts.start):
        a, b = texts.start[lo], texts.start[hi]
        tf = texts.tf[a:b].astype(np.float64)
        norm = K1 * (1.0 - B + B * np.repeat(texts.length[lo:hi].astype(np.float64), sizes[lo:hi]) / avgdl)
        weights[a:b] = idf[texts.terms[a:b]] * (tf * (K1 + 1.0) / (tf + norm))
    return weights


def _text_chunks(start: np.ndarray) -> Iterator[tuple[int, int]]:
    """Consecutive ranges [lo, hi) of texts holding about ``WEIGHT_CHUNK`` postings each (at least one text)."""
    n = len(start) - 1
    lo = 0
    while lo < n:
        hi = int(np.searchsorted(start, start[lo] + WEIGHT_CHUNK, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        yield lo, hi
        lo = hi
    if n == 0:
        yield 0, 0
