"""The shared RK4 step."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from icml26.transport_kl._x64 import x64
from icml26.transport_kl.ode import rk4_step


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
