"""Control penalties, the discounted Riccati solver and closed-loop simulation."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from scipy import linalg

from icml26.transport_kl import control, gaussian


@pytest.mark.parametrize(
    ("div", "fn", "factor"),
    [
        ("kl", gaussian.kl, 1.0),
        ("wkl", gaussian.wkl, 1.0),
        ("kwkl", lambda *a: gaussian.kwkl(*a, 0.5), 1.0),
        ("w2", lambda *a: gaussian.w2(*a, squared=True), 1.0),
    ],
)
def test_penalty_is_the_divergence_between_transitions(div, fn, factor) -> None:
    """u^T R u = beta * D(N(Ax + Bu, Sw) | N(Ax, Sw)) for random x, u (computed by the divergence)."""
    rng = np.random.default_rng(0)
    a, b = control.double_integrator(0.1)
    sw = np.diag([1e-3, 2e-3, 0.5, 0.7])
    beta = 1.7
    r = control.penalty_matrix(div, b, sw, beta=beta, lam=0.5)
    for _ in range(3):
        x, u = rng.normal(size=4), rng.normal(size=2)
        d = float(fn(a @ x + b @ u, sw, a @ x, sw))
        assert u @ r @ u == pytest.approx(beta * factor * d, rel=1e-9)


def test_kl_penalty_blows_up_transport_ones_do_not() -> None:
    _, b = control.double_integrator(0.1)
    shape = np.diag([1e-5, 1e-5, 1.0, 1.0])
    norms = {
        div: [
            np.linalg.norm(control.penalty_matrix(div, b, rho * shape, lam=1.0), 2)
            for rho in (1.0, 1e-8)
        ]
        for div in ("kl", "wkl", "kwkl")
    }
    assert norms["kl"][1] / norms["kl"][0] == pytest.approx(1e8)
    assert norms["wkl"][1] == norms["wkl"][0]
    assert norms["kwkl"][1] / norms["kwkl"][0] < 10
    assert np.all(np.isinf(control.penalty_matrix("kl", b, np.zeros((4, 4)))))


@pytest.mark.parametrize("gamma", [0.9, 0.99, 1.0])
def test_riccati_matches_scipy_and_its_equation(gamma: float) -> None:
    a, b = control.double_integrator(0.1)
    q, r = np.eye(4), np.diag([0.3, 2.0])
    sol = control.solve_discounted_riccati(a, b, q, r, gamma)
    ref = linalg.solve_discrete_are(np.sqrt(gamma) * a, np.sqrt(gamma) * b, q, r)
    assert sol.ok
    np.testing.assert_allclose(sol.P, ref, rtol=1e-9)
    assert control.riccati_residual(a, b, q, r, gamma, sol.P) < 1e-12


def test_riccati_flags_infinite_penalty() -> None:
    a, b = control.double_integrator(0.1)
    sol = control.solve_discounted_riccati(a, b, np.eye(4), np.full((2, 2), np.inf), 0.99)
    assert not sol.ok


def test_monte_carlo_cost_matches_lyapunov_sum() -> None:
    a, b = control.double_integrator(0.1)
    sol = control.solve_discounted_riccati(a, b, np.eye(4), np.eye(2), 0.95)
    sw = 0.01 * np.eye(4)
    x0 = np.random.default_rng(0).normal(size=(400, 4))
    kw = {"q_eval": np.eye(4), "r_eval": np.eye(2), "gamma": 0.95}
    mc = control.simulate_linear(a, b, sol.K, sw, horizon=200, x0=x0, key=jax.random.key(0), **kw)
    exact = control.closed_loop_cost_exact(a, b, sol.K, sw, x0_cov=np.eye(4), horizon=200, **kw)
    assert abs(mc.mean() - exact) < 4 * mc.std() / np.sqrt(len(mc))


def test_bad_control_inputs() -> None:
    a, b = control.double_integrator(0.1)
    with pytest.raises(ValueError, match="unknown divergence"):
        control.penalty_matrix("tv", b, np.eye(4))
    with pytest.raises(ValueError, match="noise_cov must be"):
        control.penalty_matrix("kl", b, np.eye(3))
    with pytest.raises(ValueError, match="gamma must be in"):
        control.solve_discounted_riccati(a, b, np.eye(4), np.eye(2), 1.5)
    with pytest.raises(ValueError, match="shapes do not fit"):
        control.solve_discounted_riccati(a, b, np.eye(3), np.eye(2), 0.9)
