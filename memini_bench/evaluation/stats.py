"""Significance of paired differences: exact McNemar, a paired bootstrap interval, Holm's step-down correction.

Two systems A and B answer the same n questions; ``a_i`` and ``b_i`` are a per-question metric of each (1/0 for
recall_any@K, a value in [0, 1] for MRR or nDCG@K). Every function here is pure; the bootstrap is seeded.

- **Exact McNemar** (memini's ``bench/stats.go`` McNemarExact): with b = #{i: a_i = 1, b_i = 0} and
  c = #{i: a_i = 0, b_i = 1} (the discordant pairs), n = b + c,
  ``p = min(1, 2 * sum_{i=0}^{min(b, c)} C(n, i) * 0.5^n)``, and p = 1 when n = 0. It is the two-sided exact
  binomial test of b ~ Binomial(n, 1/2) (scipy's ``binomtest(b, n, 0.5)``; the null distribution is symmetric).
- **Paired bootstrap** of the difference of means ``delta = mean(a) - mean(b) = mean(d)``, ``d_i = a_i - b_i``:
  R resamples of n question indices drawn uniformly with replacement (the same indices for both systems, which
  keeps the pairing), ``delta*_r = mean(d[idx_r])``; the interval is the percentile interval
  ``[q_{(1-conf)/2}, q_{(1+conf)/2}]`` of the ``delta*_r`` (numpy's linear-interpolation quantiles). Its two-sided
  p-value inverts that interval: ``p = min(1, 2 * (min(#{delta* <= 0}, #{delta* >= 0}) + 1) / (R + 1))``, the
  smallest level at which the percentile interval excludes 0 (the +1 keeps p >= 2 / (R + 1) > 0).
- **Holm** (Holm 1979, step-down Bonferroni) over m p-values sorted ascending ``p_(1) <= ... <= p_(m)``:
  ``adj_(j) = max_{i <= j} min(1, (m - i + 1) * p_(i))``, returned in the input order; it controls the
  family-wise error rate at alpha when every adjusted p below alpha is called significant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 0
# Index entries drawn per bootstrap chunk (int64: 8 bytes each): bounds the memory at ~32 MB whatever n and R are.
CHUNK_ENTRIES = 4_000_000


def discordant(a: Sequence[float], b: Sequence[float]) -> tuple[int, int]:
    """McNemar's (b, c) for paired binary outcomes: questions A gets right and B misses, and the reverse
    (a value counts as right when it is > 0.5, so 1.0/0.0 and True/False both work)."""
    x, y = _paired(a, b)
    xa, yb = x > 0.5, y > 0.5
    return int(np.count_nonzero(xa & ~yb)), int(np.count_nonzero(~xa & yb))


def mcnemar_exact(b: int, c: int) -> float:
    """memini's McNemarExact: ``min(1, 2 * sum_{i=0}^{min(b,c)} C(n, i) / 2^n)`` with n = b + c; 1 when n = 0.

    Computed in exact integer arithmetic (the binomial coefficients are built incrementally,
    ``C(n, i+1) = C(n, i) * (n - i) / (i + 1)``) and divided once, so the result is the correctly rounded float
    of the exact value for any n (no underflow of 0.5^n, no cancellation)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    term, tail = 1, 1  # C(n, 0)
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, (2 * tail) / (1 << n))


