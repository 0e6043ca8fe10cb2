"""``reference``: the strongest open baseline the harness's parts make, every choice a setting (``ReferenceSettings``).

One recall of ``k`` for a query q in group g, in order:

1. keyword leg: BM25 (``retrieval.bm25_analyzed``, the analyzer of ``retrieval.analyzer``: stemmer, stop words,
   IDF kind, global or per-group statistics, k1, b), the top ``max(k, ref_keyword_depth)`` of g with score > 0;
2. vector leg: exact ``1/(1+L2)`` over g's item vectors (``retrieval.vector``), the top ``max(k, ref_vector_depth)``;
3. fusion with a = ``ref_alpha`` on the vector leg and 1 - a on the keyword leg: ``minmax``:
   ``a * norm_v(d) + (1 - a) * norm_k(d)`` with each leg min-max normalised over its own list (a leg lacking d adds
   0; ``fusion.fuse_scores``); ``rrf``: ``a / (rrf_k + rank_v(d)) + (1 - a) / (rrf_k + rank_k(d))``, ranks 1-based
   (a = 0.5 is plain RRF, halved); ``adaptive``: ``minmax`` with a per query, from the two legs' scores alone
   (``fusion.adaptive_alpha``): each leg's confidence c = (top - mean) / (top - bottom) over its own list (0 for
   an empty list, 1 for a single candidate), and a_q = a * c_v / (a * c_v + (1 - a) * c_k);
4. session aggregation (``ref_session_weight`` w > 0, where items are turns of sessions: ``Item.session`` when
   the suite sets it, else each run of consecutive items of one group with the same timestamp, as LoCoMo's turns of
   one session): each session is also a document (its items' texts joined) with its own BM25 leg and a vector
   leg (the normalised mean of its items' vectors), fused as in 3 over the group's sessions; a candidate's score
   becomes ``(1 - w) * minmax(fused)(d) + w * minmax(session)(session of d)``. Off (no effect) when every
   session holds one item (session-level suites);
5. temporal boost (``ref_temporal_boost`` B > 0): ``score * (1 + B * proximity(item date, now - anchor))`` when the
   query names a time (``retrieval.temporal``, extractor ``ref_temporal_extractor``);
6. cross-encoder (``ref_rerank_model local:PATH``): the top ``ref_rerank_depth`` re-ordered by the model's score
   (ties by id), keeping the list's score values in place;
7. the first k.

Ties are broken by first-seen position (the vector list first) at every step (stable sorts).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from memini_bench.core.contract import Hit, System, superseded
from memini_bench.core.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.retrieval import temporal
from memini_bench.retrieval.analyzer import Analyzer
from memini_bench.retrieval.bm25_analyzed import AnalyzedBM25
from memini_bench.retrieval.fusion import adaptive_alpha, fuse_scores, min_max
from memini_bench.retrieval.vector import VectorIndex
from memini_bench.systems.context import SystemContext
from memini_bench.systems.reference_settings import ReferenceSettings

Ranked = tuple[np.ndarray, np.ndarray]


def fuse(vector: Ranked, keyword: Ranked, s: ReferenceSettings) -> Ranked:
    """Step 3 of the module docstring: min-max convex (fixed or adaptive alpha) or weighted RRF, vector list first
    (it wins ties)."""
    a = s.ref_alpha
    if s.ref_fusion == "adaptive":
        a = adaptive_alpha(a, vector[1], keyword[1])
    if s.ref_fusion in ("minmax", "adaptive"):
        return fuse_scores([vector, keyword], [a, 1.0 - a])
    total: dict[int, float] = {}
    for (ids, _), weight in ((vector, a), (keyword, 1.0 - a)):
        for rank, i in enumerate(ids.tolist(), start=1):
            total[i] = total.get(i, 0.0) + weight / (s.ref_rrf_k + rank)
    out_ids = np.fromiter(total.keys(), dtype=np.int64, count=len(total))
    out = np.fromiter(total.values(), dtype=np.float64, count=len(total))
    order = np.argsort(-out, kind="stable")
    return out_ids[order], out[order]


def sessions_of(items: Sequence[Item]) -> np.ndarray:
    """Per item, the number of its session (step 4 of the module docstring)."""
    out = np.empty(len(items), dtype=np.int64)
    numbers: dict[tuple, int] = {}
    previous: tuple | None = None
    run = -1
    for i, it in enumerate(items):
        if it.session:
            key: tuple = ("s", it.group, it.session)
        else:
            here = (it.group, it.time)
            if it.time is None or here != previous:
                run += 1
            previous = here
            key = ("t", it.group, run)
        out[i] = numbers.setdefault(key, len(numbers))
    return out


class ReferenceStore:
    """What every ``reference`` setting shares: the items, their vectors, the query vectors, and one keyword index
    per keyword setting (built on first use), for items and for sessions."""

    def __init__(self, encoder: TextEncoder | None) -> None:
        self.encoder = encoder
        self.items: tuple[Item, ...] = ()
        self.vector: VectorIndex | None = None
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.timings_ms: dict[str, float] = {}
        self._keyword: dict[tuple, AnalyzedBM25] = {}
        self._session_keyword: dict[tuple, AnalyzedBM25] = {}
        self._query_vectors: dict[str, np.ndarray] = {}
        self._sessions: tuple[np.ndarray, VectorIndex | None, list[str], list[str]] | None = None
        self._rerankers: dict[str, object] = {}
        self.time_s = np.zeros(0)
        self.gone: set[str] = set()  # ids forgotten or superseded: never stored again

    @property
    def ingested(self) -> bool:
        return self.vector is not None

    def ingest(self, items: Sequence[Item]) -> None:
        """Store the items not stored (nor dropped) before: the first call stores them all, a later one adds
        (writes over time, docs/temporal.md; the variants sharing the store each call it, the first stores)."""
        if self.encoder is None:
            raise BenchError("reference: needs an embedder for its vector leg (-embedder)")
        known = {it.id for it in self.items}
        new = list({it.id: it for it in items if it.id not in known and it.id not in self.gone}.values())
        if self.ingested and not new:
            return
        t0 = time.perf_counter()
        vectors = np.asarray(self.encoder.documents([it.content for it in new]), dtype=np.float32)
        if self.ingested:
            vectors = np.concatenate((self.vectors, vectors.reshape(len(new), self.vectors.shape[1])))
        self.timings_ms["embed_ms"] = self.timings_ms.get("embed_ms", 0.0) + (time.perf_counter() - t0) * 1e3
        self._store(self.items + tuple(new), vectors)

    def _store(self, items: tuple[Item, ...], vectors: np.ndarray) -> None:
        """Hold ``items`` and their ``vectors``: the vector index rebuilt, the keyword and session indexes built
        again on first use."""
        self.items = items
        self.vectors = vectors
        self.vector = VectorIndex(self.vectors, [it.group for it in self.items])
        self.time_s = np.array([np.nan if it.time is None else it.time.timestamp() for it in self.items])
        self._keyword.clear()
        self._session_keyword.clear()
        self._sessions = None

    def forget(self, item_id: str) -> None:
        """Drop the item (a no-op for one never stored); it is never stored again."""
        self.gone.add(item_id)
        keep = [i for i, it in enumerate(self.items) if it.id != item_id]
        if len(keep) < len(self.items):
            self._store(tuple(self.items[i] for i in keep), self.vectors[keep])

    def update(self, item: Item) -> None:
        """``item`` in place of the ids it supersedes (``core.contract.superseded``)."""
        for old in superseded(item):
            self.forget(old)
        self.ingest((item,))

    def prepare(self, queries: Sequence[str]) -> None:
        if self.encoder is not None and "query_embed_ms" not in self.timings_ms:
            t0 = time.perf_counter()
            missing = [q for q in dict.fromkeys(queries) if q not in self._query_vectors]
            if missing:
                self._query_vectors.update(zip(missing, self.encoder.queries(missing), strict=True))
            self.timings_ms["query_embed_ms"] = (time.perf_counter() - t0) * 1e3

    def query_vector(self, query: str) -> np.ndarray:
        v = self._query_vectors.get(query)
        if v is None:
            assert self.encoder is not None
            v = self._query_vectors[query] = self.encoder.query(query)
        return v

    def keyword(self, s: ReferenceSettings) -> AnalyzedBM25:
        key = s.keyword_key()
        index = self._keyword.get(key)
        if index is None:
            t0 = time.perf_counter()
            index = self._keyword[key] = self._bm25([it.content for it in self.items],
                                                    [it.group for it in self.items], s)
            self.timings_ms.setdefault("keyword_index_ms", (time.perf_counter() - t0) * 1e3)
        return index

    @staticmethod
    def _bm25(contents: Sequence[str], groups: Sequence[str], s: ReferenceSettings) -> AnalyzedBM25:
        return AnalyzedBM25(contents, groups, Analyzer(s.ref_stemmer, s.ref_stopwords), k1=s.ref_k1, b=s.ref_b,
                            idf=s.ref_bm25_idf, stats=s.ref_bm25_stats)

    def sessions(self) -> tuple[np.ndarray, VectorIndex | None, list[str], list[str]]:
        """(per item its session number, the sessions' mean-vector index or None when every session holds one
        item, each session's text, each session's group)."""
        if self._sessions is None:
            of = sessions_of(self.items)
            n = int(of.max()) + 1 if len(of) else 0
            texts: list[list[str]] = [[] for _ in range(n)]
            groups = [""] * n
            for i, it in enumerate(self.items):
                texts[of[i]].append(it.content)
                groups[of[i]] = it.group
            index = None
            if n < len(self.items):
                sums = np.zeros((n, self.vectors.shape[1]), dtype=np.float64)
                np.add.at(sums, of, self.vectors.astype(np.float64))
                norms = np.linalg.norm(sums, axis=1, keepdims=True)
                index = VectorIndex((sums / np.where(norms > 0, norms, 1.0)).astype(np.float32), groups)
            self._sessions = (of, index, ["\n".join(t) for t in texts], groups)
        return self._sessions

    def session_keyword(self, s: ReferenceSettings) -> AnalyzedBM25:
        key = s.keyword_key()
        if key not in self._session_keyword:
            _, _, texts, groups = self.sessions()
            self._session_keyword[key] = self._bm25(texts, groups, s)
        return self._session_keyword[key]

    def reranker(self, model: str):
        from memini_bench.rerankers.crossencoder import LocalCrossEncoder

        if model not in self._rerankers:
            reranker = LocalCrossEncoder(model.removeprefix("local:"))
            reranker.load()
            self._rerankers[model] = reranker
        return self._rerankers[model]


class ReferenceSystem:
    """The ``reference`` system over a ``ReferenceStore`` (see the module docstring). Writes over time
    (``core.contract``): each ingest adds, ``update`` and ``forget`` act on the shared store."""

    incremental_ingest = True

    def __init__(self, store: ReferenceStore, settings: ReferenceSettings | None = None,
                 name: str = "reference") -> None:
        self.store = store
        self.settings = settings or ReferenceSettings()
        self.name = name
        self._extract = temporal.extractor(self.settings.ref_temporal_extractor)

    def ingest(self, items: Sequence[Item]) -> None:
        t0 = time.perf_counter()
        load0, embed0 = self._clock()
        self.store.ingest(items)
        self.store.keyword(self.settings)
        if self.settings.ref_session_weight > 0:
            self.store.session_keyword(self.settings)
        if self.settings.ref_rerank_model:
            self.store.reranker(self.settings.ref_rerank_model)
        self._ingest_ms = self.ingest_time_ms + (time.perf_counter() - t0) * 1e3
        load1, embed1 = self._clock()
        self._parts = {"model_load_ms": load1 - load0, "embed_ms": embed1 - embed0}

    def _clock(self) -> tuple[float, float]:
        encoder = self.store.encoder
        return encoder.clock() if encoder is not None else (0.0, 0.0)

    def update(self, item: Item) -> None:
        t0 = time.perf_counter()
        self.store.update(item)
        self._ingest_ms = self.ingest_time_ms + (time.perf_counter() - t0) * 1e3

    def forget(self, item_id: str) -> None:
        t0 = time.perf_counter()
        self.store.forget(item_id)
        self._ingest_ms = self.ingest_time_ms + (time.perf_counter() - t0) * 1e3

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed the queries and analyze them for the keyword legs, before the timed recalls."""
        self.store.prepare(queries)
        indexes = [self.store.keyword(self.settings)]
        if self.settings.ref_session_weight > 0:
            indexes.append(self.store.session_keyword(self.settings))
        for index in indexes:
            for q in queries:
                index.query_terms(q)

    @property
    def ingest_time_ms(self) -> float:
        return getattr(self, "_ingest_ms", 0.0)

    @property
    def ingest_parts_ms(self) -> dict[str, float]:
        """The model load and the embedding inside ``ingest_time_ms`` (the run's load and embed columns): the
        encoder's clock across this ingest, so only the first of several ``reference`` variants sharing a store
        reports the embedding (the others find the vectors made)."""
        return getattr(self, "_parts", {"model_load_ms": 0.0, "embed_ms": 0.0})

    def describe(self) -> dict:
        s = self.settings
        analyzer = Analyzer(s.ref_stemmer, s.ref_stopwords).describe()
        return {**s.as_dict(), "keyword": {**analyzer, "bm25": f"{s.ref_bm25_idf} idf, {s.ref_bm25_stats} "
                                           f"statistics, k1 {s.ref_k1:g}, b {s.ref_b:g}, repeats count"},
                "vector": "exact 1/(1+L2) over the run's vectors",
                "legs_depth": f"keyword max(k, {s.ref_keyword_depth}), vector max(k, {s.ref_vector_depth})",
                "recipe": "docs/reference.md"}

    def _session_scores(self, group: str, query: str, qv: np.ndarray) -> dict[int, float] | None:
        _, index, texts, _ = self.store.sessions()
        if index is None:
            return None
        s = self.settings
        keyword = self.store.session_keyword(s)
        size = len(texts)  # every session of the group
        fused_ids, fused = fuse(index.search(group, qv, size), keyword.search(group, query, size), s)
        return dict(zip(fused_ids.tolist(), min_max(fused).tolist(), strict=True))

    def ranked(self, group: str, query: str, k: int, now: datetime | None = None) -> Ranked:
        s = self.settings
        store = self.store
        assert store.vector is not None, "ingest first"
        qv = store.query_vector(query)
        ids, scores = fuse(store.vector.search(group, qv, max(k, s.ref_vector_depth)),
                           store.keyword(s).search(group, query, max(k, s.ref_keyword_depth)), s)
        if s.ref_session_weight > 0 and len(ids):
            by_session = self._session_scores(group, query, qv)
            if by_session is not None:
                of = store.sessions()[0]
                session = np.array([by_session.get(int(of[i]), 0.0) for i in ids.tolist()])
                w = s.ref_session_weight
                scores = (1.0 - w) * min_max(scores) + w * session
                order = np.argsort(-scores, kind="stable")
                ids, scores = ids[order], scores[order]
        if s.ref_temporal_boost > 0 and now is not None:
            anchor = self._extract(query, now)
            if anchor is not None:
                ids, scores = temporal.temporal_rerank(ids, scores, store.time_s[ids], anchor, now,
                                                       s.ref_temporal_boost)
        if s.ref_rerank_model and len(ids) > 1:
            ids = self._cross_encode(query, ids)
        return ids, scores

    def _cross_encode(self, query: str, ids: np.ndarray) -> np.ndarray:
        from memini_bench.rerankers import Candidate, reorder_by_id

        head = ids[:self.settings.ref_rerank_depth].tolist()
        items = self.store.items
        order = self.store.reranker(self.settings.ref_rerank_model).rerank(
            query, [Candidate(str(i), items[i].content) for i in head])
        new_head = [int(i) for i in reorder_by_id([str(i) for i in head], order)]
        return np.concatenate((np.array(new_head, dtype=np.int64), ids[len(head):]))

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        if k <= 0:
            return []
        ids, scores = self.ranked(group, query, k, now)
        ids, scores = ids[:k], scores[:k]
        items = self.store.items
        return [Hit((items[i].id,), float(v), items[i].content) for i, v in zip(ids.tolist(), scores.tolist(),
                                                                             strict=True)]


def make(ctx: SystemContext) -> System:
    """``reference`` with the run's ``ReferenceSettings``, on the run's shared encoder."""
    store = ctx.shared("reference-store", lambda: ReferenceStore(ctx.encoder))
    assert isinstance(store, ReferenceStore)
    settings = ctx.reference
    system = ReferenceSystem(store, settings)
    if ctx.label:
        system.name = f"reference/{ctx.label}"
    return system


__all__ = ["ReferenceSettings", "ReferenceStore", "ReferenceSystem", "fuse", "make", "sessions_of"]
