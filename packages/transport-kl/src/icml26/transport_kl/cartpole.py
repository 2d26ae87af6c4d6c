"""Cart-pole: nonlinear dynamics, linearisation about upright, noisy closed-loop rollouts.

State ``(x, x_dot, theta, theta_dot)`` with ``theta = 0`` upright; input the horizontal force
on the cart. Dynamics of Barto, Sutton & Anderson (1983) (pole as a uniform rod of half length
``l``), integrated with RK4 under a zero-order-hold force. The discrete linear model ``(A, B)``
used for the Riccati design is the exact Jacobian of that RK4 map at the upright equilibrium
(``jax.jacfwd``); the gains are then applied to the *nonlinear* model with additive Gaussian
process noise ``w ~ N(0, Sigma_w)`` and force saturation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from icml26.transport_kl._x64 import x64
from icml26.transport_kl.ode import rk4_step

__all__ = ["CartPole", "linearise", "rollouts"]


@dataclass(frozen=True)
class CartPole:
    """Physical parameters (SI units) and the time step."""

    cart_mass: float = 1.0
    pole_mass: float = 0.1
    half_length: float = 0.5
    gravity: float = 9.81
    dt: float = 0.02

    def __post_init__(self) -> None:
        for name in ("cart_mass", "pole_mass", "half_length", "gravity", "dt"):
            if not getattr(self, name) > 0:
                raise ValueError(f"CartPole.{name} must be > 0, got {getattr(self, name)}")


def _accel(p: CartPole, s: Array, force: Array) -> Array:
    _, xd, th, thd = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    total = p.cart_mass + p.pole_mass
    sin, cos = jnp.sin(th), jnp.cos(th)
    temp = (force + p.pole_mass * p.half_length * thd**2 * sin) / total
    th_acc = (p.gravity * sin - cos * temp) / (
        p.half_length * (4.0 / 3.0 - p.pole_mass * cos**2 / total)
    )
    x_acc = temp - p.pole_mass * p.half_length * th_acc * cos / total
    return jnp.stack([xd, x_acc, thd, th_acc], axis=-1)


def step(p: CartPole, s: Array, force: Array) -> Array:
    """One RK4 step of length ``p.dt`` with constant force."""
    return rk4_step(lambda _t, x: _accel(p, x, force), 0.0, s, p.dt)


@x64
def linearise(p: CartPole) -> tuple[np.ndarray, np.ndarray]:
    """``(A, B)``: Jacobians of the discrete RK4 map at the upright equilibrium, zero force."""
    s0 = jnp.zeros(4, jnp.float64)
    f0 = jnp.zeros((), jnp.float64)
    a = jax.jacfwd(lambda s: step(p, s, f0))(s0)
    b = jax.jacfwd(lambda f: step(p, s0, f))(f0)
    return np.asarray(a), np.asarray(b).reshape(4, 1)


@partial(jax.jit, static_argnames=("p", "horizon"))
def _rollouts(
    p: CartPole,
    gain: Array,
    x0: Array,
    noise: Array,
    q: Array,
    r: Array,
    gamma: Array,
    force_limit: Array,
    *,
    horizon: int,
) -> tuple[Array, Array, Array, Array]:
    def body(s: Array, w: Array) -> tuple[Array, tuple[Array, Array, Array]]:
        u = jnp.clip(-(s @ gain.T)[..., 0], -force_limit, force_limit)
        cost = jnp.einsum("ni,ij,nj->n", s, q, s) + r * u**2
        s_next = step(p, s, u) + w
        return s_next, (cost, s[..., 2], s[..., 0])

    _, (costs, thetas, xs) = jax.lax.scan(body, x0, noise)
    disc = gamma ** jnp.arange(horizon, dtype=x0.dtype)
    return disc @ costs, thetas, xs, costs


@x64
def rollouts(
    p: CartPole,
    gain: Any,
    *,
    x0: Any,
    noise_cov: Any,
    key: Array,
    horizon: int,
    q: Any,
    r: float,
    gamma: float,
    force_limit: float,
) -> dict[str, np.ndarray]:
    """Noisy nonlinear closed-loop rollouts under ``u = clip(-K s)`` from each row of ``x0``.

    Returns ``cost`` (discounted, per rollout), ``theta`` and ``x`` trajectories ``(T, n)``.
    """
    gain = np.asarray(gain, float).reshape(1, 4)
    if not np.all(np.isfinite(gain)):
        raise ValueError("the gain contains NaN or inf (the Riccati solve failed)")
    x0 = jnp.asarray(x0, jnp.float64)
    w, v = np.linalg.eigh(np.asarray(noise_cov, float))
    root = v * np.sqrt(np.maximum(w, 0.0))
    z = jax.random.normal(key, (horizon, x0.shape[0], 4), jnp.float64) @ jnp.asarray(root.T)
    cost, thetas, xs, _ = _rollouts(
        p,
        jnp.asarray(gain),
        x0,
        z,
        jnp.asarray(q, jnp.float64),
        jnp.asarray(r, jnp.float64),
        jnp.asarray(gamma, jnp.float64),
        jnp.asarray(force_limit, jnp.float64),
        horizon=horizon,
    )
    return {"cost": np.asarray(cost), "theta": np.asarray(thetas), "x": np.asarray(xs)}
