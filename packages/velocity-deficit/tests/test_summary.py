"""Seed aggregation and paired FD gains against scipy and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from icml26.velocity_deficit.summary import deficit_slope, fd_gains, merge_seeds


def test_merge_means_se_and_bounds_match_scipy() -> None:
    per_seed = [
        {"fd_gain.d.r.ssc.nfe50": 0.1, "fd.d.r.ssc.nfe50": 2.0, "other.x": 1.0},
        {"fd_gain.d.r.ssc.nfe50": 0.3, "fd.d.r.ssc.nfe50": 4.0, "other.x": 3.0},
        {"fd_gain.d.r.ssc.nfe50": 0.5, "fd.d.r.ssc.nfe50": 3.0, "other.x": 2.0},
    ]
    out = merge_seeds(per_seed)
    se = float(stats.sem([0.1, 0.3, 0.5]))
    assert out["fd_gain.d.r.ssc.nfe50"] == pytest.approx(0.3)
    assert out["fd_gain_se.d.r.ssc.nfe50"] == pytest.approx(se)
    lo, hi = stats.t.interval(0.95, df=2, loc=0.3, scale=se)  # scipy's Student-t interval
    assert out["fd_gain_lcb.d.r.ssc.nfe50"] == pytest.approx(lo)
    assert out["fd_gain_ucb.d.r.ssc.nfe50"] == pytest.approx(hi)
    assert out["fd_gain_lcb.d.r.ssc.nfe50"] == pytest.approx(0.3 - 4.302653 * se)
    assert out["fd_se.d.r.ssc.nfe50"] == pytest.approx(float(stats.sem([2.0, 4.0, 3.0])))
    assert "fd_lcb.d.r.ssc.nfe50" not in out
    assert "other_se.x" not in out
    assert out["other.x"] == pytest.approx(2.0)


def test_a_diverged_seed_is_not_averaged_away_and_keys_must_agree() -> None:
    out = merge_seeds([{"fd.a.b": 1.0}, {"fd.a.b": float("nan")}])
    assert math.isnan(out["fd.a.b"])
    assert math.isnan(merge_seeds([{"fd.a.b": 1.0}])["fd_se.a.b"])  # one seed: no spread
    with pytest.raises(ValueError, match="different keys"):
        merge_seeds([{"a.b": 1.0}, {"c.d": 2.0}])
    with pytest.raises(ValueError, match="no seeds"):
        merge_seeds([])


def test_fd_gains_are_paired_relative_changes() -> None:
    m = {
        "fd.d.r.baseline.nfe10": 4.0,
        "fd.d.r.baseline.nfe50": 2.0,
        "fd.d.r.baseline.nfe250": 1.0,
        "fd.d.r.ssc.nfe10": 3.0,
        "fd.d.r.ssc.nfe50": 0.9,
    }
    out = fd_gains(m, "d", "r", (10, 50), 250, 50)
    assert out["fd_gain.d.r.ssc.nfe10"] == pytest.approx(0.25)
    assert out["fd_gain.d.r.ssc.nfe50"] == pytest.approx(0.55)
    assert out["fd_gain.d.r.baseline.nfe50"] == 0.0  # the placebo's figure, by definition
    assert out["fd_gain_vs_ref.d.r.ssc.nfe50"] == pytest.approx(0.1)
    assert out["fd_gain_vs_ref.d.r.baseline.nfe50"] == pytest.approx(-1.0)
    assert not any(k.startswith("sw_gain") for k in out)  # no SW figures, no SW gains


def test_sw_gains_beside_fd_at_the_selection_budget() -> None:
    """SW gains are paired relative changes too, at the selection budget; a variant whose
    samples collapse (FD better, SW worse) shows it in ``sw_gain`` < 0."""
    m = {
        "fd.d.r.baseline.nfe50": 2.0,
        "fd.d.r.baseline.nfe250": 1.0,
        "fd.d.r.ssc.nfe50": 1.0,
        "sw.d.r.baseline.nfe50": 0.2,
        "sw.d.r.baseline.nfe250": 0.1,
        "sw.d.r.ssc.nfe50": 0.3,
    }
    out = fd_gains(m, "d", "r", (50,), 250, 50)
    assert out["fd_gain.d.r.ssc.nfe50"] == pytest.approx(0.5)
    assert out["sw_gain.d.r.ssc.nfe50"] == pytest.approx(-0.5)
    assert out["sw_gain_vs_ref.d.r.ssc.nfe50"] == pytest.approx(-2.0)
    assert out["sw_gain.d.r.baseline.nfe50"] == 0.0
    merged = merge_seeds([out, out, {k: v + 0.01 for k, v in out.items()}])
    assert "sw_gain_ucb.d.r.ssc.nfe50" in merged


def test_deficit_slope_per_seed_with_its_t_bound() -> None:
    """Per seed, the slope of learned/exact over log2 d; mean, SE and the t-interval's upper end."""
    dims = {"gmm4": 4, "gmm16": 16, "gmm64": 64}
    per_seed = [
        {f"learned_vs_exact_mean.{n}.short.baseline": 1.0 - s * np.log2(d) for n, d in dims.items()}
        for s in (0.01, 0.02, 0.03)
    ]
    out = deficit_slope(per_seed, dims, "short")
    assert set(out) == {
        "deficit_slope_vs_dim.short.learned",
        "deficit_slope_vs_dim_se.short.learned",
        "deficit_slope_vs_dim_ucb.short.learned",
    }
    assert out["deficit_slope_vs_dim.short.learned"] == pytest.approx(-0.02)
    sem = float(stats.sem([0.01, 0.02, 0.03]))
    assert out["deficit_slope_vs_dim_se.short.learned"] == pytest.approx(sem)
    assert out["deficit_slope_vs_dim_ucb.short.learned"] == pytest.approx(
        stats.t.interval(0.95, df=2, loc=-0.02, scale=sem)[1]
    )
    flat = [{k: 0.99 for k in m} for m in per_seed]  # no trend: slope exactly 0 in every seed
    assert deficit_slope(flat, dims, "short")["deficit_slope_vs_dim_ucb.short.learned"] == 0.0
    with pytest.raises(ValueError, match="two distinct dimensions"):
        deficit_slope(per_seed, {"gmm4": 4}, "short")
