"""The System protocol and memini's three built-in systems over one shared backend.

A System ingests items once and then answers ``recall(group, query, k)`` with ranked hits. memini's three:

- ``memini-keyword``: the keyword leg's top k (FTS5-exact BM25, see ``retrieval.keyword``).
- ``memini-vector``: the vector leg's top k (``1/(1+L2)``, see ``retrieval.vector``).
- ``memini-hybrid``: memini's ``service.Recall``: k clamped to [1, 100] (0 -> 10); each leg's top
  ``pool = max(k * pool_factor, pool_floor)`` (5 and 50); fused (min-max convex with ``alpha`` on the vector leg,
  or RRF with rrfK 5 when alpha < 0); composite re-rank ``rel * (0.8 + 0.2 * qhat)``; the durable-tier reserve
  (``semantic_reserve``, 0 = off as in memini's bench, see ``retrieval.reserve``); content dedup; cut to k.
  ``temporal_boost`` > 0 (0 = memini's bench; its server uses 0.40) multiplies each composite score by
  ``1 + boost * proximity(item date, now - anchor)`` when the query names a time (``retrieval.temporal``), after
  the composite and before the reserve.
  With ``reinforce`` (memini's synchronous access-count side effect, off by default because memini's published
  numbers match the clean protocol) every returned memory's access count goes up by one after each recall,
  which raises its quality in later recalls of the same group.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np

from memini_bench.dataset import Item
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.retrieval import composite as comp
from memini_bench.retrieval import temporal
from memini_bench.retrieval.fusion import DEFAULT_ALPHA, fuse_legs
from memini_bench.retrieval.keyword import KeywordIndex, NumpyBM25
from memini_bench.retrieval.keyword_fts5 import FTS5BM25
from memini_bench.retrieval.reserve import reserve_order
from memini_bench.retrieval.vector import VectorIndex

MAX_RECALL_LIMIT = 100
DEFAULT_POOL_FACTOR = 5
DEFAULT_POOL_FLOOR = 50
KEYWORD_BACKENDS: dict[str, Callable[[Sequence[str], Sequence[str]], KeywordIndex]] = {
    "numpy": NumpyBM25, "fts5": FTS5BM25,
}


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory: the dataset item ids it stands for, its score and its text."""

    ids: tuple[str, ...]
    score: float
    content: str


@runtime_checkable
class System(Protocol):
    """Anything that can be measured: ingest items once, then recall the best k for a query in a group."""

    name: str

    def ingest(self, items: Sequence[Item]) -> None: ...

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None) -> list[Hit]: ...


def pool_size(k: int, factor: int = 0, floor: int = 0) -> int:
    """memini's RecallPoolSize: ``max(k * factor, floor)``, factor 5 and floor 50 unless given (> 0)."""
    return max(k * (factor if factor > 0 else DEFAULT_POOL_FACTOR), floor if floor > 0 else DEFAULT_POOL_FLOOR)


def clamp_limit(k: int) -> int:
    """memini's clamp: 0 (or less) means 10, above 100 means 100."""
    return 10 if k <= 0 else min(k, MAX_RECALL_LIMIT)


