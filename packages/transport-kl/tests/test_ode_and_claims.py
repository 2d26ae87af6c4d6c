"""The shared RK4 step, the exact cost split behind the weight sweep, and the sweep claim."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from icml26.transport_kl import control
from icml26.transport_kl._x64 import x64
from icml26.transport_kl.config import TransportKLConfig
from icml26.transport_kl.experiment import _exact_cost_parts
from icml26.transport_kl.ode import rk4_step
from icml26.transport_kl.paper import PAPER


@x64
def _integrate(steps: int) -> float:
    """``y' = (y, t)`` pytree: y0 = (1, 0); exact y(1) = (e, 1/2)."""
    h = 1.0 / steps
    y = (jnp.asarray(1.0), jnp.asarray(0.0))
    for k in range(steps):
        y = rk4_step(lambda t, s: (s[0], t), k * h, y, h)
    return float(abs(y[0] - np.e) + abs(y[1] - 0.5))


def test_rk4_step_is_fourth_order_on_a_pytree() -> None:
    e1, e2 = _integrate(8), _integrate(16)
    assert e2 < 1e-6
    assert 14.0 < e1 / e2 < 18.0  # halving h divides the error by ~2^4


def test_exact_cost_is_linear_in_the_evaluation_weight() -> None:
    """state + w * energy equals the Lyapunov cost evaluated with R_eval = w I directly."""
    cfg = TransportKLConfig(horizon=200)
    a, b = control.double_integrator(cfg.dt)
    q = np.eye(4)
    sw = 0.1 * np.diag([1e-5, 1e-5, 1.0, 1.0])
    sol = control.solve_discounted_riccati(a, b, q, np.eye(2), cfg.gamma)
    state, energy = _exact_cost_parts(a, b, sol.K, sw, q, cfg)
    for w in (1e-3, 0.3, 5.0):
        direct = control.closed_loop_cost_exact(
            a,
            b,
            sol.K,
            sw,
            q_eval=q,
            r_eval=w * np.eye(2),
            gamma=cfg.gamma,
            x0_cov=np.eye(4),
            horizon=cfg.horizon,
        )
        assert state + w * energy == pytest.approx(direct, rel=1e-12)


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def test_double_integrator_claim_fails_when_one_weight_favours_kl() -> None:
    """The claim is over the whole (noise, weight) sweep: one ratio >= 1 makes it false."""
    claim = _claim("better_than_kl_double_integrator")
    good = {
        f"cost_ratio_sweep.{d}_vs_kl.rho{k}.r{j}": 0.9
        for d in ("wkl", "kwkl")
        for k in range(3)
        for j in range(4)
    }
    assert claim.evaluate(good)["holds"] is True
    assert claim.evaluate({**good, "cost_ratio_sweep.kwkl_vs_kl.rho2.r3": 1.02})["holds"] is False
