"""Fusing ranked lists (memini ``search.FuseScores`` and ``search.Fuse``).

Each input list is (ids, scores) in rank order. Output: (ids, fused scores) sorted by fused score descending,
ties broken by first-seen position (the first list in its order, then ids new in the second list, ...).

- ``fuse_scores`` (min-max convex): per list, ``norm = (s - lo) / (hi - lo)`` over that list's own items, or 1.0
  for every item when ``hi == lo``; ``fused(d) = sum_l w_l * norm_l(d)``, a list that lacks d adds 0.
- ``fuse_rrf``: ``fused(d) = sum_l 1 / (rrf_k + rank0_l(d))`` with 0-based ranks (memini's rrfK = 5; ``-rrf-k``
  sets it, e.g. 60, the flat decay of Cormack et al. that memini argues against). RRF never goes through the
  compiled kernel (it has no min-max step to speed up): every ``rrf_k`` takes the same Python/numpy path.

Three exact ways to the same floats: score fusion of two lists in one call of the compiled kernel
(``kernels.KERNELS.fuse_min_max``) where it was built; else, up to ``SHORT`` entries in all (memini's legs: 2 x 50
by default), Python floats and a dict (``_fuse_short``: numpy's per-call overhead would dominate such short lists);
longer, the array arithmetic of ``min_max`` and ``_accumulate``. Each element goes through the same IEEE-754
operations every way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memini_bench.retrieval import kernels
from memini_bench.retrieval.defaults import DEFAULT_ALPHA, DEFAULT_RRF_K

SHORT = 256  # entries in all lists up to which ``_fuse_short`` is used

Ranked = tuple[np.ndarray, np.ndarray]


def _accumulate(contributions: Sequence[tuple[np.ndarray, np.ndarray]]) -> Ranked:
    """Sum per-id contributions, remember first-seen order, sort stably by total descending: the floats of
    ``total[i] = total.get(i, 0.0) + v`` over the lists in order, without a Python dict."""
    if len(contributions) == 2:
        (first, first_values), (second, second_values) = contributions
        paired = _accumulate_pair(np.asarray(first, dtype=np.int64), np.asarray(first_values, dtype=np.float64),
                                  np.asarray(second, dtype=np.int64), np.asarray(second_values, dtype=np.float64))
        if paired is not None:
            return paired
    return _accumulate_repeats(contributions)


def _accumulate_pair(a: np.ndarray, va: np.ndarray, b: np.ndarray, vb: np.ndarray) -> Ranked | None:
    """Two lists, each without repeats (else None): a stable sort of all ids puts each shared id's entry from
    ``a`` right before its entry from ``b``; shared ids get ``(0.0 + va) + vb``, the rest ``0.0 + v``, in
    first-seen order (``a``, then the ids new in ``b``)."""
    n = len(a)
    ids = np.concatenate((a, b))
    by_id = np.argsort(ids, kind="stable")
    ordered = ids[by_id]
    pair = np.flatnonzero(ordered[1:] == ordered[:-1])
    at_a, at_b = by_id[pair], by_id[pair + 1] - n
    if len(pair) and ((at_a >= n).any() or (at_b < 0).any()):
        return None  # a list repeats an id
    totals = va + 0.0
    totals[at_a] += vb[at_b]
    new = np.ones(len(b), dtype=bool)
    new[at_b] = False
    ids = np.concatenate((a, b[new]))
    totals = np.concatenate((totals, vb[new] + 0.0))
    order = np.argsort(-totals, kind="stable")
    return ids[order], totals[order]


def _accumulate_repeats(contributions: Sequence[tuple[np.ndarray, np.ndarray]]) -> Ranked:
    """``_accumulate`` for any lists, repeats allowed: ``bincount`` adds each id's contributions in list order
    from 0.0, ``np.unique``'s first indices give first-seen order."""
    ids = np.concatenate([np.asarray(c[0], dtype=np.int64) for c in contributions])
    values = np.concatenate([np.asarray(c[1], dtype=np.float64) for c in contributions])
    if not len(ids):
        return np.zeros(0, np.int64), np.zeros(0)
    uniq, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    totals = np.bincount(inverse, weights=values, minlength=len(uniq))
    seen = np.argsort(first)
    ids, totals = uniq[seen], totals[seen]
    order = np.argsort(-totals, kind="stable")
    return ids[order], totals[order]


def min_max(scores: np.ndarray) -> np.ndarray:
    """``(s - lo) / (hi - lo)``, or all ones when every score is equal (one candidate included). An infinite score
    makes the span infinite and ``inf / inf`` NaN, by IEEE-754, exactly as the compiled kernel and the dict
    reference compute it: that NaN is the defined result (the run's hit checks refuse non-finite scores from a
    system before they get here), so numpy is told not to warn about it."""
    if not len(scores):
        return scores
    lo, hi = scores.min(), scores.max()
    if not hi > lo:
        return np.ones_like(scores)
    with np.errstate(invalid="ignore", over="ignore"):
        return (scores - lo) / (hi - lo)