@dataclass(frozen=True, slots=True)
class BootstrapInterval:
    """The observed difference of means ``delta = mean(a) - mean(b)``, its percentile interval [low, high] at
    ``confidence`` from ``resamples`` paired resamples drawn with ``seed``, and the interval-inversion p-value."""

    delta: float
    low: float
    high: float
    p: float
    resamples: int
    seed: int
    confidence: float


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                     confidence: float = CONFIDENCE) -> BootstrapInterval:
    """Paired bootstrap of ``mean(a) - mean(b)`` (formulas in the module docstring).

    Deterministic for a given (a, b, resamples, seed). Resample indices are drawn in chunks of about
    ``CHUNK_ENTRIES`` entries, so memory stays bounded; identical arms give exactly [0, 0] and p = 1."""
    x, y = _paired(a, b)
    if len(x) == 0:
        raise ValueError("the bootstrap needs at least one paired question")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    d = x - y
    n = len(d)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, CHUNK_ENTRIES // n)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = d[idx].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    below, above = int(np.count_nonzero(means <= 0)), int(np.count_nonzero(means >= 0))
    p = min(1.0, 2 * (min(below, above) + 1) / (resamples + 1))
    return BootstrapInterval(delta=float(d.mean()), low=float(low), high=float(high), p=p, resamples=resamples,
                             seed=seed, confidence=confidence)


def bootstrap_mean(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                   confidence: float = CONFIDENCE) -> BootstrapInterval:
    """The percentile interval of one system's ``mean(values)`` (a sweep cell's error bar): the paired bootstrap
    against an all-zero arm, so ``delta`` is the mean itself."""
    return paired_bootstrap(values, np.zeros(len(values)), resamples=resamples, seed=seed, confidence=confidence)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (formula in the module docstring); monotone in the
    sorted order, each >= its raw p and <= 1. Ties keep their input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """One paired comparison of system A against system B on one metric over the same ``questions``.

    ``test`` is ``"mcnemar"`` (binary metrics: recall_any@K; ``only_a``/``only_b`` are McNemar's b and c) or
    ``"bootstrap"`` (graded metrics: MRR, nDCG@K; ``only_a``/``only_b`` count the questions where A, resp. B,
    scores strictly higher, for information). ``delta = mean_a - mean_b`` with its paired-bootstrap interval
    [ci_low, ci_high] (unadjusted); ``p`` is the test's raw p-value and ``p_adjusted`` the Holm-adjusted one
    across the family the comparison was made in (= p until :func:`adjust` runs); ``significant`` =
    ``p_adjusted < alpha``."""

    system_a: str
    system_b: str
    metric: str
    questions: int
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float
    ci_high: float
    test: str
    only_a: int
    only_b: int
    p: float
    p_adjusted: float
    significant: bool
    alpha: float = ALPHA


def compare(system_a: str, system_b: str, metric: str, a: Sequence[float], b: Sequence[float], *, binary: bool,
            resamples: int = RESAMPLES, seed: int = SEED, alpha: float = ALPHA) -> PairedComparison:
    """Compare the per-question values ``a`` and ``b`` (same questions, same order): exact McNemar when
    ``binary``, else the bootstrap p-value; the bootstrap interval on the difference of means either way."""
    interval = paired_bootstrap(a, b, resamples=resamples, seed=seed)
    x, y = _paired(a, b)
    if binary:
        only_a, only_b = discordant(x, y)
        p, test = mcnemar_exact(only_a, only_b), "mcnemar"
    else:
        only_a, only_b = int(np.count_nonzero(x > y)), int(np.count_nonzero(x < y))
        p, test = interval.p, "bootstrap"
    return PairedComparison(system_a=system_a, system_b=system_b, metric=metric, questions=len(x),
                            mean_a=float(x.mean()), mean_b=float(y.mean()), delta=interval.delta,
                            ci_low=interval.low, ci_high=interval.high, test=test, only_a=only_a, only_b=only_b,
                            p=p, p_adjusted=p, significant=p < alpha, alpha=alpha)


def adjust(family: Sequence[PairedComparison]) -> list[PairedComparison]:
    """The family with Holm-adjusted p-values and the significance flags recomputed from them."""
    adjusted = holm([c.p for c in family])
    return [dataclasses.replace(c, p_adjusted=p, significant=p < c.alpha) for c, p in zip(family, adjusted,
                                                                                           strict=True)]


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"paired values need two 1-D sequences of one length, got shapes {x.shape} and {y.shape}")
    return x, y
