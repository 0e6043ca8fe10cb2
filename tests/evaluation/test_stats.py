"""The significance tests against independent oracles: scipy's exact binomial test, a direct enumeration of
every outcome sequence, hand-computed cases, a normal approximation and a coverage simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from memini_bench.evaluation import stats
from memini_bench.evaluation.stats import (
    adjust,
    bootstrap_mean,
    compare,
    discordant,
    holm,
    mcnemar_exact,
    paired_bootstrap,
)


@pytest.mark.parametrize(("b", "c", "expected"), [
    (0, 0, 1.0),                   # no discordant pair: 1 by definition
    (1, 4, 2 * (1 + 5) / 2 ** 5),  # n = 5: 2 * (C(5,0) + C(5,1)) / 32 = 0.375
    (0, 6, 2 / 2 ** 6),            # 0.03125
    (6, 0, 2 / 2 ** 6),            # symmetric in b and c
    (3, 3, 1.0),                   # 2 * P(X <= 3 | n = 6) = 2 * 42 / 64 > 1, capped
    (2, 8, 2 * (1 + 10 + 45) / 2 ** 10),
])
def test_mcnemar_by_hand(b, c, expected):
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("b", "c"), [(b, c) for b in range(0, 31, 3) for c in range(0, 31, 4)]
                         + [(120, 150), (480, 520), (900, 1000), (1500, 1500), (30, 2000), (1234, 1321)])
def test_mcnemar_is_scipys_two_sided_exact_binomial(b, c):
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_mcnemar_far_tail_does_not_underflow():
    # The exact value 2 / 2^3000 is below the smallest double, so its correctly rounded float is 0.0 (no error,
    # no NaN); a small but representable tail over n = 3000 keeps full precision.
    assert mcnemar_exact(0, 3000) == 2 / 2 ** 3000 == 0.0
    assert mcnemar_exact(1400, 1600) == pytest.approx(binomtest(1400, 3000, 0.5).pvalue, rel=1e-9)
    assert 0 < mcnemar_exact(1400, 1600) < 3e-4


@pytest.mark.parametrize("n", range(1, 13))
def test_mcnemar_by_direct_enumeration(n):
    # Every one of the 2^n equally likely sign sequences of n discordant pairs; the two-sided p-value is the
    # share of sequences at least as unbalanced as the observed one.
    sequences = list(itertools.product((0, 1), repeat=n))
    for b in range(n + 1):
        c = n - b
        extreme = sum(1 for s in sequences if min(sum(s), n - sum(s)) <= min(b, c))
        assert mcnemar_exact(b, c) == pytest.approx(min(1.0, extreme / 2 ** n), rel=1e-12)


def test_discordant_counts_pairs():
    a = [1, 1, 0, 0, 1, 0, 1, 1]
    b = [1, 0, 1, 0, 0, 0, 0, 1]
    assert discordant(a, b) == (3, 1)
    assert discordant([True, False], [False, False]) == (1, 0)
    with pytest.raises(ValueError):
        discordant([1, 0], [1])


def test_holm_by_hand():
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> max with 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1, then monotone
    assert holm([0.2]) == [0.2]
    assert holm([]) == []


def test_holm_is_monotone_and_bounded():
    rng = np.random.default_rng(3)
    p = list(rng.random(50) ** 3)
    adj = holm(p)
    order = np.argsort(p, kind="stable")
    assert all(a >= raw for a, raw in zip(adj, p, strict=True)) and max(adj) <= 1.0
    assert all(np.diff(np.asarray(adj)[order]) >= 0)


def test_holm_matches_the_closed_testing_definition():
    """Holm's procedure is closed testing with Bonferroni local tests (Marcus, Peritz & Gabriel 1976): the adjusted p
    of hypothesis i is the largest, over every subset S holding i, of min(1, |S| * min_{j in S} p_j). Computed
    here by brute force over all subsets, independent of the step-down formula ``holm`` uses (this replaces an
    oracle that needed statsmodels, which no extra installs)."""
    from itertools import combinations

    rng = np.random.default_rng(5)
    for p in ([0.001, 0.2, 0.03, 0.04, 0.5, 0.012], list(rng.random(7) ** 2), [0.01, 0.01, 0.02]):
        m = len(p)
        oracle = [max(min(1.0, len(s) * min(p[j] for j in s)) for r in range(1, m + 1)
                      for s in combinations(range(m), r) if i in s) for i in range(m)]
        assert holm(p) == pytest.approx(oracle)


def test_bootstrap_is_deterministic_for_a_seed_and_independent_of_the_chunk_size(monkeypatch):
    rng = np.random.default_rng(0)
    a, b = rng.random(301), rng.random(301)
    first = paired_bootstrap(a, b, resamples=2000, seed=11)
    assert paired_bootstrap(a, b, resamples=2000, seed=11) == first
    assert paired_bootstrap(a, b, resamples=2000, seed=12) != first
    monkeypatch.setattr(stats, "CHUNK_ENTRIES", 301 * 7)  # 7 resamples a chunk, the last chunk partial
    assert paired_bootstrap(a, b, resamples=2000, seed=11) == first
    assert first.delta == pytest.approx(a.mean() - b.mean())
    assert first.low < first.delta < first.high


def test_bootstrap_identical_arms_give_zero_interval():
    values = [1.0, 0.0, 0.5, 0.25, 1.0]
    result = paired_bootstrap(values, values)
    assert (result.delta, result.low, result.high, result.p) == (0.0, 0.0, 0.0, 1.0)
    assert (result.resamples, result.seed, result.confidence) == (10_000, 0, 0.95)


def test_bootstrap_interval_matches_the_normal_approximation():
    # n = 2000 paired differences: the percentile interval is close to delta +- 1.96 * sd(d) / sqrt(n).
    rng = np.random.default_rng(5)
    a = (rng.random(2000) < 0.62).astype(float)
    b = np.where(rng.random(2000) < 0.8, a, (rng.random(2000) < 0.5).astype(float))
    d = a - b
    half = 1.959964 * d.std(ddof=1) / math.sqrt(len(d))
    result = paired_bootstrap(a, b)
    assert result.low == pytest.approx(d.mean() - half, abs=0.15 * half)
    assert result.high == pytest.approx(d.mean() + half, abs=0.15 * half)


def test_bootstrap_coverage_on_a_known_difference():
    # 200 synthetic paired samples with true delta = 0.10: a 95% interval must cover it about 95% of the time.
    rng = np.random.default_rng(7)
    covered = 0
    for trial in range(200):
        base = rng.random(300)
        a = (base < 0.60).astype(float)   # P(a = 1) = 0.60
        b = (base < 0.50).astype(float)   # P(b = 1) = 0.50, correlated with a through base
        flip = rng.random(300) < 0.2      # noise that keeps both means: swap the pair
        a[flip], b[flip] = b[flip], a[flip].copy()
        # E[a - b] = 0.8 * 0.10 - 0.2 * 0.10 = 0.06
        result = paired_bootstrap(a, b, resamples=2000, seed=trial)
        covered += result.low <= 0.06 <= result.high
    assert 0.90 <= covered / 200 <= 0.99


def test_bootstrap_p_value_tracks_the_interval():
    strong = paired_bootstrap([1.0] * 40 + [0.0] * 60, [0.0] * 100, resamples=999)
    assert strong.low > 0 and strong.p == pytest.approx(2 / 1000)
    noise = paired_bootstrap([1.0, 0.0] * 50, [0.0, 1.0] * 50, resamples=999)
    assert noise.low < 0 < noise.high and noise.p > 0.5


def test_bootstrap_mean_is_the_interval_of_one_arm():
    rng = np.random.default_rng(2)
    values = (rng.random(500) < 0.4).astype(float)
    interval = bootstrap_mean(values, resamples=3000, seed=4)
    assert interval == paired_bootstrap(values, [0.0] * 500, resamples=3000, seed=4)
    assert interval.delta == pytest.approx(values.mean())
    half = 1.959964 * values.std(ddof=1) / math.sqrt(500)  # the normal approximation's half-width
    assert interval.high - interval.low == pytest.approx(2 * half, rel=0.1)


def test_bootstrap_refuses_bad_input():
    with pytest.raises(ValueError):
        paired_bootstrap([], [])
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0], resamples=0)
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0], confidence=1.0)


def test_compare_binary_and_graded_then_holm():
    a = [1.0] * 30 + [0.0] * 70
    b = [1.0] * 20 + [0.0] * 10 + [1.0] * 2 + [0.0] * 68  # b = 10 (A only), c = 2 (B only)
    recall = compare("A", "B", "R@5", a, b, binary=True)
    assert (recall.only_a, recall.only_b, recall.test) == (10, 2, "mcnemar")
    assert recall.p == mcnemar_exact(10, 2) == pytest.approx(binomtest(10, 12, 0.5).pvalue)
    assert recall.delta == pytest.approx(0.08) and recall.mean_a == 0.3 and recall.mean_b == pytest.approx(0.22)
    graded = compare("A", "B", "MRR", [0.5, 1.0, 0.0, 0.2], [0.5, 0.5, 0.1, 0.2], binary=False, resamples=999)
    assert (graded.only_a, graded.only_b, graded.test) == (1, 1, "bootstrap")
    family = adjust([recall, graded])
    assert [c.p_adjusted for c in family] == pytest.approx(holm([recall.p, graded.p]))
    assert all(c.significant == (c.p_adjusted < 0.05) for c in family)
    assert recall.significant and not family[0].significant  # p = 0.039 alone, 0.077 after Holm over two
