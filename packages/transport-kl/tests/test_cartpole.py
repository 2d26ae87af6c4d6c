"""Cart-pole model: equilibrium, linearisation vs finite differences, rollouts."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from icml26.transport_kl import cartpole, control


def _step_np(p: cartpole.CartPole, s: np.ndarray, f: float) -> np.ndarray:
    with jax.enable_x64(True):
        return np.asarray(cartpole.step(p, jnp.asarray(s), jnp.asarray(f)))


def test_upright_is_an_unstable_equilibrium_and_jacobian_matches_fd() -> None:
    p = cartpole.CartPole()
    np.testing.assert_allclose(_step_np(p, np.zeros(4), 0.0), 0.0, atol=1e-15)
    a, b = cartpole.linearise(p)
    h = 1e-6
    a_fd = np.column_stack(
        [(_step_np(p, h * e, 0.0) - _step_np(p, -h * e, 0.0)) / (2 * h) for e in np.eye(4)]
    )
    b_fd = (_step_np(p, np.zeros(4), h) - _step_np(p, np.zeros(4), -h)) / (2 * h)
    np.testing.assert_allclose(a, a_fd, atol=1e-8)
    np.testing.assert_allclose(b.ravel(), b_fd, atol=1e-8)
    assert np.max(np.abs(np.linalg.eigvals(a))) > 1.05  # the pole falls without control


@pytest.mark.slow
def test_lqr_gain_stabilises_nonlinear_model() -> None:
    p = cartpole.CartPole()
    a, b = cartpole.linearise(p)
    sol = control.solve_discounted_riccati(a, b, np.eye(4), np.eye(1), 0.99)
    x0 = np.array([[0.1, 0.0, 0.1, 0.0], [-0.2, 0.1, -0.1, 0.0]] * 2)
    horizon = 50  # the smoke profile's shapes: one compilation for the whole session
    out = cartpole.rollouts(
        p,
        sol.K,
        x0=x0,
        noise_cov=1e-8 * np.eye(4),
        key=jax.random.key(0),
        horizon=horizon,
        q=np.eye(4),
        r=0.0,
        gamma=1.0,
        force_limit=50.0,
    )
    assert out["theta"].shape == (horizon, 4)
    assert np.all(np.abs(out["theta"][-1]) < 0.5 * np.abs(x0[:, 2]))
    with pytest.raises(ValueError, match="NaN or inf"):
        cartpole.rollouts(
            p,
            np.full(4, np.nan),
            x0=x0,
            noise_cov=np.eye(4),
            key=jax.random.key(0),
            horizon=3,
            q=np.eye(4),
            r=0.0,
            gamma=1.0,
            force_limit=1.0,
        )


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="half_length must be > 0"):
        cartpole.CartPole(half_length=0.0)
