"""Repeated QA runs (``-qa-runs N``): the spread of a score over N independent reader and judge passes.

A run is one pass over every (arm, question): the same prompts, sent again (temperature 0 does not make an API
deterministic, which is what the spread measures). The checkpoint keys each record by (arm, question, run), so a
killed multi-run resumes each run where it stopped.

For one score x_1..x_N (an arm's accuracy, or a category's, one value per run):

- ``mean = sum(x) / N``;
- ``std`` = the sample standard deviation, ``sqrt(sum((x - mean)^2) / (N - 1))`` (0 when N = 1);
- the 95% interval ``mean ± t_{0.975, N-1} · std / sqrt(N)``, Student's t quantile with N - 1 degrees of freedom
  (``t_quantile``: the CDF integrated by Simpson's rule from the t density and inverted by bisection, to ~1e-9);
  with N = 1 the interval is the single value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

_SIMPSON_STEPS = 4000


def _t_pdf(x: float, df: int) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(x * x / df))


def _t_cdf(x: float, df: int) -> float:
    """P(T <= x) for x >= 0: 0.5 plus the density's integral over [0, x] (composite Simpson)."""
    h = x / _SIMPSON_STEPS
    total = _t_pdf(0.0, df) + _t_pdf(x, df)
    total += sum((4 if i % 2 else 2) * _t_pdf(i * h, df) for i in range(1, _SIMPSON_STEPS))
    return 0.5 + total * h / 3


@lru_cache(maxsize=64)
def t_quantile(p: float, df: int) -> float:
    """The p-quantile (0.5 < p < 1) of Student's t with ``df`` degrees of freedom."""
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True, slots=True)
class Spread:
    """One score over ``runs`` runs (module docstring)."""

    runs: int
    mean: float
    std: float
    low: float
    high: float
    values: tuple[float, ...]


def spread(values: Sequence[float]) -> Spread:
    n = len(values)
    if n == 0:
        return Spread(0, 0.0, 0.0, 0.0, 0.0, ())
    mean = sum(values) / n
    if n == 1:
        return Spread(1, mean, 0.0, mean, mean, tuple(values))
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
    return Spread(n, mean, std, mean - half, mean + half, tuple(values))
