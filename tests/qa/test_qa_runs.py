"""The spread of repeated runs: mean, sample std and the t interval against numpy and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from memini_bench.qa.runs import spread, t_quantile


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 29, 100])
def test_t_quantile_matches_scipy(df):
    assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-8)


def test_spread_matches_numpy_and_scipy():
    values = [0.62, 0.58, 0.66, 0.61]
    s = spread(values)
    assert s.mean == pytest.approx(np.mean(values)) and s.std == pytest.approx(np.std(values, ddof=1))
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert (s.low, s.high) == (pytest.approx(low), pytest.approx(high))


def test_one_run_and_none():
    assert spread([0.5]) == spread([0.5]) and (spread([0.5]).std, spread([0.5]).low) == (0.0, 0.5)
    assert spread([]).runs == 0
