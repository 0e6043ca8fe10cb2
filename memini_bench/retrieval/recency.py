"""Recency decay and memini's ``-rerank`` strategies (``bench/recency.go → RerankCompare``).

    recency_i = exp(-max(now - t_i, 0) / 7 days)     (memini's Memory.Recency; 7 d is an e-folding time,
                                                      the code calls it a half-life; the true one is ~4.85 d)

Each strategy re-ranks the same fused list with ``retrieval.composite`` (quality weight 0, so
``composite = relevance * rel + recency_w * recency + importance_w * clamp01(importance)``) and, for
``temporal0.40``, then applies the temporal boost (``retrieval.temporal``):

    name          relevance  recency  importance  temporal boost
    rrf           1          0        0           -
    recency0.05   0.80       0.05     0.15        -
    recency0.15   0.75       0.15     0.10        -
    recency0.25   0.60       0.25     0.15        -
    temporal0.40  0.80       0.05     0.15        0.40
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from memini_bench.retrieval import composite as comp
from memini_bench.retrieval.temporal import Anchor, temporal_rerank

RECENCY_TAU_S = 7 * 86400.0
# memini's rerankFallbackTime: an item (or question) without a date is grounded here.
FALLBACK_TIME = datetime(2023, 1, 1, tzinfo=UTC)


def recency(age_s: np.ndarray) -> np.ndarray:
    """``exp(-max(age, 0) / 7 days)`` for ages in seconds."""
    return np.exp(-np.maximum(age_s, 0.0) / RECENCY_TAU_S)


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    weights: comp.RerankWeights
    temporal_boost: float = 0.0


STRATEGIES = (
    Strategy("rrf", comp.RerankWeights(relevance=1.0, quality=0.0)),
    Strategy("recency0.05", comp.RerankWeights(relevance=0.80, quality=0.0, recency=0.05, importance=0.15)),
    Strategy("recency0.15", comp.RerankWeights(relevance=0.75, quality=0.0, recency=0.15, importance=0.10)),
    Strategy("recency0.25", comp.RerankWeights(relevance=0.60, quality=0.0, recency=0.25, importance=0.15)),
    Strategy("temporal0.40", comp.RerankWeights(relevance=0.80, quality=0.0, recency=0.05, importance=0.15), 0.40),
)


def rank(strategy: Strategy, ids: np.ndarray, fused: np.ndarray, *, dates_s: np.ndarray, importance: np.ndarray,
         now: datetime, anchor: Anchor | None) -> np.ndarray:
    """The candidate ids in ``strategy``'s order (``dates_s``: item dates in epoch seconds): ``composite.rerank``
    with the strategy's weights, then, for a temporal strategy, the boost."""
    order, scores = comp.rerank(np.arange(len(ids)), fused, np.zeros(len(ids)), strategy.weights,
                                recency=recency(now.timestamp() - dates_s), importance=importance)
    ranked = ids[order]
    if strategy.temporal_boost > 0:
        ranked, scores = temporal_rerank(ranked, scores, dates_s[order], anchor, now, strategy.temporal_boost)
    return ranked