def _scaled_short(scores: list[float], weight: float) -> list[float]:
    """``weight * min_max(scores)`` in Python floats (the caller has ruled out NaN)."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi > lo:
        span = hi - lo
        return [weight * ((s - lo) / span) for s in scores]
    return [weight * 1.0] * len(scores)


def _fuse_short(contributions: Sequence[tuple[list[int], list[float]]]) -> Ranked:
    """``_accumulate`` for short lists: ``total[i] = total.get(i, 0.0) + v`` in a dict (first-seen order), then
    the same stable sort."""
    total: dict[int, float] = {}
    for ids, values in contributions:
        for i, v in zip(ids, values, strict=True):
            total[i] = total.get(i, 0.0) + v
    ids_out = np.fromiter(total.keys(), dtype=np.int64, count=len(total))
    totals = np.fromiter(total.values(), dtype=np.float64, count=len(total))
    order = np.argsort(-totals, kind="stable")
    return ids_out[order], totals[order]


def _short(lists: Sequence[Ranked]) -> bool:
    return sum(len(ids) for ids, _ in lists) <= SHORT


def _fuse_compiled(lists: Sequence[Ranked], weights: Sequence[float]) -> Ranked | None:
    """Two lists through the compiled kernel; None where it is not built, or declines (a NaN score or total)."""
    compiled = kernels.KERNELS
    if compiled is None or len(lists) != 2:
        return None
    (a, a_scores), (b, b_scores) = lists
    room = len(a) + len(b)
    ids, totals = np.empty(room, dtype=np.int64), np.empty(room)
    n = compiled.fuse_min_max(np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(a_scores, dtype=np.float64),
                              float(weights[0]), np.ascontiguousarray(b, dtype=np.int64),
                              np.ascontiguousarray(b_scores, dtype=np.float64), float(weights[1]), ids, totals)
    return (ids[:n], totals[:n]) if n >= 0 else None


def fuse_scores(lists: Sequence[Ranked], weights: Sequence[float]) -> Ranked:
    fused = _fuse_compiled(lists, weights)
    if fused is not None:
        return fused
    if _short(lists):
        values = [scores.tolist() for _, scores in lists]
        if all(v == v for vs in values for v in vs):  # no NaN: Python's min and max then agree with numpy's
            return _fuse_short([(ids.tolist(), _scaled_short(vs, w))
                                for (ids, _), vs, w in zip(lists, values, weights, strict=True)])
    return _accumulate([(ids, w * min_max(scores)) for (ids, scores), w in zip(lists, weights, strict=True)])


def fuse_rrf(lists: Sequence[Ranked], rrf_k: float = DEFAULT_RRF_K) -> Ranked:
    if _short(lists):
        return _fuse_short([(ids.tolist(), [1.0 / (rrf_k + r) for r in range(len(ids))]) for ids, _ in lists])
    return _accumulate([(ids, 1.0 / (rrf_k + np.arange(len(ids), dtype=np.float64))) for ids, _ in lists])


def fuse_legs(vector: Ranked, keyword: Ranked, alpha: float = DEFAULT_ALPHA, rrf_k: float = DEFAULT_RRF_K) -> Ranked:
    """memini's fuseLegs: alpha >= 0 is score fusion with weights [alpha, 1 - alpha] on [vector, keyword];
    alpha < 0 is RRF with ``rrf_k`` (memini's rrfK 5). The vector list comes first, so it wins ties."""
    if alpha < 0:
        return fuse_rrf([vector, keyword], rrf_k)
    return fuse_scores([vector, keyword], [alpha, 1.0 - alpha])


def leg_confidence(scores: np.ndarray) -> float:
    """How far a leg's top score stands out of its own list, from the scores alone (no label): ``(top - mean) /
    (top - bottom)`` over the list, in [0, 1) (1 - the mean of the min-max normalised scores). A list whose top
    stands alone scores near 1; a flat list near 0. An empty list (the leg found nothing) scores 0, a single
    candidate 1, a list of equal scores 0."""
    if not len(scores):
        return 0.0
    if len(scores) == 1:
        return 1.0
    top, bottom = float(np.max(scores)), float(np.min(scores))
    if not top > bottom:
        return 0.0
    return (top - float(np.mean(scores))) / (top - bottom)


def adaptive_alpha(alpha: float, vector_scores: np.ndarray, keyword_scores: np.ndarray) -> float:
    """The vector-leg weight for one query, adapted without labels: the prior ``alpha`` (vector) and
    ``1 - alpha`` (keyword), each times its leg's ``leg_confidence``, renormalised to sum to 1:
    ``alpha * c_v / (alpha * c_v + (1 - alpha) * c_k)``; ``alpha`` itself where both products are 0."""
    weighted_v = alpha * leg_confidence(vector_scores)
    weighted_k = (1.0 - alpha) * leg_confidence(keyword_scores)
    total = weighted_v + weighted_k
    return alpha if not total > 0 else weighted_v / total
