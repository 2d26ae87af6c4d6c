"""Control penalties, the discounted Riccati solver and closed-loop simulation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
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
    r = np.asarray(control.penalty_matrix(div, b, sw, beta=beta, lam=0.5))
    for _ in range(3):
        x, u = rng.normal(size=4), rng.normal(size=2)
        d = float(fn(a @ x + b @ u, sw, a @ x, sw))
        assert u @ r @ u == pytest.approx(beta * factor * d, rel=1e-9)


def test_kl_penalty_blows_up_transport_ones_do_not() -> None:
    _, b = control.double_integrator(0.1)
    shape = np.diag([1e-5, 1e-5, 1.0, 1.0])
    norms = {
        div: [
            np.linalg.norm(np.asarray(control.penalty_matrix(div, b, rho * shape, lam=1.0)), 2)
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


def test_monte_carlo_cost_matches_lyapunov() -> None:
    a, b = control.double_integrator(0.1)
    sol = control.solve_discounted_riccati(a, b, np.eye(4), np.eye(2), 0.95)
    sw = 0.01 * np.eye(4)
    x0 = np.random.default_rng(0).normal(size=(400, 4))
    kw = {"q_eval": np.eye(4), "r_eval": np.eye(2), "gamma": 0.95}
    mc = control.simulate_linear(a, b, sol.K, sw, horizon=400, x0=x0, key=jax.random.key(0), **kw)
    with jax.enable_x64(True):
        state, energy = control.closed_loop_costs(a, b, sol.K, sw, x0_cov=np.eye(4), **kw)
    assert abs(mc.mean() - float(state + energy)) < 4 * mc.std() / np.sqrt(len(mc))


@pytest.mark.parametrize("gamma", [0.9, 0.99])
def test_lyapunov_matches_scipy(gamma: float) -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 5)) * 0.3
    q = rng.normal(size=(5, 5))
    q = q @ q.T
    with jax.enable_x64(True):
        y = np.asarray(control.discounted_lyapunov(a, q, gamma))
    ref = linalg.solve_discrete_lyapunov(np.sqrt(gamma) * a, q)
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-12)


def _riccati_p(a, b, rho, beta):
    sw = rho * np.diag([1e-2, 2e-2, 0.5, 0.1])
    r = control.penalty_matrix("kl", b, sw, beta)
    return control.riccati(a, b, np.eye(4), r, 0.99)[0]


def test_riccati_vmaps_over_rho_and_beta_like_scipy() -> None:
    a, b = control.double_integrator(0.1)
    rhos, betas = np.array([1e-3, 1e-1, 1.0]), np.array([0.3, 1.0, 3.0])
    with jax.enable_x64(True):
        ps = jax.vmap(lambda rho, beta: _riccati_p(a, b, rho, beta))(rhos, betas)
    for rho, beta, p in zip(rhos, betas, np.asarray(ps), strict=True):
        r = np.asarray(control.penalty_matrix("kl", b, rho * np.diag([1e-2, 2e-2, 0.5, 0.1]), beta))
        ref = linalg.solve_discrete_are(np.sqrt(0.99) * a, np.sqrt(0.99) * b, np.eye(4), r)
        np.testing.assert_allclose(p, ref, rtol=1e-9)


def test_riccati_gradient_in_rho_and_beta_matches_finite_differences() -> None:
    a, b = control.double_integrator(0.1)

    def value(log_rho: float, log_beta: float) -> float:
        return jnp.trace(_riccati_p(a, b, jnp.exp(log_rho), jnp.exp(log_beta)))

    def scipy_value(log_rho: float, log_beta: float) -> float:
        r = np.asarray(
            control.penalty_matrix(
                "kl", b, np.exp(log_rho) * np.diag([1e-2, 2e-2, 0.5, 0.1]), np.exp(log_beta)
            )
        )
        return np.trace(
            linalg.solve_discrete_are(np.sqrt(0.99) * a, np.sqrt(0.99) * b, np.eye(4), r)
        )

    with jax.enable_x64(True):
        grad = jax.grad(value, argnums=(0, 1))(jnp.log(0.1), jnp.log(2.0))
    h = 1e-5
    for i, g in enumerate(grad):
        dp = [np.log(0.1), np.log(2.0)]
        dm = list(dp)
        dp[i] += h
        dm[i] -= h
        fd = (scipy_value(*dp) - scipy_value(*dm)) / (2 * h)
        assert float(g) == pytest.approx(fd, rel=1e-5)


def test_kl_feedback_collapses_as_noise_vanishes_wkl_keeps_it() -> None:
    """The old ``well_posed_*`` / ``nontrivial_feedback`` claims: forced by KL's 1/rho scale."""
    a, b = control.double_integrator(0.1)
    shape = np.diag([1e-5, 1e-5, 1.0, 1.0])
    gains = {}
    for div in ("kl", "wkl", "kwkl"):
        gains[div] = []
        for rho in (1.0, 1e-4, 1e-8):
            sol = control.solve_discounted_riccati(
                a, b, np.eye(4), control.penalty_matrix(div, b, rho * shape), 0.99
            )
            assert sol.ok, (div, rho)
            gains[div].append(np.linalg.norm(sol.K, 2))
    assert gains["kl"][-1] < 1e-2 * gains["kl"][0]
    assert gains["wkl"][0] == pytest.approx(gains["wkl"][-1])
    assert min(gains["kwkl"]) > 0.1 * max(gains["kwkl"])
    # and KL with beta scaled by rho is WKL's controller (why rho alone cannot separate them)
    sw = 1e-3 * np.eye(4)
    k_kl = control.solve_discounted_riccati(
        a, b, np.eye(4), control.penalty_matrix("kl", b, sw, 1e-3), 0.99
    ).K
    k_wkl = control.solve_discounted_riccati(
        a, b, np.eye(4), control.penalty_matrix("wkl", b, sw, 1.0), 0.99
    ).K
    np.testing.assert_allclose(k_kl, k_wkl, rtol=1e-9)


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


