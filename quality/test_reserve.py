"""The durable reserve gate (``retrieval.reserve``) and its place in hybrid recall, on hand-computed windows.

Notation: ``E`` an episodic (non-durable) candidate, ``D`` a durable one; scores are composite scores, best first.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from memini_bench.core.dataset import Item
from memini_bench.retrieval import composite as comp
from memini_bench.retrieval.reserve import reserve_order
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.memini import HybridSystem, MeminiBackend

E, D = False, True


def test_promotes_a_durable_directly_below_the_top_hit():
    # window [0..4] all E; candidate 5 (D, 0.55) vs evictee 4 (0.6): bar max(0.5*0.6, 0.4*1.0) = 0.4 -> promoted.
    order = reserve_order([1.0, 0.9, 0.8, 0.7, 0.6, 0.55, 0.5], [E, E, E, E, E, D, E], limit=5, reserve=2)
    assert order == [0, 5, 1, 2, 3, 4, 6]
    assert order[:5] == [0, 5, 1, 2, 3]  # after the cut: the lowest E (4) was evicted


def test_refused_at_the_top_anchor_leg():
    # bar = max(0.5*0.6, 0.4*1.0) = 0.4: 0.39 is refused, 0.4 (exactly the bar) is promoted.
    scores = [1.0, 0.9, 0.8, 0.7, 0.6, 0.39]
    assert reserve_order(scores, [E] * 5 + [D], 5, 2) == list(range(6))
    assert reserve_order(scores[:5] + [0.4], [E] * 5 + [D], 5, 2) == [0, 5, 1, 2, 3, 4]


def test_refused_at_the_evictee_leg():
    # evictee 4 scores 0.92: bar max(0.46, 0.4) = 0.46 -> 0.45 refused, 0.46 promoted.
    scores = [1.0, 0.95, 0.94, 0.93, 0.92, 0.45]
    assert reserve_order(scores, [E] * 5 + [D], 5, 2) == list(range(6))
    assert reserve_order(scores[:5] + [0.46], [E] * 5 + [D], 5, 2) == [0, 5, 1, 2, 3, 4]


def test_the_bar_rises_as_evictions_climb_the_window():
    # 1st: D 0.47 vs evictee 4 (0.5): bar max(0.25, 0.4) = 0.4 -> in.
    # 2nd: D 0.46 vs evictee 3 (0.94): bar max(0.47, 0.4) = 0.47 -> out, and the walk stops.
    order = reserve_order([1.0, 0.98, 0.96, 0.94, 0.5, 0.47, 0.46], [E, E, E, E, E, D, D], 5, 2)
    assert order == [0, 5, 1, 2, 3, 4, 6]


def test_two_promotions_keep_walk_order_below_the_top():
    # D 0.44 evicts 4 (0.45), then D 0.43 evicts 3 (0.5); both bars are the anchor 0.4.
    order = reserve_order([1.0, 0.9, 0.8, 0.5, 0.45, 0.44, 0.43], [E, E, E, E, E, D, D], 5, 2)
    assert order == [0, 5, 6, 1, 2, 3, 4]


def test_the_walk_skips_non_durables_and_stops_at_the_first_refused_durable():
    # 5 is E (skipped); D 6 (0.3) is refused (bar 0.4), so D 7 is never considered even though the walk could
    # reach it: memini stops at the first refusal.
    order = reserve_order([1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.3], [E, E, E, E, E, E, D, D], 5, 1)
    assert order == list(range(8))


def test_no_op_cases():
    scores, tiers = [1.0, 0.9, 0.8, 0.7, 0.6, 0.55], [E, E, E, E, E, D]
    assert reserve_order(scores, tiers, 5, 0) == list(range(6))  # reserve off
    assert reserve_order(scores[:5], tiers[:5], 5, 2) == list(range(5))  # pool no deeper than the window
    assert reserve_order(scores, tiers, 0, 2) == list(range(6))  # no window
    # the window already holds 2 durables
    assert reserve_order(scores, [D, E, E, D, E, D], 5, 2) == list(range(6))


def test_a_durable_top_hit_counts_and_stays():
    # window holds D at 0 (count 1 < 2); D 5 (0.55) evicts the lowest E (4).
    order = reserve_order([1.0, 0.9, 0.8, 0.7, 0.6, 0.55], [D, E, E, E, E, D], 5, 2)
    assert order == [0, 5, 1, 2, 3, 4]


def test_the_top_hit_is_never_displaced_when_reserve_is_below_limit():
    # window [E, D, D, D, E], reserve 4: D 5 evicts 4 (the lowest E), never the top E.
    order = reserve_order([1.0, 0.9, 0.8, 0.7, 0.6, 0.59, 0.58], [E, D, D, D, E, D, D], 5, 4)
    assert order[:5] == [0, 5, 1, 2, 3]


def test_memini_quirk_reserve_at_limit_can_evict_a_lone_non_durable_top():
    # reserve 5 = limit: after evicting 4, the only E left in the window is the top (1.0); D 6 (0.58) clears
    # max(0.5*1.0, 0.4*1.0) = 0.5, so memini evicts the top and the first selected window entry (1) leads.
    order = reserve_order([1.0, 0.9, 0.8, 0.7, 0.6, 0.59, 0.58], [E, D, D, D, E, D, D], 5, 5)
    assert order == [1, 5, 6, 2, 3, 0, 4]


def test_reserve_is_capped_at_limit():
    # r = 3: D 0.7 evicts 2 (bar 0.4), D 0.65 evicts 1 (bar 0.45), D 0.45 is refused (bar max(0.5, 0.4) = 0.5).
    scores, tiers = [1.0, 0.9, 0.8, 0.7, 0.65, 0.45], [E, E, E, D, D, D]
    assert reserve_order(scores, tiers, 3, 10) == reserve_order(scores, tiers, 3, 3) == [0, 3, 4, 1, 2, 5]


def test_ratio_bar_gates_promotion():
    # window [1.0, 0.8, 0.6, 0.4, 0.2]: evictee 0.2, bar max(0.5 x 0.2, 0.4 x 1.0) = 0.4
    scores, tiers = [1.0, 0.8, 0.6, 0.4, 0.2, 0.55], [E, E, E, E, E, D]
    assert reserve_order(scores, tiers, 5, 1) == [0, 5, 1, 2, 3, 4]
    assert reserve_order([1.0, 0.8, 0.6, 0.4, 0.2, 0.39], tiers, 5, 1) == list(range(6))


class _FixedRanking(HybridSystem):
    """Hybrid recall whose composite-ranked list is given, to test what follows it (reserve, dedup, cut)."""

    def __init__(self, items: list[Item], ranking: list[int], scores: list[float], **kwargs) -> None:
        backend = MeminiBackend(None)
        backend.items = tuple(items)
        backend.access = np.zeros(len(items), dtype=np.int64)
        super().__init__(backend, HybridConfig(**kwargs))
        self._ranking = (np.array(ranking), np.array(scores))

    def ranked(self, group, query, k, now=None):
        return self._ranking


def _items() -> list[Item]:
    contents = ["a", "b", "B ", "c", "d", "the fact"]  # 2 duplicates 1 after normalization
    return [Item(str(i), c, tier="semantic" if i == 5 else "episodic") for i, c in enumerate(contents)]


@pytest.mark.parametrize(("fact_score", "expected"), [(0.41, ["0", "1", "3"]), (0.43, ["0", "5", "1"])])
def test_hybrid_order_is_composite_then_reserve_then_dedup_then_cut(fact_score, expected):
    # k 3, reserve 1. Reserve first sees the window [0, 1, 2]; its evictee is the duplicate 2 (0.85): bar
    # max(0.425, 0.4) = 0.425. So 0.41 is refused and dedup then yields [0, 1, 3]; 0.43 is promoted -> [0, 5, 1].
    # (Dedup first would have made 3 (0.8) the evictee, bar 0.4, and promoted 0.41 too.)
    system = _FixedRanking(_items(), [0, 1, 2, 3, 4, 5], [1.0, 0.9, 0.85, 0.8, 0.7, fact_score],
                           semantic_reserve=1, reinforce=True)
    hits = system.recall("", "q", 3)
    assert [h.ids[0] for h in hits] == expected
    assert system.backend.access.tolist() == [1 if str(i) in expected else 0 for i in range(6)]


def test_hybrid_without_reserve_keeps_the_composite_order():
    system = _FixedRanking(_items(), [0, 1, 2, 3, 4, 5], [1.0, 0.9, 0.85, 0.8, 0.7, 0.69])
    assert [h.ids[0] for h in system.recall("", "q", 3)] == ["0", "1", "3"]


def test_negative_reserve_is_refused():
    from memini_bench.errors import BenchError

    with pytest.raises(BenchError, match="semantic-reserve"):
        HybridConfig(semantic_reserve=-1)


def test_tier_quality_matches_memini():
    """memini's Quality, hand-computed: salience = tier weight * (0.5 + 0.5 importance), * confidence (durable,
    decayed 0.05/week after a week), * (1 + ln(1 + access)), * exp(-age / 7d) for short-term tiers."""
    week = 7 * 86400.0
    tiers = ["semantic", "episodic", "episodic", "procedural", "working", "semantic", "semantic", "mystery"]
    importance = np.array([0, 0, 0, 1, 0, 0, 0, 0], dtype=float)
    confidence = np.array([np.nan, 0.9, np.nan, np.nan, np.nan, 0.9, 0.3, np.nan])
    access = np.array([0, 0, 0, 0, 2, 0, 0, 1])
    age = np.array([0, 0, week, 0, 0, 3 * week, 30 * week, 0])
    expected = [
        0.45,  # semantic: 0.90 * 0.5
        0.275,  # episodic, confidence ignored for short-term tiers
        0.275 * math.exp(-1),  # episodic one week old
        0.95,  # procedural, importance 1
        0.15 * (1 + math.log(3)),  # working, accessed twice
        0.45 * (0.9 - 0.05 * 2),  # semantic, confidence 0.9 three weeks old
        0.45 * 0.05,  # floored confidence
        0.25 * (1 + math.log(2)),  # unknown tier: weight 0.5, no age decay
    ]
    assert comp.qualities(tiers, importance, confidence, access, age) == pytest.approx(expected)
