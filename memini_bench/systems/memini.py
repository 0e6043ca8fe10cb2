"""memini's three systems over one shared backend (the System contract itself is ``memini_bench.core.contract``).

- ``memini-keyword``: the keyword leg's top k (FTS5-exact BM25, see ``retrieval.keyword``).
- ``memini-vector``: the vector leg's top k (``1/(1+L2)``, see ``retrieval.vector``).
- ``memini-hybrid``: memini's ``service.Recall``: k clamped to [1, 100] (0 -> 10); each leg's top
  ``pool = max(k * pool_factor, pool_floor)`` (5 and 50); fused (min-max convex with ``alpha`` = ``-fusion`` on the
  vector leg, or RRF with rrfK ``rrf_k``, 5 unless ``-rrf-k``, when alpha < 0); composite re-rank
  ``rel * (0.8 + 0.2 * qhat)``; the durable-tier reserve (``semantic_reserve``, 0 = off as in memini's bench, see
  ``retrieval.reserve``); content dedup; cut to k.
  ``temporal_boost`` > 0 (0 = memini's bench; its server uses 0.40) multiplies each composite score by
  ``1 + boost * proximity(item date, now - anchor)`` when the query names a time (``retrieval.temporal``), after
  the composite and before the reserve.
  With ``reinforce`` (memini's synchronous access-count side effect, off by default because memini's published
  numbers match the clean protocol) every returned memory's access count goes up by one after each recall,
  which raises its quality in later recalls of the same group.

Every hybrid setting is a field of ``HybridConfig`` (each a CLI flag); the CLI, the results config and
``HybridSystem`` read the same object. Ingest time: the three share one store (ingested once, by whichever system
runs first); each reports the parts it uses (``ingest_time_ms``): keyword the keyword index, vector the item
embedding, hybrid both.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from memini_bench.core.contract import Hit, System, superseded
from memini_bench.core.dataset import Item
from memini_bench.core.hooks import own_system
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.retrieval import composite as comp
from memini_bench.retrieval import reference as _reference
from memini_bench.retrieval import temporal
from memini_bench.retrieval.fusion import fuse_legs
from memini_bench.retrieval.keyword import KeywordIndex
from memini_bench.retrieval.reserve import PROMOTE_RATIO, TOP_ANCHOR, reserve_order
from memini_bench.retrieval.vector import VectorIndex
from memini_bench.systems.config import HybridConfig, check_keyword_backend, clamp_limit, keyword_index, pool_size
from memini_bench.systems.context import SystemContext

__all__ = ["HybridSystem", "KeywordSystem", "VectorSystem", "MeminiBackend", "memini_systems", "pool_size",
           "clamp_limit"]

class MeminiBackend:
    """The store the three memini systems share: ingested once (the first system pays, as with memini's
    sync.Once), holding the global keyword index, the item vectors and the access counters.

    ``reference=True`` runs the plain implementations of ``retrieval.reference`` (dict fusion, full quality
    maths, regex dedup keys on first touch) instead of the fast ones; both give the same ids and scores."""

    def __init__(self, encoder: TextEncoder | None, keyword_backend: str = "numpy", *,
                 reference: bool = False) -> None:
        check_keyword_backend(keyword_backend)
        self.encoder = encoder
        self.keyword_backend = keyword_backend
        self.reference = reference
        self.fuse_legs = _reference.fuse_legs if reference else fuse_legs
        self.items: tuple[Item, ...] = ()
        self.keyword: KeywordIndex | None = None
        self.vector: VectorIndex | None = None
        self.access = np.zeros(0, dtype=np.int64)
        self.timings_ms: dict[str, float] = {}
        self._dedup_keys: dict[int, str] = {}
        self._dedup_ids = np.zeros(0, dtype=np.int64)  # per item, a number standing for its dedup key
        self._query_vectors: dict[str, np.ndarray] = {}
        self._uniform_static = False  # every item's static quality inputs equal (set with the item arrays)
        self.time_s = np.zeros(0)  # per-item time in Unix seconds (NaN = unknown), with the other quality inputs
        # writes over time: items added since the last build (and their vectors), ids dropped since, ids ever dropped
        self._pending: list[Item] = []
        self._new_vectors: list[np.ndarray] = []
        self._dropped: set[str] = set()
        self._gone: set[str] = set()
        self._ids: set[str] = set()

    @property
    def ingested(self) -> bool:
        return self.keyword is not None

    def ingest(self, items: Sequence[Item]) -> None:
        """Store ``items``: the first call builds every index; a later call adds the items it has not seen (and
        not dropped) and rebuilds the indexes over them all on the next ``consolidate`` or recall (writes over
        time, docs/temporal.md); every system sharing the backend calls it, and only the first call for an item
        stores it."""
        if not self.ingested:
            self._build(tuple(items))
            return
        new = list({it.id: it for it in items if it.id not in self._ids and it.id not in self._gone}.values())
        if new:
            self._pending.extend(new)
            self._ids.update(it.id for it in new)
            self._embed_new(new)

    def _embed_new(self, new: Sequence[Item]) -> None:
        if self.encoder is None:
            return
        t0 = time.perf_counter()
        load0, embed0 = self.encoder.clock()
        vectors = np.asarray(self.encoder.documents([it.content for it in new]), dtype=np.float32)
        self._new_vectors.append(vectors)
        load1, embed1 = self.encoder.clock()
        self._add_ms("embed_ms", (time.perf_counter() - t0) * 1e3)
        self._add_ms("model_load_ms", load1 - load0)
        self._add_ms("vectors_ms", embed1 - embed0)

    def _add_ms(self, key: str, ms: float) -> None:
        self.timings_ms[key] = self.timings_ms.get(key, 0.0) + ms

    def forget(self, item_id: str) -> None:
        """Drop the item (a no-op for one never stored or already dropped); it is never stored again."""
        self._gone.add(item_id)
        if item_id in self._ids:
            self._dropped.add(item_id)

    def update(self, item: Item) -> None:
        """``item`` in place of the ids it supersedes (``core.contract.superseded``)."""
        for old in superseded(item):
            self.forget(old)
        self.ingest((item,))

    def consolidate(self, now: datetime | None = None) -> None:
        """Rebuild the indexes over the stored items after writes (their time is ingest time)."""
        if not (self._pending or self._dropped):
            return
        keep = [i for i, it in enumerate(self.items) if it.id not in self._dropped]
        fresh = [it for it in self._pending if it.id not in self._dropped]
        old_vectors = None if self.vector is None else self.vector.vectors[keep]
        new_vectors = (np.concatenate(self._new_vectors) if self._new_vectors else None)
        if new_vectors is not None:
            fresh_rows = [i for i, it in enumerate(self._pending) if it.id not in self._dropped]
            new_vectors = new_vectors[fresh_rows]
        access = np.concatenate((self.access[keep], np.zeros(len(fresh), dtype=np.int64)))
        items = tuple(self.items[i] for i in keep) + tuple(fresh)
        vectors = (np.concatenate((old_vectors, new_vectors)) if old_vectors is not None and new_vectors is not None
                   else None)
        self._pending, self._new_vectors, self._dropped = [], [], set()
        self._build(items, vectors=vectors)
        self.access = access

    def _build(self, items: tuple[Item, ...], *, vectors: np.ndarray | None = None) -> None:
        self.items = items
        self._ids = {it.id for it in items}
        self._dedup_keys = {}
        self.time_s = np.zeros(0)
        contents = [it.content for it in self.items]
        groups = [it.group for it in self.items]
        if self.encoder is not None and vectors is None:  # a forking embedder works on the other core meanwhile
            self.encoder.start_documents(contents)
        t0 = time.perf_counter()
        plain = self.reference and self.keyword_backend == "numpy"
        self.keyword = (_reference.ReferenceBM25(contents, groups) if plain
                        else keyword_index(self.keyword_backend, contents, groups))
        t1 = time.perf_counter()
        self._add_ms("keyword_index_ms", (t1 - t0) * 1e3)
        if not self.reference:
            self._dedup_ids = comp.dedup_key_ids(contents)
            self._add_ms("dedup_keys_ms", (time.perf_counter() - t1) * 1e3)
        if self.encoder is not None:
            t1 = time.perf_counter()
            load0, embed0 = self.encoder.clock()
            index = _reference.ReferenceVectorIndex if self.reference else VectorIndex
            self.vector = index(self.encoder.documents(contents) if vectors is None else vectors, groups)
            self._add_ms("embed_ms", (time.perf_counter() - t1) * 1e3)  # with a background job: the wait for it
            load1, embed1 = self.encoder.clock()
            self._add_ms("model_load_ms", load1 - load0)  # the parts of embed_ms (the rest: the vector index)
            self._add_ms("vectors_ms", embed1 - embed0)
        self.access = np.zeros(len(self.items), dtype=np.int64)

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed every query up front in batches (recall latency then measures retrieval, not the model); once,
        whichever system sharing this backend asks first. The keyword index turns them into term ids too."""
        if self.encoder is not None and self.vector is not None and "query_embed_ms" not in self.timings_ms:
            t0 = time.perf_counter()
            vectors = self.encoder.queries(queries)
            if not self.reference:
                self._query_vectors.update(zip(queries, vectors, strict=True))
            self.timings_ms["query_embed_ms"] = (time.perf_counter() - t0) * 1e3
        if not self.reference and hasattr(self.keyword, "prepare"):
            self.keyword.prepare(queries)

    def dedup(self, ids: np.ndarray, k: int) -> np.ndarray | list[int]:
        """Positions of the first ``k`` candidates with distinct dedup keys (``composite.dedup``)."""
        if self.reference:
            return comp.dedup([self.dedup_key(i) for i in ids.tolist()], k)
        if len(self._dedup_ids) != len(self.items):
            self._dedup_ids = comp.dedup_key_ids([it.content for it in self.items])
        return comp.dedup_ids(self._dedup_ids[ids], k)

    def rerank(self, ids: np.ndarray, scores: np.ndarray, now: datetime | None) -> tuple[np.ndarray, np.ndarray]:
        """memini's composite re-rank of the fused candidates; without the quality maths when every candidate's
        quality is the same (``composite.rerank_uniform``, the same floats)."""
        self._item_arrays()
        if not self.reference and self._uniform_static and len(ids):
            access = self.access[ids]
            if (access == access[0]).all():
                return comp.rerank_uniform(ids, scores)
        return comp.rerank(ids, scores, self.qualities(ids, now))

    def dedup_key(self, index: int) -> str:
        """memini's dedup key of an item (normalized content), computed once per item."""
        key = self._dedup_keys.get(index)
        if key is None:
            key = self._dedup_keys[index] = comp.normalize_content(self.items[index].content)
        return key

    def hits(self, ids: np.ndarray, scores: np.ndarray) -> list[Hit]:
        return [Hit((self.items[i].id,), float(s), self.items[i].content)
                for i, s in zip(ids.tolist(), scores.tolist(), strict=True)]

    def keyword_leg(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        self.consolidate()
        assert self.keyword is not None, "ingest first"
        return self.keyword.search(group, query, k)

    def vector_leg(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        self.consolidate()
        if self.vector is None or self.encoder is None:
            raise BenchError("the vector leg needs an embedder (-embedder)")
        vector = self._query_vectors.get(query)
        return self.vector.search(group, self.encoder.query(query) if vector is None else vector, k)

    def _item_arrays(self) -> None:
        """Per-item quality inputs as arrays, built once (only access counts and ``now`` change per query)."""
        if len(self.time_s) == len(self.items):
            return
        self._tier_weight, self._short = comp.tier_arrays([it.tier for it in self.items])
        self._importance = np.array([it.importance for it in self.items], dtype=np.float64)
        self._confidence = np.array([np.nan if it.confidence is None else it.confidence for it in self.items],
                                    dtype=np.float64)
        self.time_s = np.array([np.nan if it.time is None else it.time.timestamp() for it in self.items],
                               dtype=np.float64)
        # Quality is then sal * (1 + ln(1 + access)) with one sal for all: equal wherever access counts are.
        self._uniform_static = bool(len(self.items)) and not self._short.any() and \
            bool(np.isnan(self._confidence).all()) and bool(np.isfinite(self._importance).all()) and \
            (self._tier_weight == self._tier_weight[0]).all() and (self._importance == self._importance[0]).all()

    def item_times(self) -> np.ndarray:
        """Every item's time in Unix seconds, NaN when unknown (built once, with the quality inputs)."""
        self._item_arrays()
        return self.time_s

    def qualities(self, ids: np.ndarray, now: datetime | None) -> np.ndarray:
        """memini's Quality of each candidate (``retrieval.composite``), with the live access counts; age is
        ``now - item time`` in seconds (0 when either is unknown)."""
        self._item_arrays()
        age = np.zeros(len(ids)) if now is None else np.nan_to_num(now.timestamp() - self.time_s[ids], nan=0.0)
        return comp.qualities_from(self._tier_weight[ids], self._short[ids], self._importance[ids],
                                   self._confidence[ids], self.access[ids], age)


class _BackendSystem:
    """One of memini's systems over the shared backend; ``uses`` names the backend timings its ingest stands for.
    Writes over time (``core.contract``): each ingest adds; ``update``, ``forget`` and ``consolidate`` act on the
    shared store (the first system to call stores or drops an item; the others find it done)."""

    uses: tuple[str, ...] = ()
    incremental_ingest = True

    def __init__(self, backend: MeminiBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def ingest(self, items: Sequence[Item]) -> None:
        self.backend.ingest(items)

    def prepare(self, queries: Sequence[str]) -> None:
        self.backend.prepare(queries)

    def update(self, item: Item) -> None:
        self.backend.update(item)

    def forget(self, item_id: str) -> None:
        self.backend.forget(item_id)

    def consolidate(self, now: datetime | None) -> None:
        self.backend.consolidate(now)

    @property
    def ingest_time_ms(self) -> float:
        return sum(self.backend.timings_ms.get(key, 0.0) for key in self.uses)

    @property
    def ingest_parts_ms(self) -> dict[str, float]:
        """The model load and the embedding inside ``ingest_time_ms`` (for the run's separate columns)."""
        if "embed_ms" not in self.uses:
            return {"model_load_ms": 0.0, "embed_ms": 0.0}
        t = self.backend.timings_ms
        return {"model_load_ms": t.get("model_load_ms", 0.0), "embed_ms": t.get("vectors_ms", 0.0)}

    def describe(self) -> dict:
        return {"keyword_backend": self.backend.keyword_backend}

    def stage_timings(self) -> dict[str, float]:
        """The shared backend's stage times so far (keyword index, embedding, model load, query embedding), ms."""
        return dict(self.backend.timings_ms)


@own_system
class KeywordSystem(_BackendSystem):
    uses = ("keyword_index_ms",)

    def __init__(self, backend: MeminiBackend, name: str = "memini-keyword") -> None:
        super().__init__(backend, name)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        return self.backend.hits(*self.backend.keyword_leg(group, query, k))


@own_system
class VectorSystem(_BackendSystem):
    uses = ("embed_ms",)

    def __init__(self, backend: MeminiBackend, name: str = "memini-vector") -> None:
        super().__init__(backend, name)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        return self.backend.hits(*self.backend.vector_leg(group, query, k))


@own_system
class HybridSystem(_BackendSystem):
    uses = ("keyword_index_ms", "embed_ms", "dedup_keys_ms")
    # The reserve gate's legs (memini's 0.5 and 0.4); the quality scoreboard's variants probe others.
    reserve_ratio = PROMOTE_RATIO
    reserve_top_anchor = TOP_ANCHOR

    def __init__(self, backend: MeminiBackend, config: HybridConfig | None = None, name: str = "memini-hybrid") -> None:
        super().__init__(backend, name)
        self.config = config or HybridConfig()
        # Built only when the boost is on: the llm extractor needs MEMINI_LLM_* and would otherwise go unused.
        self.temporal_extractor = (temporal.extractor(self.config.temporal_extractor)
                                   if self.config.temporal_boost > 0 else None)

    def describe(self) -> dict:
        info = self.config.as_dict()
        if hasattr(self.temporal_extractor, "describe"):  # the llm extractor: its model, calls, unusable replies
            info["temporal_llm"] = self.temporal_extractor.describe()
        return info

    def ranked(self, group: str, query: str, k: int, now: datetime | None = None, *,
               pool: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The composite-ranked candidate list before dedup and the cut (item indices, composite scores). Each
        leg is ``pool`` deep when given, else ``config.leg_depth(k)``."""
        c = self.config
        if pool is None:
            pool = c.leg_depth(k)
        fused_ids, fused = self.backend.fuse_legs(self.backend.vector_leg(group, query, pool),
                                                  self.backend.keyword_leg(group, query, pool), c.fusion, c.rrf_k)
        ids, scores = self.backend.rerank(fused_ids, fused, now)
        if self.temporal_extractor is not None and now is not None:
            anchor = self.temporal_extractor(query, now)
            if anchor is not None:
                ids, scores = temporal.temporal_rerank(ids, scores, self.backend.item_times()[ids], anchor, now,
                                                       c.temporal_boost)
        return ids, scores

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        k = clamp_limit(k)
        ids, scores = self.ranked(group, query, k, now)
        if self.config.semantic_reserve > 0:
            durable = [self.backend.items[i].tier in comp.DURABLE_TIERS for i in ids.tolist()]
            order = reserve_order(scores, durable, k, self.config.semantic_reserve, ratio=self.reserve_ratio,
                                  top_anchor=self.reserve_top_anchor)
            ids, scores = ids[order], scores[order]
        keep = self.backend.dedup(ids, k)
        ids, scores = ids[keep], scores[keep]
        if self.config.reinforce:
            self.backend.access[ids] += 1
        return self.backend.hits(ids, scores)


def memini_systems(encoder: TextEncoder | None, config: HybridConfig | None = None) -> list[System]:
    """memini's three systems over one shared backend, in memini's order: hybrid, vector, keyword."""
    config = config or HybridConfig()
    backend = MeminiBackend(encoder, config.keyword_backend)
    return [HybridSystem(backend, config), VectorSystem(backend), KeywordSystem(backend)]


def _backend(ctx: SystemContext, *, vectors: bool) -> MeminiBackend:
    """The run's shared memini backend (one per context); ``vectors`` attaches the run's encoder."""
    config: HybridConfig = ctx.hybrid
    backend = ctx.shared("memini-backend", lambda: MeminiBackend(None, config.keyword_backend))
    assert isinstance(backend, MeminiBackend)
    if vectors and backend.encoder is None:
        if backend.ingested:
            raise BenchError("internal: the memini backend was ingested before a vector system joined it")
        backend.encoder = ctx.encoder
    return backend


def _named(system: _BackendSystem, ctx: SystemContext) -> _BackendSystem:
    if ctx.label:
        system.name = f"{system.name}/{ctx.label}"
    return system


def make_hybrid(ctx: SystemContext) -> System:
    """memini-hybrid with the run's HybridConfig, on the run's shared backend."""
    return _named(HybridSystem(_backend(ctx, vectors=True), ctx.hybrid), ctx)


def make_vector(ctx: SystemContext) -> System:
    return _named(VectorSystem(_backend(ctx, vectors=True)), ctx)


def make_keyword(ctx: SystemContext) -> System:
    return _named(KeywordSystem(_backend(ctx, vectors=False)), ctx)