class MeminiBackend:
    """The store the three memini systems share: ingested once (the first system pays, as with memini's
    sync.Once), holding the global keyword index, the item vectors and the access counters."""

    def __init__(self, encoder: TextEncoder | None, keyword_backend: str = "numpy") -> None:
        if keyword_backend not in KEYWORD_BACKENDS:
            raise BenchError(f"-keyword-backend {keyword_backend!r}: unknown; use numpy or fts5")
        self.encoder = encoder
        self.keyword_backend = keyword_backend
        self.items: tuple[Item, ...] = ()
        self.keyword: KeywordIndex | None = None
        self.vector: VectorIndex | None = None
        self.access = np.zeros(0, dtype=np.int64)
        self.timings_ms: dict[str, float] = {}
        self._dedup_keys: dict[int, str] = {}
        self.time_s = np.zeros(0)  # per-item time in Unix seconds (NaN = unknown), with the other quality inputs

    @property
    def ingested(self) -> bool:
        return self.keyword is not None

    def ingest(self, items: Sequence[Item]) -> None:
        if self.ingested:
            return
        self.items = tuple(items)
        contents = [it.content for it in self.items]
        groups = [it.group for it in self.items]
        t0 = time.perf_counter()
        self.keyword = KEYWORD_BACKENDS[self.keyword_backend](contents, groups)
        t1 = time.perf_counter()
        self.timings_ms["keyword_index_ms"] = (t1 - t0) * 1e3
        if self.encoder is not None:
            self.vector = VectorIndex(self.encoder.documents(contents), groups)
            self.timings_ms["embed_ms"] = (time.perf_counter() - t1) * 1e3
        self.access = np.zeros(len(self.items), dtype=np.int64)

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed every query up front in batches (recall latency then measures retrieval, not the model); once,
        whichever system sharing this backend asks first."""
        if self.encoder is not None and self.vector is not None and "query_embed_ms" not in self.timings_ms:
            t0 = time.perf_counter()
            self.encoder.queries(queries)
            self.timings_ms["query_embed_ms"] = (time.perf_counter() - t0) * 1e3

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
        assert self.keyword is not None, "ingest first"
        return self.keyword.search(group, query, k)

    def vector_leg(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.vector is None or self.encoder is None:
            raise BenchError("the vector leg needs an embedder (-embedder)")
        return self.vector.search(group, self.encoder.query(query), k)

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
    def __init__(self, backend: MeminiBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def ingest(self, items: Sequence[Item]) -> None:
        self.backend.ingest(items)

    def prepare(self, queries: Sequence[str]) -> None:
        self.backend.prepare(queries)


class KeywordSystem(_BackendSystem):
    def __init__(self, backend: MeminiBackend, name: str = "memini-keyword") -> None:
        super().__init__(backend, name)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None) -> list[Hit]:
        return self.backend.hits(*self.backend.keyword_leg(group, query, k))


class VectorSystem(_BackendSystem):
    def __init__(self, backend: MeminiBackend, name: str = "memini-vector") -> None:
        super().__init__(backend, name)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None) -> list[Hit]:
        return self.backend.hits(*self.backend.vector_leg(group, query, k))


class HybridSystem(_BackendSystem):
    def __init__(self, backend: MeminiBackend, name: str = "memini-hybrid", *, alpha: float = DEFAULT_ALPHA,
                 pool_factor: int = 0, pool_floor: int = 0, reinforce: bool = False,
                 semantic_reserve: int = 0, temporal_boost: float = 0.0, temporal_extractor: str = "regex") -> None:
        super().__init__(backend, name)
        if semantic_reserve < 0:
            raise BenchError(f"-semantic-reserve {semantic_reserve}: must be 0 (off) or a positive count")
        self.alpha = alpha
        self.pool_factor = pool_factor
        self.pool_floor = pool_floor
        self.reinforce = reinforce
        self.semantic_reserve = semantic_reserve
        self.temporal_boost = temporal_boost
        self.temporal_extractor = temporal.extractor(temporal_extractor)

    def ranked(self, group: str, query: str, k: int, now: datetime | None = None, *,
               pool: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The composite-ranked candidate list before dedup and the cut (item indices, composite scores). Each
        leg is ``pool`` deep when given, else ``pool_size(k, pool_factor, pool_floor)``."""
        if pool is None:
            pool = pool_size(k, self.pool_factor, self.pool_floor)
        fused_ids, fused = fuse_legs(self.backend.vector_leg(group, query, pool),
                                     self.backend.keyword_leg(group, query, pool), self.alpha)
        ids, scores = comp.rerank(fused_ids, fused, self.backend.qualities(fused_ids, now))
        if self.temporal_boost > 0:
            ids, scores = temporal.rerank_temporal(ids, scores, self.backend.item_times(), query, now,
                                                   self.temporal_extractor, self.temporal_boost)
        return ids, scores

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None) -> list[Hit]:
        k = clamp_limit(k)
        ids, scores = self.ranked(group, query, k, now)
        if self.semantic_reserve > 0:
            durable = [self.backend.items[i].tier in comp.DURABLE_TIERS for i in ids.tolist()]
            order = reserve_order(scores, durable, k, self.semantic_reserve)
            ids, scores = ids[order], scores[order]
        keep = comp.dedup([self.backend.dedup_key(i) for i in ids.tolist()], k)
        ids, scores = ids[keep], scores[keep]
        if self.reinforce:
            self.backend.access[ids] += 1
        return self.backend.hits(ids, scores)


def memini_systems(encoder: TextEncoder | None, *, keyword_backend: str = "numpy", alpha: float = DEFAULT_ALPHA,
                   pool_factor: int = 0, pool_floor: int = 0, reinforce: bool = False,
                   semantic_reserve: int = 0, temporal_boost: float = 0.0,
                   temporal_extractor: str = "regex") -> list[System]:
    """memini's three systems over one shared backend, in memini's order: hybrid, vector, keyword."""
    backend = MeminiBackend(encoder, keyword_backend)
    return [
        HybridSystem(backend, alpha=alpha, pool_factor=pool_factor, pool_floor=pool_floor, reinforce=reinforce,
                     semantic_reserve=semantic_reserve, temporal_boost=temporal_boost,
                     temporal_extractor=temporal_extractor),
        VectorSystem(backend),
        KeywordSystem(backend),
    ]
