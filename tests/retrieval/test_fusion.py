"""Fusion and the hybrid pipeline's math on hand-computed cases (behaviour doc section 5)."""

from __future__ import annotations

import numpy as np
import pytest

from memini_bench.retrieval.composite import dedup, normalize_content, qualities, rerank
from memini_bench.retrieval.fusion import fuse_legs, fuse_rrf, fuse_scores, min_max
from memini_bench.systems.config import clamp_limit, pool_size


def _r(ids, scores):
    return np.array(ids, dtype=np.int64), np.array(scores, dtype=np.float64)


def test_min_max_and_all_equal():
    np.testing.assert_allclose(min_max(np.array([4.0, 2.0, 3.0])), [1.0, 0.0, 0.5])
    np.testing.assert_allclose(min_max(np.array([0.7, 0.7])), [1.0, 1.0])
    np.testing.assert_allclose(min_max(np.array([0.2])), [1.0])


def test_score_fusion_hand_computed():
    vec = _r([1, 2, 3], [4.0, 2.0, 0.0])  # norms 1, .5, 0
    kw = _r([3, 4, 1], [9.0, 5.0, 1.0])  # norms 1, .5, 0
    ids, fused = fuse_legs(vec, kw, 0.5)
    # 1: .5*1 + .5*0 = .5 ; 2: .25 ; 3: 0 + .5 = .5 ; 4: .25 -> ties keep first-seen order (vector first)
    assert ids.tolist() == [1, 3, 2, 4]
    np.testing.assert_allclose(fused, [0.5, 0.5, 0.25, 0.25])
    ids, fused = fuse_scores([vec, kw], [0.8, 0.2])
    assert ids.tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(fused, [0.8, 0.4, 0.2, 0.1])


def test_rrf_hand_computed():
    ids, fused = fuse_legs(_r([1, 2], [0.9, 0.1]), _r([2, 3], [5.0, 1.0]), -1)
    # 1: 1/5 ; 2: 1/6 + 1/5 ; 3: 1/6
    assert ids.tolist() == [2, 1, 3]
    np.testing.assert_allclose(fused, [1 / 6 + 1 / 5, 1 / 5, 1 / 6])
    assert fuse_rrf([_r([], [])])[0].tolist() == []


def test_empty_leg_contributes_nothing():
    ids, fused = fuse_legs(_r([5, 6], [0.8, 0.4]), _r([], []), 0.5)
    assert ids.tolist() == [5, 6]
    np.testing.assert_allclose(fused, [0.5, 0.0])


def test_composite_keeps_order_with_uniform_quality_and_reinforcement_lifts():
    ids, fused = _r([7, 8, 9], [0.9, 0.6, 0.5])
    q = qualities(["semantic"] * 3, np.zeros(3), np.full(3, np.nan), np.zeros(3, dtype=np.int64), np.zeros(3))
    np.testing.assert_allclose(q, 0.45)
    out_ids, comp = rerank(ids, fused, q)
    assert out_ids.tolist() == [7, 8, 9]
    np.testing.assert_allclose(comp, [1.0, 0.6 / 0.9, 0.5 / 0.9])
    # One access: quality 0.45 * (1 + ln 2); the others' factor is 0.8 + 0.2 * 0.45 / 0.762 (doc: ~0.918).
    q = qualities(["semantic"] * 3, np.zeros(3), np.full(3, np.nan), np.array([0, 0, 1]), np.zeros(3))
    out_ids, comp = rerank(ids, fused, q)
    factor = 0.8 + 0.2 * 1 / (1 + np.log(2))
    assert factor == pytest.approx(0.918, abs=1e-3)
    np.testing.assert_allclose(comp, [factor, 0.6 / 0.9 * factor, 0.5 / 0.9])


def test_tier_quality_terms():
    q = qualities(["procedural", "semantic", "episodic", "working", "other"], np.array([1.0, 0, 0, 0, 0]),
                  np.array([np.nan, 0.5, 0.5, np.nan, np.nan]), np.zeros(5, dtype=np.int64),
                  np.array([0.0, 3 * 7 * 86400, 7 * 86400, 0, 0]))
    # salience: .95*(.5+.5) ; .9*.5 with confidence .5 decayed 2 weeks past grace -> .4 ; episodic .55*.5*e^-1
    np.testing.assert_allclose(q, [0.95, 0.45 * 0.4, 0.275 * np.exp(-1), 0.15, 0.25])


def test_dedup_normalized_content():
    assert normalize_content("  Hello\n  World ") == "hello world"
    assert dedup([normalize_content(c) for c in ["A  b", "a b", "c", "d"]], 2) == [0, 2]


def test_pool_and_clamp():
    assert pool_size(5) == pool_size(10) == 50 and pool_size(20) == 100
    assert pool_size(10, 8, 30) == 80 and pool_size(2, 3, 7) == 7
    assert clamp_limit(0) == 10 and clamp_limit(500) == 100 and clamp_limit(7) == 7
