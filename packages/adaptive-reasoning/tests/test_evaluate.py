"""Intervals against independent references; the length router's fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.adaptive_reasoning.baselines import fit_length_router
from icml26.adaptive_reasoning.evaluate import paired_difference, wilson_interval
from icml26.adaptive_reasoning.tasks import Problem


def test_wilson_matches_statsmodels_formula() -> None:
    # closed form (Wilson 1927) for 8/10 at z = 1.96: (0.4902, 0.9433)
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4)
    assert hi == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@settings(max_examples=50, deadline=None)
@given(k=st.integers(0, 200), extra=st.integers(1, 200))
def test_wilson_contains_the_estimate(k: int, extra: int) -> None:
    n = k + extra
    lo, hi = wilson_interval(k, n)
    assert 0 <= lo <= k / n <= hi <= 1


def test_paired_difference_is_mean_and_normal_interval() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 400).astype(float), rng.integers(0, 2, 400).astype(float)
    d, lo, hi = paired_difference(a, b)
    diff = a - b
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    assert d == pytest.approx(diff.mean())
    assert (lo, hi) == pytest.approx((diff.mean() - 1.959964 * se, diff.mean() + 1.959964 * se))
    same = paired_difference(a, a)
    assert same == (0.0, 0.0, 0.0)  # identical replies: no uncertainty


def test_length_router_fits_the_separating_threshold() -> None:
    problems = [Problem("x" * n, 1, 1, n > 10) for n in (3, 5, 8, 12, 15, 20)]
    router = fit_length_router(problems, lambda p: len(p.text))
    assert 8 <= router.threshold < 12
    assert router(problems) == ["no_think"] * 3 + ["think"] * 3
    with pytest.raises(ValueError, match="needs problems"):
        fit_length_router([], len)  # type: ignore[arg-type]
