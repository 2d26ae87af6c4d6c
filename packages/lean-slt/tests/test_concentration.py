"""Gaussian Lipschitz concentration: the bound, the simulated tails, the Lipschitz check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from icml26.lean_slt.concentration import (
    LIPSCHITZ_FUNCTIONS,
    LipschitzFunction,
    check_lipschitz,
    concentration_bound,
    effective_variance_ratio,
    tail_check,
)


def test_bound_formula() -> None:
    assert concentration_bound(0.0, 1.0)[()] == 1.0
    assert concentration_bound(3.0, 2.0)[()] == pytest.approx(2 * math.exp(-9 / 8))
    with pytest.raises(ValueError, match="lipschitz"):
        concentration_bound(1.0, -1.0)


@pytest.mark.parametrize("name", list(LIPSCHITZ_FUNCTIONS))
def test_functions_pass_the_lipschitz_check(name: str) -> None:
    f = LIPSCHITZ_FUNCTIONS[name]
    est = check_lipschitz(f.fn, f.lipschitz, 30, np.random.default_rng(0))
    assert 0 < est <= f.lipschitz * (1 + 1e-6)


def test_non_lipschitz_is_flagged() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="not 1-Lipschitz"):
        check_lipschitz(lambda x: (x**2).sum(axis=1), 1.0, 10, rng)
    with pytest.raises(ValueError, match="not 1-Lipschitz"):
        check_lipschitz(lambda x: 2 * x.max(axis=1), 1.0, 10, rng)


@pytest.mark.parametrize("name", list(LIPSCHITZ_FUNCTIONS))
def test_tail_below_bound_within_mc_error(name: str) -> None:
    tc = tail_check(LIPSCHITZ_FUNCTIONS[name], 30, np.random.default_rng(1), 20_000)
    assert tc.max_excess <= tc.mc_error
    assert tc.variance_ratio <= 1.0 + 0.1


def test_linear_tail_matches_closed_form() -> None:
    # f = <a, X>, ||a|| = 1: P(|f| >= t) = 2 (1 - Phi(t)); DKW band at alpha = 1e-3.
    tc = tail_check(LIPSCHITZ_FUNCTIONS["linear"], 8, np.random.default_rng(2), 50_000)
    exact = 2 * norm.sf(tc.t)
    band = math.sqrt(math.log(2 / 1e-3) / (2 * 50_000))
    assert np.max(np.abs(tc.tail - exact)) <= band
    # the exact tail's variance proxy ratio (at the same cut-off) is what the estimate sees
    ref = effective_variance_ratio(tc.t, exact, 1.0, 50_000)
    assert tc.variance_ratio == pytest.approx(ref, abs=0.05)


def test_estimated_mean_path() -> None:
    f = LIPSCHITZ_FUNCTIONS["softmax"]
    assert f.mean is None
    tc = tail_check(f, 10, np.random.default_rng(3), 5000, mean_draws=5000)
    assert tc.mean_se > 0
    assert tc.max_excess <= tc.mc_error


def test_bad_dimension() -> None:
    f = LipschitzFunction("x", lambda x: x[:, 0], 1.0)
    with pytest.raises(ValueError, match="dim"):
        tail_check(f, 0, np.random.default_rng(0), 100)


def test_tail_check_refutes_a_wrong_lipschitz_constant() -> None:
    """A 3-Lipschitz f declared 1-Lipschitz is refused (it would sit under a wrong bound)."""
    f = LipschitzFunction("three_x", lambda x: 3 * x[:, 0], lipschitz=1.0)
    with pytest.raises(ValueError, match="not 1-Lipschitz"):
        tail_check(f, 5, np.random.default_rng(1), 2000)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda x: np.where(x[:, 0] > 2, np.nan, x[:, 0]), "NaN or inf"),
        (lambda x: x[:, :1], r"shape \(m,\), got shape \(2000, 1\)"),
        (lambda x: x[:, 0][:-1], r"got shape \(1999,\)"),
    ],
)
def test_tail_check_refuses_bad_output(fn: object, message: str) -> None:
    f = LipschitzFunction("bad", fn, lipschitz=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        tail_check(f, 5, np.random.default_rng(1), 2000)
