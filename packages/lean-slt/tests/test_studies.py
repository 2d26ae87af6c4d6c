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
from icml26.lean_slt.studies import LeastSquaresStudy, hard_sparsity, oracle_ls_error


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


def test_variance_ratio_inverts_a_gaussian_shaped_tail() -> None:
    """Independent of the formula's code path: a tail 2 exp(-t^2 / 2v) has proxy exactly v."""
    t = np.linspace(0.02, 5.0, 120)
    for v in (0.2, 0.5, 1.0):
        tail = np.minimum(1.0, 2 * np.exp(-(t**2) / (2 * v)))
        assert effective_variance_ratio(t, tail, 1.0, draws=10**12, min_count=1) == pytest.approx(v)


def test_linear_reference_is_below_one_and_grows_with_draws() -> None:
    """For f = <a, X> ~ N(0, 1) the proxy is read only where >= 100 draws exceed t, so the
    sharp reference is about 0.69 at 50 000 draws, not 1, and it grows with the draws."""
    t = np.linspace(0.02, 5.0, 120)
    exact = 2 * stats.norm.sf(t)
    ratios = [effective_variance_ratio(t, exact, 1.0, draws=m) for m in (10**4, 5 * 10**4, 10**7)]
    assert ratios[0] < ratios[1] < ratios[2] < 1.0
    assert 0.6 < ratios[1] < 0.75


def test_dudley_l1_looseness_grows_with_n() -> None:
    """Former claim ``dudley_l1_looseness_grows``: bound and exact E sup are both formulas (no
    seed), so it is a test. Dudley with Maurey's covering ~ (log n)^{3/2}, the truth ~ (log
    n)^{1/2}: the ratio grows with log n (34.7 at n = 10 to 72.9 at n = 10^4)."""
    loose = [
        make_process("l1_ball", n).dudley_bound() / make_process("l1_ball", n).expected_sup()
        for n in (10, 100, 1000, 10000)
    ]
    assert np.all(np.diff(loose) > 0)
    assert loose[-1] >= 1.5 * loose[0]
    eu = [
        make_process("euclidean_ball", n).dudley_bound()
        / make_process("euclidean_ball", n).expected_sup()
        for n in (10, 100, 1000, 10000)
    ]
    assert max(eu) <= 1.2 * min(eu)  # the Euclidean ball: a constant multiple of the truth


def test_dudley_on_the_finite_set_tracks_sqrt_log_n() -> None:
    """Finite iid set: N(eps) = n below the spacing, so the bound is a constant times
    sqrt(log n) up to the covering's edge; the truth E max ~ sqrt(2 log n). Both slopes in log
    n agree (the former ``dudley_slope_finite`` claim, decided by the closed forms)."""
    ns = (100, 1000, 10000)
    b = [make_process("finite_iid", n).dudley_bound() / math.sqrt(math.log(n)) for n in ns]
    assert max(b) <= 1.05 * min(b)


def test_hard_sparsity_balances_the_two_rates() -> None:
    s = hard_sparsity(400, 1000, 1.0, 1.0)
    assert s == math.ceil(math.sqrt(400 / math.log(1000)))
    assert hard_sparsity(10, 10**6, 1.0, 100.0) == 1


def test_oracle_error_is_sigma2_s_over_n() -> None:
    """The placebo of the l1 claims: least squares on the true support, E error = sigma^2 s / n."""
    rng = np.random.default_rng(4)
    n, d, s = 200, 50, 4
    errs = []
    for _ in range(400):
        X = rng.standard_normal((n, d))
        theta = np.zeros(d)
        theta[rng.choice(d, s, replace=False)] = 0.25
        errs.append(oracle_ls_error(X, X @ theta + rng.standard_normal(n), theta))
    # n err ~ chi^2_s: mean s, sd sqrt(2 s); 400 reps -> 5 se
    assert abs(np.mean(errs) - s / n) <= 5 * math.sqrt(2 * s) / n / math.sqrt(400)


def test_l1_dims_settings_fit_against_log_d() -> None:
    cfg = replace(PROFILES["smoke"], ls_settings=("l1_dim_sparse_oracle",), l1_reps=3)
    out = LeastSquaresStudy(cfg).run(np.random.default_rng(0))
    np.testing.assert_allclose(out.curves["l1_dim_sparse_oracle"]["x"], np.log(cfg.l1_dims))
    assert "ls_rate.l1_dim_sparse_oracle.stderr" in out.metrics
