"""The studies, and the figures that closed forms fix (former claims, now tests)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from icml26.lean_slt.concentration import LIPSCHITZ_FUNCTIONS, effective_variance_ratio
from icml26.lean_slt.config import FUNCTION_NAMES, PROCESS_NAMES, PROFILES
from icml26.lean_slt.processes import PROCESSES, make_process
from icml26.lean_slt.studies import LeastSquaresStudy, _hard_sparsity


def test_registries_match_the_config_names() -> None:
    assert tuple(PROCESSES) == PROCESS_NAMES
    assert tuple(LIPSCHITZ_FUNCTIONS) == FUNCTION_NAMES


def test_ols_error_is_sigma2_d_over_n() -> None:
    """E ||X(theta_hat - theta)||^2 / n = sigma^2 d / n exactly: the old ``ls_linear_*``
    claims were this identity, so it is a test now."""
    cfg = replace(PROFILES["smoke"], ls_settings=("linear",), ls_reps=200, sigma=0.5)
    out = LeastSquaresStudy(cfg).run(np.random.default_rng(0))
    for n, err in zip(out.curves["linear"]["x"], out.curves["linear"]["err"], strict=True):
        exact = cfg.sigma**2 * cfg.linear_dim / n
        # error * n / sigma^2 ~ chi^2_d: mean d, sd sqrt(2d); 200 reps -> 5 se tolerance
        assert abs(err - exact) <= 5 * exact * math.sqrt(2 / cfg.linear_dim) / math.sqrt(200)
    assert abs(out.metrics["ls_rate.linear.exponent"] + 1) < 0.1


def test_dudley_on_the_euclidean_ball_is_exactly_sqrt_n() -> None:
    """The volumetric covering makes the bound sqrt(n) times a constant: slope 1/2 is forced."""
    bounds = [make_process("euclidean_ball", n).dudley_bound() for n in (10, 100, 1000)]
    ratios = [b / math.sqrt(n) for b, n in zip(bounds, (10, 100, 1000), strict=True)]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-9)


def test_dudley_on_brownian_stays_bounded() -> None:
    """Chaining with exact covering numbers of the grid: the bound converges as n grows, so a
    'same slope as the truth' rule was vacuous for Brownian motion (both slopes are ~0)."""
    b = [make_process("brownian", n).dudley_bound() for n in (100, 1000, 10000)]
    assert b[0] <= b[1] <= b[2] <= 1.1 * b[0]


def test_linear_tightness_matches_the_gaussian_tail() -> None:
    """For f = <a, X>, f ~ N(0, 1): the variance-proxy ratio is a closed form of the grid."""
    t = np.linspace(0.02, 5.0, 120)
    exact = 2 * stats.norm.sf(t)
    ratio = effective_variance_ratio(t, exact, 1.0, draws=10**9, min_count=100)
    keep = exact * 10**9 >= 100
    expected = float((t[keep] ** 2 / (2 * np.log(2 / exact[keep]))).max())
    assert ratio == pytest.approx(expected)
    assert 0.6 < ratio < 1.0


def test_hard_sparsity_balances_the_two_rates() -> None:
    s = _hard_sparsity(400, 1000, 1.0, 1.0)
    assert s == math.ceil(math.sqrt(400 / math.log(1000)))
    assert _hard_sparsity(10, 10**6, 1.0, 100.0) == 1
