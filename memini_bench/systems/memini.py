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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

import click
import numpy as np

from memini_bench.core.contract import Hit, System, SystemContext
from memini_bench.core.dataset import Item
from memini_bench.core.settings import Int, Real, setting
from memini_bench.embed.encoder import TextEncoder
from memini_bench.errors import BenchError
from memini_bench.retrieval import composite as comp
from memini_bench.retrieval import reference as _reference
from memini_bench.retrieval import temporal
from memini_bench.retrieval.fusion import DEFAULT_ALPHA, DEFAULT_RRF_K, fuse_legs
from memini_bench.retrieval.keyword import KeywordIndex, NumpyBM25
from memini_bench.retrieval.keyword_fts5 import FTS5BM25
from memini_bench.retrieval.reserve import PROMOTE_RATIO, TOP_ANCHOR, reserve_order
from memini_bench.retrieval.vector import VectorIndex

__all__ = ["Hit", "System", "HybridConfig", "HybridSystem", "KeywordSystem", "VectorSystem", "MeminiBackend",
           "memini_systems", "pool_size", "clamp_limit"]

MAX_RECALL_LIMIT = 100
DEFAULT_POOL_FACTOR = 5
DEFAULT_POOL_FLOOR = 50
KEYWORD_BACKENDS: dict[str, Callable[[Sequence[str], Sequence[str]], KeywordIndex]] = {
    "numpy": NumpyBM25, "fts5": FTS5BM25,
}


def _fusion(value: object, param: object = None, ctx: object = None) -> float:
    alpha = Real().convert(value, param, ctx)
    if 1.0 < alpha:
        raise click.BadParameter(f"{alpha:g}: use an alpha in [0, 1] (min-max fusion) or a negative value (RRF)",
                                 param=param)  # type: ignore[arg-type]
    return alpha


class Fusion(Real):
    """``-fusion``: a finite alpha in [0, 1], or any negative value for RRF."""

    def convert(self, value, param, ctx):
        return _fusion(value, param, ctx)


@dataclass(frozen=True)
class HybridConfig:
    """Every setting of memini's hybrid (and of the store the three systems share)."""

    fusion: float = setting("fusion", DEFAULT_ALPHA, "Hybrid alpha: in [0, 1] min-max score fusion with this vector "
                            "weight; < 0 RRF (rrfK 5, or -rrf-k).", type=Fusion())
    pool: int = setting("pool", 0, "Hybrid per-leg depth itself (memini's sweep's pool); 0 = max(k*factor, floor).",
                        type=Int(min=0, max=100000))
    pool_factor: int = setting("pool-factor", 0, "Hybrid per-leg pool = max(k*factor, floor); 0 = memini's 5.",
                               type=Int(min=0, max=1000))
    pool_floor: int = setting("pool-floor", 0, "Hybrid per-leg pool floor; 0 = memini's 50.",
                              type=Int(min=0, max=100000))
    temporal_boost: float = setting("temporal-boost", 0.0, "Hybrid temporal targeting: score x (1 + B x proximity "
                                    "to the time the query names); 0 = off (memini's bench; its server uses 0.40).",
                                    type=Real(min=0, max=100))
    temporal_extractor: str = setting("temporal-extractor", "regex", "Time-phrase extractor for the temporal "
                                      "boost: memini's regex, or extended (+ day-month-year dates, spelled-out/vague "
                                      "counts, weekdays, spans), or llm (a chat completion per query through "
                                      "MEMINI_LLM_*).", type=click.Choice(list(temporal.EXTRACTOR_NAMES)))
    semantic_reserve: int = setting("semantic-reserve", 0, "Hybrid durable-tier reserve: keep up to R "
                                    "semantic/procedural memories in the top k when they clear the gate max(0.5 x "
                                    "evictee, 0.4 x top-1); 0 = off (memini's bench; its server uses 2).",
                                    type=Int(min=0, max=100))
    keyword_backend: str = setting("keyword-backend", "numpy", "BM25 backend: in-process numpy (default) or SQLite "
                                   "FTS5 (the reference).", type=click.Choice(list(KEYWORD_BACKENDS)))
    reinforce: bool = setting("reinforce", False, "Simulate memini's access-count reinforcement on the hybrid path "
                              "(a memini quirk: each returned memory's access count +1, raising its quality in later "
                              "recalls).")
    rrf_k: float = setting("rrf-k", DEFAULT_RRF_K, "RRF's k with -fusion < 0: each leg adds 1/(k + rank0); memini's "
                           "5 is steep, 60 (Cormack et al.) flat.", type=Real(min=0, min_open=True, max=1e6))

    def __post_init__(self) -> None:
        _fusion(self.fusion)
        if self.keyword_backend not in KEYWORD_BACKENDS:
            raise BenchError(f"-keyword-backend {self.keyword_backend!r}: unknown; use numpy or fts5")
        if self.semantic_reserve < 0:
            raise BenchError(f"-semantic-reserve {self.semantic_reserve}: must be 0 (off) or a positive count")
        if self.pool and (self.pool_factor or self.pool_floor):
            raise BenchError(f"-pool {self.pool}: sets each leg's depth itself; drop -pool-factor / -pool-floor")
        if not self.rrf_k > 0:
            raise BenchError(f"-rrf-k {self.rrf_k:g}: must be above 0 (memini's is 5)")
        if self.rrf_k != DEFAULT_RRF_K and self.fusion >= 0:
            raise BenchError(f"-rrf-k {self.rrf_k:g}: RRF's k, used only with RRF fusion; add -fusion -1 (or drop "
                             "-rrf-k for score fusion)")

    def as_dict(self) -> dict[str, object]:
        """Every setting, but a field of ``LATE_FIELDS`` only when it is not its default: the identity and config of
        every results file made before that field existed stay what they were (``results.identity``)."""
        settings = asdict(self)
        for name, default in LATE_FIELDS.items():
            if settings[name] == default:
                del settings[name]
        return settings

    def leg_depth(self, k: int) -> int:
        """Each leg's depth for a recall of ``k``: ``pool`` when set, else ``max(k * factor, floor)``."""
        return self.pool or pool_size(k, self.pool_factor, self.pool_floor)

    def floor_note(self, ks: Sequence[int]) -> str:
        """A note when ``-pool-floor`` is at or below ``k * factor`` for every K (it then changes nothing)."""
        if not self.pool_floor or self.pool:
            return ""
        factor = self.pool_factor or DEFAULT_POOL_FACTOR
        if all(self.pool_floor <= k * factor for k in ks):
            return (f"-pool-floor {self.pool_floor} has no effect: the pool is k x {factor} >= {self.pool_floor} "
                    f"for every K in {','.join(map(str, ks))}")
        return ""


