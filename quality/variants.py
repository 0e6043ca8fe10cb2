"""The scoreboard's hybrid variants (``-variants``): memini's current hybrid, its pre-fix baseline and two gate probes.

memini publishes its scoreboard twice (behaviour doc section 13 and the bench README): before and after one fix
that changed two things at once, and it names two gate settings it benched but did not take. Each is a variant:

- ``fixed`` (memini's current code, the scoreboard's default): relevance-modulated composite
  ``rel * (0.8 + 0.2 * qhat)`` (``retrieval.composite``); reserve gate ``bar = max(0.5 * evictee, 0.4 * top)``.
- ``pre-fix`` (memini's rank.go@c0fc5f1d and its older ``reserveDurableTiers(ranked, limit, reserve, ratio,
  gatePct)``, which had no top anchor): additive composite ``0.8 * rel + 0.2 * qhat``, so every candidate gets up
  to ``0.2`` for quality whatever its relevance (durables, with the higher tier weight, a flat floor); gate
  ``bar = 0.6 * evictee``. memini's "reserve=0 reference in parentheses" is this variant's ``reserve=0`` row.
- ``ratio0.4`` (probe): the fixed hybrid with the evictee-relative leg at 0.4: ``max(0.4 * evictee, 0.4 * top)``
  (memini: it would recover bge-small's three missing facts for +1 injection; not taken).
- ``anchor-only`` (probe): the fixed hybrid without the evictee-relative leg: ``bar = 0.4 * top`` (memini: with it
  removed the spray regression leaks an off-topic durable at 0.38x the window top).

    rel_i  = score_i / max(score)   (0 when max <= 0)       qhat_i = Quality_i / max(Quality)   (1 when all 0)

Both composites use memini's Quality (``MeminiBackend.qualities``); the sort is stable (ties keep the fused order).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memini_bench.errors import BenchError
from memini_bench.retrieval.composite import DEFAULT_WEIGHTS
from memini_bench.retrieval.reserve import PROMOTE_RATIO, TOP_ANCHOR
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, MeminiBackend


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    additive: bool = False
    ratio: float = PROMOTE_RATIO
    top_anchor: float = TOP_ANCHOR
    help: str = ""

    def describe(self) -> dict[str, object]:
        return {"composite": "additive" if self.additive else "relevance-modulated", "ratio": self.ratio,
                "top_anchor": self.top_anchor}


DEFAULT = "fixed"
VARIANTS = {v.name: v for v in (
    Variant("fixed", help="memini's current hybrid"),
    Variant("pre-fix", additive=True, ratio=0.6, top_anchor=0.0, help="additive composite, gate 0.6 x evictee"),
    Variant("ratio0.4", ratio=0.4, help="gate max(0.4 x evictee, 0.4 x top)"),
    Variant("anchor-only", ratio=0.0, help="gate 0.4 x top only"),
)}


def parse(text: str) -> list[Variant]:
    """``fixed,pre-fix,...`` as variants, in the order given; an unknown or empty list is a BenchError."""
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise BenchError(f"-variants: name at least one of {', '.join(VARIANTS)}")
    for name in names:
        if name not in VARIANTS:
            raise BenchError(f"-variants {name!r}: unknown; use one of {', '.join(VARIANTS)}")
    return [VARIANTS[n] for n in names]


def additive_composite(scores: np.ndarray, quality: np.ndarray, relevance: float = DEFAULT_WEIGHTS.relevance,
                       quality_w: float = DEFAULT_WEIGHTS.quality) -> np.ndarray:
    """memini's pre-fix composite: ``relevance * rel + quality_w * qhat``."""
    top = scores.max() if len(scores) else 0.0
    rel = scores / top if top > 0 else np.zeros_like(scores)
    qmax = quality.max() if len(quality) else 0.0
    qhat = quality / qmax if qmax > 0 else np.ones_like(quality)
    return relevance * rel + quality_w * qhat


class AdditiveBackend(MeminiBackend):
    """The memini store with the pre-fix composite re-rank."""

    def rerank(self, ids: np.ndarray, scores: np.ndarray, now: datetime | None) -> tuple[np.ndarray, np.ndarray]:
        comp = additive_composite(scores, self.qualities(ids, now))
        order = np.argsort(-comp, kind="stable")
        return ids[order], comp[order]


def hybrid(variant: Variant, encoder, settings: HybridConfig, name: str) -> HybridSystem:
    """A fresh store and memini's hybrid, with the variant's composite and reserve gate."""
    backend = (AdditiveBackend if variant.additive else MeminiBackend)(encoder, settings.keyword_backend)
    system = HybridSystem(backend, settings, name=name)
    system.reserve_ratio, system.reserve_top_anchor = variant.ratio, variant.top_anchor
    return system