def test_solvers_run_in_float64_outside_x64() -> None:
    """Called eagerly without jax_enable_x64, the exported solvers still give float64."""
    a, b = control.double_integrator(0.1)
    sw = 1e-4 * np.diag([1e-5, 1e-5, 1.0, 1.0])
    r = np.asarray(control.penalty_matrix("kl", b, sw))
    assert not jax.config.jax_enable_x64
    p, k = control.riccati(a, b, np.eye(4), r, 0.99)
    ref = linalg.solve_discrete_are(np.sqrt(0.99) * a, np.sqrt(0.99) * b, np.eye(4), r)
    assert p.dtype == jnp.float64
    assert np.linalg.norm(np.asarray(p) - ref) / np.linalg.norm(ref) < 1e-9
    st, en = control.closed_loop_costs(
        a, b, k, sw, q_eval=np.eye(4), r_eval=np.eye(2), gamma=0.99, x0_cov=np.eye(4)
    )
    assert st.dtype == en.dtype == jnp.float64
    assert control.discounted_lyapunov(a * 0.5, np.eye(4), 0.9).dtype == jnp.float64


def test_traced_float32_solve_warns() -> None:
    a, b = control.double_integrator(0.1)
    with pytest.warns(UserWarning, match="float32"):
        jax.jit(lambda r: control.riccati(a, b, jnp.eye(4), r, 0.99)[0])(jnp.eye(2))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda a, b: control.riccati(a, b, np.eye(4), np.full((2, 2), np.nan), 0.99),
            "r contains",
        ),
        (
            lambda a, b: control.riccati(a, b, np.eye(4), np.eye(3), 0.99),
            r"r must have shape \(2, 2\)",
        ),
        (lambda a, b: control.riccati(a, b, np.eye(4), np.eye(2), 2.0), "gamma must be in"),
        (lambda a, b: control.riccati(a, b[:3], np.eye(4), np.eye(2)), "a must have shape"),
        (
            lambda a, b: control.closed_loop_costs(
                a,
                b,
                np.zeros((2, 4)),
                np.eye(4),
                q_eval=np.eye(3),
                r_eval=np.eye(2),
                gamma=0.9,
                x0_cov=np.eye(4),
            ),
            "q_eval must have shape",
        ),
        (
            lambda a, b: control.closed_loop_costs(
                a,
                b,
                np.zeros((2, 4)),
                np.eye(4),
                q_eval=np.eye(4),
                r_eval=np.eye(2),
                gamma=1.0,
                x0_cov=np.eye(4),
            ),
            r"gamma must be in \(0, 1\)",
        ),
        (lambda a, b: control.discounted_lyapunov(b, np.eye(4)), "a must be a square"),
        (
            lambda a, b: control.riccati(a, b, np.eye(4), np.eye(2), 0.99, iterations=1),
            "did not converge",
        ),
    ],
)
def test_solvers_refuse_bad_input_naming_it(call, message) -> None:
    a, b = control.double_integrator(0.1)
    with pytest.raises(ValueError, match=message):
        call(a, b)
