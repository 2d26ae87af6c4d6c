"""Seed aggregation: mean and standard error against scipy, spread keys, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from icml26.velocity_deficit.seeds import mean_and_se, merge_seeds, with_spread


def test_mean_and_se_match_scipy() -> None:
    x = np.random.default_rng(0).normal(size=7)
    mean, se = mean_and_se(list(x))
    assert mean == pytest.approx(float(np.mean(x)), rel=1e-12)
    assert se == pytest.approx(float(stats.sem(x)), rel=1e-12)


def test_one_seed_has_no_se_and_a_diverged_seed_is_not_averaged_away() -> None:
    assert math.isnan(mean_and_se([1.0])[1])
    assert all(math.isnan(v) for v in mean_and_se([1.0, float("nan"), 2.0]))
    with pytest.raises(ValueError, match="non-empty"):
        mean_and_se([])


def test_merge_and_spread_keys() -> None:
    per_seed = [
        {"fd_improvement.d.ssc.nfe50": 0.1, "fd.d.ssc.nfe50": 2.0, "other.x": 1.0},
        {"fd_improvement.d.ssc.nfe50": 0.3, "fd.d.ssc.nfe50": 4.0, "other.x": 3.0},
    ]
    merged = merge_seeds(per_seed)
    assert merged == pytest.approx(
        {k: v + (0.1 if "impr" in k else 1.0) for k, v in per_seed[0].items()}
    )
    out = with_spread(per_seed, ("fd", "fd_improvement"), bounds=("fd_improvement",))
    se = float(stats.sem([0.1, 0.3]))
    assert out["fd_improvement_se.d.ssc.nfe50"] == pytest.approx(se)
    assert out["fd_improvement_lcb.d.ssc.nfe50"] == pytest.approx(0.2 - 2 * se)
    assert out["fd_improvement_ucb.d.ssc.nfe50"] == pytest.approx(0.2 + 2 * se)
    assert out["fd_se.d.ssc.nfe50"] == pytest.approx(float(stats.sem([2.0, 4.0])))
    assert "fd_lcb.d.ssc.nfe50" not in out
    assert "other_se.x" not in out
    with pytest.raises(ValueError, match="lacks metrics"):
        merge_seeds([{"a.b": 1.0}, {"c.d": 2.0}])