# Hybrid settings added after results files were committed, with their defaults: recorded only when set.
LATE_FIELDS: dict[str, object] = {"rrf_k": DEFAULT_RRF_K}


def pool_size(k: int, factor: int = 0, floor: int = 0) -> int:
    """memini's RecallPoolSize: ``max(k * factor, floor)``, factor 5 and floor 50 unless given (> 0)."""
    return max(k * (factor if factor > 0 else DEFAULT_POOL_FACTOR), floor if floor > 0 else DEFAULT_POOL_FLOOR)


def clamp_limit(k: int) -> int:
    """memini's clamp: 0 (or less) means 10, above 100 means 100."""
    return 10 if k <= 0 else min(k, MAX_RECALL_LIMIT)


class MeminiBackend:
    """The store the three memini systems share: ingested once (the first system pays, as with memini's
    sync.Once), holding the global keyword index, the item vectors and the access counters.

    ``reference=True`` runs the plain implementations of ``retrieval.reference`` (dict fusion, full quality
    maths, regex dedup keys on first touch) instead of the fast ones; both give the same ids and scores."""

    def __init__(self, encoder: TextEncoder | None, keyword_backend: str = "numpy", *,
                 reference: bool = False) -> None:
        if keyword_backend not in KEYWORD_BACKENDS:
            raise BenchError(f"-keyword-backend {keyword_backend!r}: unknown; use numpy or fts5")
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

    @property
    def ingested(self) -> bool:
        return self.keyword is not None

    def ingest(self, items: Sequence[Item]) -> None:
        if self.ingested:
            return
        self.items = tuple(items)
        contents = [it.content for it in self.items]
        groups = [it.group for it in self.items]
        if self.encoder is not None:  # a forking embedder works on the other core while the indexes are built
            self.encoder.start_documents(contents)
        t0 = time.perf_counter()
        plain = self.reference and self.keyword_backend == "numpy"
        self.keyword = (_reference.ReferenceBM25 if plain else KEYWORD_BACKENDS[self.keyword_backend])(contents, groups)
        t1 = time.perf_counter()
        self.timings_ms["keyword_index_ms"] = (t1 - t0) * 1e3
        if not self.reference:
            self._dedup_ids = comp.dedup_key_ids(contents)
            self.timings_ms["dedup_keys_ms"] = (time.perf_counter() - t1) * 1e3
        if self.encoder is not None:
            t1 = time.perf_counter()
            index = _reference.ReferenceVectorIndex if self.reference else VectorIndex
            self.vector = index(self.encoder.documents(contents), groups)
            self.timings_ms["embed_ms"] = (time.perf_counter() - t1) * 1e3  # with a background job: the wait for it
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
        assert self.keyword is not None, "ingest first"
        return self.keyword.search(group, query, k)

    def vector_leg(self, group: str, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
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
    """One of memini's systems over the shared backend; ``uses`` names the backend timings its ingest stands for."""

    uses: tuple[str, ...] = ()

    def __init__(self, backend: MeminiBackend, name: str) -> None:
        self.backend = backend
        self.name = name

    def ingest(self, items: Sequence[Item]) -> None:
        self.backend.ingest(items)

    def prepare(self, queries: Sequence[str]) -> None:
        self.backend.prepare(queries)

    @property
    def ingest_time_ms(self) -> float:
        return sum(self.backend.timings_ms.get(key, 0.0) for key in self.uses)

    def describe(self) -> dict:
        return {"keyword_backend": self.backend.keyword_backend}


class KeywordSystem(_BackendSystem):
    uses = ("keyword_index_ms",)

    def __init__(self, backend: MeminiBackend, name: str = "memini-keyword") -> None:
        super().__init__(backend, name)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        return self.backend.hits(*self.backend.keyword_leg(group, query, k))


class VectorSystem(_BackendSystem):
    uses = ("embed_ms",)

    def __init__(self, backend: MeminiBackend, name: str = "memini-vector") -> None:
        super().__init__(backend, name)

    def recall(self, group: str, query: str, k: int, *, now: datetime | None = None,
               context: Mapping[str, object] | None = None) -> list[Hit]:
        return self.backend.hits(*self.backend.vector_leg(group, query, k))


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
    config: HybridConfig = ctx.options.hybrid
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
    return _named(HybridSystem(_backend(ctx, vectors=True), ctx.options.hybrid), ctx)


def make_vector(ctx: SystemContext) -> System:
    return _named(VectorSystem(_backend(ctx, vectors=True)), ctx)


def make_keyword(ctx: SystemContext) -> System:
    return _named(KeywordSystem(_backend(ctx, vectors=False)), ctx)
