"""The settings of memini's hybrid and of the store its three systems share (``HybridConfig``, each field a CLI
flag), and memini's recall arithmetic: ``pool_size`` (each leg's depth ``max(k * factor, floor)``, 5 and 50) and
``clamp_limit`` (k clamped to [1, 100], 0 -> 10). Read by ``systems.memini``, the sweep, the results identity and
every mode that runs the hybrid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import click

from memini_bench.core.settings import Int, Real, setting
from memini_bench.errors import BenchError
from memini_bench.retrieval.defaults import DEFAULT_ALPHA, DEFAULT_RRF_K, EXTRACTOR_NAMES, KEYWORD_BACKENDS

if TYPE_CHECKING:
    from memini_bench.retrieval.keyword import KeywordIndex

MAX_RECALL_LIMIT = 100
DEFAULT_POOL_FACTOR = 5
DEFAULT_POOL_FLOOR = 50


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

    GROUP = "hybrid"

    fusion: float = setting("fusion", DEFAULT_ALPHA, "Hybrid alpha: in [0, 1] min-max score fusion with this vector "
                            "weight; < 0 RRF (rrfK 5, or -rrf-k).", type=Fusion(), token="fusion")
    pool: int = setting("pool", 0, "Hybrid per-leg depth itself (memini's sweep's pool); 0 = max(k*factor, floor).",
                        type=Int(min=0, max=100000), token="pool")
    pool_factor: int = setting("pool-factor", 0, "Hybrid per-leg pool = max(k*factor, floor); 0 = memini's 5.",
                               type=Int(min=0, max=1000), token="pf")
    pool_floor: int = setting("pool-floor", 0, "Hybrid per-leg pool floor; 0 = memini's 50.",
                              type=Int(min=0, max=100000), token="pfloor")
    temporal_boost: float = setting("temporal-boost", 0.0, "Hybrid temporal targeting: score x (1 + B x proximity "
                                    "to the time the query names); 0 = off (memini's bench; its server uses 0.40).",
                                    type=Real(min=0, max=100), token="tboost")
    temporal_extractor: str = setting("temporal-extractor", "regex", "Time-phrase extractor for the temporal "
                                      "boost: memini's regex, or extended (+ day-month-year dates, spelled-out/vague "
                                      "counts, weekdays, spans), or llm (a chat completion per query through "
                                      "MEMINI_LLM_*).", type=click.Choice(list(EXTRACTOR_NAMES)),
                                      token="tx-")
    semantic_reserve: int = setting("semantic-reserve", 0, "Hybrid durable-tier reserve: keep up to R "
                                    "semantic/procedural memories in the top k when they clear the gate max(0.5 x "
                                    "evictee, 0.4 x top-1); 0 = off (memini's bench; its server uses 2).",
                                    type=Int(min=0, max=100), token="reserve")
    keyword_backend: str = setting("keyword-backend", "numpy", "BM25 backend: in-process numpy (default) or SQLite "
                                   "FTS5 (the reference).", type=click.Choice(list(KEYWORD_BACKENDS)), token="kw-")
    reinforce: bool = setting("reinforce", False, "Simulate memini's access-count reinforcement on the hybrid path "
                              "(a memini quirk: each returned memory's access count +1, raising its quality in later "
                              "recalls).", token="reinforce")
    rrf_k: float = setting("rrf-k", DEFAULT_RRF_K, "RRF's k with -fusion < 0: each leg adds 1/(k + rank0); memini's "
                           "5 is steep, 60 (Cormack et al.) flat.", type=Real(min=0, min_open=True, max=1e6),
                           token="rrfk")

    def __post_init__(self) -> None:
        _fusion(self.fusion)
        check_keyword_backend(self.keyword_backend)
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


def keyword_index(name: str, contents: Sequence[str], groups: Sequence[str]) -> KeywordIndex:
    """The BM25 index ``-keyword-backend NAME`` names (``KEYWORD_BACKENDS``) over ``contents`` in ``groups``."""
    check_keyword_backend(name)
    if name == "fts5":
        from memini_bench.retrieval.keyword_fts5 import FTS5BM25

        return FTS5BM25(contents, groups)
    from memini_bench.retrieval.keyword import NumpyBM25

    return NumpyBM25(contents, groups)


def check_keyword_backend(name: str) -> None:
    """Refuse a keyword backend that is not one of ``KEYWORD_BACKENDS``."""
    if name not in KEYWORD_BACKENDS:
        raise BenchError(f"-keyword-backend {name!r}: unknown; use {' or '.join(KEYWORD_BACKENDS)}")


def pool_size(k: int, factor: int = 0, floor: int = 0) -> int:
    """memini's RecallPoolSize: ``max(k * factor, floor)``, factor 5 and floor 50 unless given (> 0)."""
    return max(k * (factor if factor > 0 else DEFAULT_POOL_FACTOR), floor if floor > 0 else DEFAULT_POOL_FLOOR)


def clamp_limit(k: int) -> int:
    """memini's clamp: 0 (or less) means 10, above 100 means 100."""
    return 10 if k <= 0 else min(k, MAX_RECALL_LIMIT)
