"""Estimators against brute force / scipy; the critical radius and the master bound."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from icml26.lean_slt.least_squares import (
    LINEAR_C1_RANK,
    best_subset_ls,
    critical_radius,
    empirical_error,
    fit_exponent,
    formal_linear_rate_bound,
    l1_constrained_ls,
    linear_critical_radius,
    linear_local_complexity,
    master_error_bound,
    ols,
    project_l1_ball,
)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-5, 5), min_size=1, max_size=12),
    st.floats(0.0, 4.0),
    st.integers(0, 2**31),
)
def test_l1_projection_is_the_projection(v: list[float], radius: float, seed: int) -> None:
    x = np.asarray(v)
    p = project_l1_ball(x, radius)
    assert np.abs(p).sum() <= radius + 1e-9
    # variational inequality: <x - p, z - p> <= 0 for every z in the ball
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((50, x.size))
    z *= radius * rng.random((50, 1)) / np.maximum(np.abs(z).sum(axis=1, keepdims=True), 1e-12)
    assert np.all((z - p) @ (x - p) <= 1e-8)


def test_fista_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 6))
    y = X @ np.asarray([1.0, -0.5, 0, 0, 0.2, 0]) + 0.3 * rng.standard_normal(30)
    R = 1.0
    ours = l1_constrained_ls(X, y, R, tol=1e-12, iters=20000)
    # reference: split theta = a - b, a, b >= 0, sum(a + b) <= R
    d = X.shape[1]

    def obj(z: np.ndarray) -> float:
        r = y - X @ (z[:d] - z[d:])
        return float(r @ r)

    res = minimize(
        obj,
        np.zeros(2 * d),
        bounds=[(0, None)] * (2 * d),
        constraints=[{"type": "ineq", "fun": lambda z: R - z.sum()}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    ref = res.x[:d] - res.x[d:]
    assert obj(np.concatenate([np.maximum(ours, 0), np.maximum(-ours, 0)])) <= res.fun + 1e-6
    np.testing.assert_allclose(ours, ref, atol=1e-4)


def test_best_subset_matches_enumeration() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 6))
    y = rng.standard_normal(40)
    best = math.inf
    for S in itertools.combinations(range(6), 2):
        coef = np.linalg.lstsq(X[:, S], y, rcond=None)[0]
        best = min(best, float(((y - X[:, S] @ coef) ** 2).sum()))
    theta = best_subset_ls(X, y, 2)
    assert np.count_nonzero(theta) <= 2
    assert float(((y - X @ theta) ** 2).sum()) == pytest.approx(best, rel=1e-9)


def test_linear_complexity_exact_and_below_formal() -> None:
    rng = np.random.default_rng(2)
    n, d, delta = 60, 4, 0.3
    X = rng.standard_normal((n, d))
    Q, _ = np.linalg.qr(X)
    w = rng.standard_normal((40_000, n))
    mc = delta * np.linalg.norm(w @ Q, axis=1) / math.sqrt(n)
    g = linear_local_complexity(delta, d, n)
    assert abs(mc.mean() - g) < 5 * mc.std() / math.sqrt(mc.size)
    # linear_local_gaussian_complexity_bound_rank: G_n(delta) <= 96 sqrt 2 delta sqrt r / sqrt n
    assert g <= 96 * math.sqrt(2) * delta * math.sqrt(d) / math.sqrt(n)


def test_critical_radius_bisection() -> None:
    sigma, r, n = 0.7, 5, 200
    exact = linear_critical_radius(sigma, r, n)
    found = critical_radius(lambda de: linear_local_complexity(de, r, n), sigma)
    assert found == pytest.approx(exact, rel=1e-8)
    assert linear_local_complexity(exact, r, n) / exact == pytest.approx(exact / (2 * sigma))


def test_master_bound_coverage_linear() -> None:
    rng = np.random.default_rng(3)
    n, d, sigma = 100, 3, 1.0
    ds = linear_critical_radius(sigma, d, n)
    radius, prob = master_error_bound(ds, ds, n, sigma)
    hits = []
    for _ in range(200):
        X = rng.standard_normal((n, d))
        th = rng.standard_normal(d)
        y = X @ th + sigma * rng.standard_normal(n)
        hits.append(empirical_error(X, ols(X, y), th) <= radius)
    assert np.mean(hits) >= prob - 0.05
    assert formal_linear_rate_bound(sigma, d, n)[0] == pytest.approx(LINEAR_C1_RANK * d / n)


def test_fit_exponent_recovers_power_law() -> None:
    x = np.asarray([10.0, 100.0, 1000.0])
    fit = fit_exponent(x, 3.0 * x**-0.7)
    assert fit.exponent == pytest.approx(-0.7)
    assert fit.stderr == pytest.approx(0.0, abs=1e-9)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="t >= delta"):
        master_error_bound(1.0, 0.5, 10, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        master_error_bound(1.0, 1.0, 10, -1.0)
    with pytest.raises(ValueError, match="finite"):
        ols(np.asarray([[1.0], [np.nan]]), np.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="shape"):
        ols(np.zeros((3, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="sparsity"):
        best_subset_ls(np.zeros((3, 2)), np.zeros(3), 3)
