"""Fusing ranked lists (memini ``search.FuseScores`` and ``search.Fuse``).

Each input list is (ids, scores) in rank order. Output: (ids, fused scores) sorted by fused score descending,
ties broken by first-seen position (the first list in its order, then ids new in the second list, ...).

- ``fuse_scores`` (min-max convex): per list, ``norm = (s - lo) / (hi - lo)`` over that list's own items, or 1.0
  for every item when ``hi == lo``; ``fused(d) = sum_l w_l * norm_l(d)``, a list that lacks d adds 0.
- ``fuse_rrf``: ``fused(d) = sum_l 1 / (rrf_k + rank0_l(d))`` with 0-based ranks (memini's rrfK = 5).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_ALPHA = 0.5
DEFAULT_RRF_K = 5.0

Ranked = tuple[np.ndarray, np.ndarray]


def _accumulate(contributions: Sequence[tuple[np.ndarray, np.ndarray]]) -> Ranked:
    """Sum per-id contributions, remember first-seen order, sort stably by total descending."""
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


def min_max(scores: np.ndarray) -> np.ndarray:
    """``(s - lo) / (hi - lo)``, or all ones when every score is equal (one candidate included)."""
    if not len(scores):
        return scores
    lo, hi = scores.min(), scores.max()
    return (scores - lo) / (hi - lo) if hi > lo else np.ones_like(scores)


def fuse_scores(lists: Sequence[Ranked], weights: Sequence[float]) -> Ranked:
    return _accumulate([(ids, w * min_max(scores)) for (ids, scores), w in zip(lists, weights, strict=True)])


def fuse_rrf(lists: Sequence[Ranked], rrf_k: float = DEFAULT_RRF_K) -> Ranked:
    return _accumulate([(ids, 1.0 / (rrf_k + np.arange(len(ids), dtype=np.float64))) for ids, _ in lists])


def fuse_legs(vector: Ranked, keyword: Ranked, alpha: float = DEFAULT_ALPHA) -> Ranked:
    """memini's fuseLegs: alpha >= 0 is score fusion with weights [alpha, 1 - alpha] on [vector, keyword];
    alpha < 0 is RRF with rrfK 5. The vector list comes first, so it wins ties."""
    if alpha < 0:
        return fuse_rrf([vector, keyword])
    return fuse_scores([vector, keyword], [alpha, 1.0 - alpha])
