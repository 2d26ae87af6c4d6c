"""One classical Runge-Kutta (RK4) step, shared by every integrator of the package.

The moment ODE of :mod:`~icml26.transport_kl.flow`, the particle flow of
:mod:`~icml26.transport_kl.elliptic`, the ensemble Kalman flow of
:mod:`~icml26.transport_kl.kalman` and the cart-pole of :mod:`~icml26.transport_kl.cartpole`
all take fixed-step RK4 steps inside a ``jax.lax.scan``; the state may be any pytree of arrays
(e.g. ``(mean, covariance, accumulated metric)``). A fixed step keeps the scans static and the
closed-form checks' error at ``O(h^4)``; an adaptive solver (diffrax) would add a dependency
and dynamic control flow for no gain at these sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import jax

__all__ = ["rk4_step"]

State = TypeVar("State")


def rk4_step(f: Callable[[Any, State], State], t: Any, y: State, h: Any) -> State:
    """``y(t + h)`` by RK4 for ``y' = f(t, y)``; ``y`` and ``f``'s value share one pytree structure."""

    def axpy(x: State, k: State, c: Any) -> State:
        return jax.tree_util.tree_map(lambda xi, ki: xi + c * ki, x, k)

    k1 = f(t, y)
    k2 = f(t + h / 2, axpy(y, k1, h / 2))
    k3 = f(t + h / 2, axpy(y, k2, h / 2))
    k4 = f(t + h, axpy(y, k3, h))
    return jax.tree_util.tree_map(
        lambda yi, a, b, c, d: yi + h / 6 * (a + 2 * b + 2 * c + d), y, k1, k2, k3, k4
    )
