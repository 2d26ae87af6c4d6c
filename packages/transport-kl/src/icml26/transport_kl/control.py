r"""KL-regularised linear-quadratic control and the penalty each divergence induces.

Linear time-invariant dynamics with Gaussian process noise ``x+ = A x + B u + w``,
``w ~ N(0, Sigma_w)``. Regularising the controlled transition ``N(A x + B u, Sigma_w)``
towards the passive one ``N(A x, Sigma_w)`` (equal covariances, mean shift ``B u``) gives a
quadratic control penalty ``beta * D = u^T R u``:

===========  ====================================  ============================================
divergence   ``R``                                 as ``Sigma_w = rho S -> 0``
===========  ====================================  ============================================
``kl``       ``beta/2 B^T Sigma_w^{-1} B``          blows up like ``1/rho``: feedback vanishes
``wkl``      ``beta/2 B^T B``                       independent of the noise
``kwkl``     ``beta/2 B^T (Sigma_w + lam I)^{-1} B``  tends to ``beta/(2 lam) B^T B``
``w2``       ``beta B^T B`` (Bures-W2 squared)      independent of the noise
``lqr``      ``I`` (plain LQR baseline)             -
===========  ====================================  ============================================

The discounted problem ``min E sum_k gamma^k (x_k^T Q x_k + u_k^T R u_k)`` is solved by the
discounted Riccati equation (structured doubling on ``(sqrt(gamma) A, sqrt(gamma) B)``).
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

__all__ = [
    "DIVERGENCES",
    "RiccatiSolution",
    "closed_loop_cost_exact",
    "double_integrator",
    "penalty_matrix",
    "riccati_residual",
    "simulate_linear",
    "solve_discounted_riccati",
]

DIVERGENCES = ("kl", "wkl", "kwkl", "w2", "lqr")


def double_integrator(dt: float = 0.1, dim: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``(A, B)`` of a ``dim``-D double integrator (position, velocity), zero-order hold."""
    if dt <= 0 or dim < 1:
        raise ValueError(f"need dt > 0 and dim >= 1, got dt={dt}, dim={dim}")
    eye, zero = np.eye(dim), np.zeros((dim, dim))
    a = np.block([[eye, dt * eye], [zero, eye]])
    b = np.vstack([0.5 * dt**2 * eye, dt * eye])
    return a, b


def penalty_matrix(
    divergence: str, b: Any, noise_cov: Any, *, beta: float = 1.0, lam: float = 1.0
) -> np.ndarray:
    """The control weight ``R`` induced by ``beta * D(N(Ax+Bu, Sw) | N(Ax, Sw))``.

    Returns a matrix with ``inf`` entries when ``kl`` meets a singular noise covariance (the
    KL is infinite for any ``u`` with ``B u`` outside ``range(Sigma_w)``).
    """
    b = np.asarray(b, float)
    sw = np.asarray(noise_cov, float)
    n, m = b.shape
    if sw.shape != (n, n):
        raise ValueError(f"noise_cov must be ({n}, {n}) to match B, got {sw.shape}")
    if beta <= 0 or lam < 0:
        raise ValueError(f"need beta > 0 and lam >= 0, got beta={beta}, lam={lam}")
    if divergence == "kl":
        w, v = np.linalg.eigh(sw)
        if w[0] <= n * np.finfo(float).eps * max(w[-1], 1e-300):
            return np.full((m, m), np.inf)
        return 0.5 * beta * (b.T @ v) @ np.diag(1.0 / w) @ (v.T @ b)
    if divergence == "wkl":
        return 0.5 * beta * b.T @ b
    if divergence == "kwkl":
        if lam == 0:
            return penalty_matrix("kl", b, sw, beta=beta)
        return 0.5 * beta * b.T @ np.linalg.solve(sw + lam * np.eye(n), b)
    if divergence == "w2":
        return beta * b.T @ b
    if divergence == "lqr":
        return np.eye(m)
    raise ValueError(f"unknown divergence {divergence!r}; choose from {', '.join(DIVERGENCES)}")


@dataclass(frozen=True)
class RiccatiSolution:
    """``P`` (value matrix), ``K`` (``u = -K x``) and diagnostics."""

    P: np.ndarray
    K: np.ndarray
    converged: bool
    iterations: int
    residual: float  # relative residual of the Riccati equation

    @property
    def ok(self) -> bool:
        return bool(
            self.converged
            and np.all(np.isfinite(self.P))
            and np.all(np.isfinite(self.K))
            and self.residual < 1e-8
        )


def riccati_residual(a: Any, b: Any, q: Any, r: Any, gamma: float, p: Any) -> float:
    """``|P - Q - g A^T P A + g^2 A^T P B (R + g B^T P B)^{-1} B^T P A| / |P|`` (Frobenius)."""
    a, b, q, r, p = (np.asarray(x, float) for x in (a, b, q, r, p))
    gain = np.linalg.solve(r + gamma * b.T @ p @ b, gamma * b.T @ p @ a)
    rhs = q + gamma * a.T @ p @ a - gamma * a.T @ p @ b @ gain
    return float(np.linalg.norm(p - rhs)) / max(float(np.linalg.norm(p)), 1e-300)


@partial(jax.jit, static_argnames=("max_iter",))
def _sda(a: Array, g: Array, h: Array, *, max_iter: int) -> tuple[Array, Array, Array]:
    """Structured doubling for ``P = Q + A^T P (I + G P)^{-1} A`` (quadratic convergence)."""
    eye = jnp.eye(a.shape[0], dtype=a.dtype)

    State = tuple[Array, Array, Array, Array, Array]

    def cond(state: State) -> Array:
        _, _, _, k, delta = state
        return (k < max_iter) & (delta > 1e-14)

    def body(state: State) -> State:
        a_k, g_k, h_k, k, _ = state
        w = eye + g_k @ h_k
        wa = jnp.linalg.solve(w, a_k)
        wg = jnp.linalg.solve(w, g_k)
        a_n = a_k @ wa
        g_n = g_k + a_k @ wg @ a_k.T
        h_n = h_k + a_k.T @ h_k @ wa
        h_n = 0.5 * (h_n + h_n.T)
        delta = jnp.linalg.norm(h_n - h_k) / jnp.maximum(jnp.linalg.norm(h_n), 1e-300)
        return a_n, 0.5 * (g_n + g_n.T), h_n, k + 1, delta

    init: State = (a, g, h, jnp.asarray(0), jnp.asarray(jnp.inf, a.dtype))
    _, _, p, k, delta = jax.lax.while_loop(cond, body, init)
    return p, k, delta


@x64
def solve_discounted_riccati(
    a: Any, b: Any, q: Any, r: Any, gamma: float = 1.0, *, max_iter: int = 80
) -> RiccatiSolution:
    """Discounted infinite-horizon LQR: ``P`` and the gain ``K = g (R + g B^T P B)^{-1} B^T P A``.

    ``R`` must be symmetric positive definite (``inf`` entries, e.g. the KL penalty with a
    singular noise, return a solution flagged not ``ok``).
    """
    a, b, q, r = (np.asarray(x, float) for x in (a, b, q, r))
    n, m = b.shape
    if a.shape != (n, n) or q.shape != (n, n) or r.shape != (m, m):
        raise ValueError(f"shapes do not fit: A {a.shape}, B {b.shape}, Q {q.shape}, R {r.shape}")
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    nan = RiccatiSolution(np.full((n, n), np.nan), np.full((m, n), np.nan), False, 0, np.inf)
    if not np.all(np.isfinite(r)):
        return nan
    try:
        r_inv = np.linalg.inv(r)
    except np.linalg.LinAlgError:
        return nan
    sa, sb = np.sqrt(gamma) * a, np.sqrt(gamma) * b
    p, k, delta = _sda(
        jnp.asarray(sa), jnp.asarray(sb @ r_inv @ sb.T), jnp.asarray(q), max_iter=max_iter
    )
    p = np.asarray(p)
    if not np.all(np.isfinite(p)):
        return nan
    gain = np.linalg.solve(r + gamma * b.T @ p @ b, gamma * b.T @ p @ a)
    return RiccatiSolution(
        P=p,
        K=gain,
        converged=bool(float(delta) <= 1e-12),
        iterations=int(k),
        residual=riccati_residual(a, b, q, r, gamma, p),
    )


@partial(jax.jit, static_argnames=("horizon",))
def _rollouts(
    a_cl: Array,
    k: Array,
    q_eval: Array,
    r_eval: Array,
    x0: Array,
    noise: Array,
    gamma: Array,
    *,
    horizon: int,
) -> Array:
    def step(x: Array, w: Array) -> tuple[Array, Array]:
        u = -x @ k.T
        c = jnp.einsum("ni,ij,nj->n", x, q_eval, x) + jnp.einsum("ni,ij,nj->n", u, r_eval, u)
        return x @ a_cl.T + w, c

    _, costs = jax.lax.scan(step, x0, noise)  # (T, n)
    disc = gamma ** jnp.arange(horizon, dtype=x0.dtype)
    return disc @ costs


@x64
def simulate_linear(
    a: Any,
    b: Any,
    gain: Any,
    noise_cov: Any,
    *,
    q_eval: Any,
    r_eval: Any,
    gamma: float,
    horizon: int,
    x0: Any,
    key: Array,
) -> np.ndarray:
    """Monte-Carlo discounted costs ``sum_k gamma^k (x^T Q x + u^T R u)``, one per initial state."""
    a, b, gain = (np.asarray(x, float) for x in (a, b, gain))
    x0 = jnp.asarray(x0, jnp.float64)
    n = a.shape[0]
    w, v = np.linalg.eigh(np.asarray(noise_cov, float))
    root = v * np.sqrt(np.maximum(w, 0.0))
    z = jax.random.normal(key, (horizon, x0.shape[0], n), jnp.float64)
    costs = _rollouts(
        jnp.asarray(a - b @ gain),
        jnp.asarray(gain),
        jnp.asarray(q_eval, jnp.float64),
        jnp.asarray(r_eval, jnp.float64),
        x0,
        z @ jnp.asarray(root.T),
        jnp.asarray(gamma, jnp.float64),
        horizon=horizon,
    )
    return np.asarray(costs)


def closed_loop_cost_exact(
    a: Any,
    b: Any,
    gain: Any,
    noise_cov: Any,
    *,
    q_eval: Any,
    r_eval: Any,
    gamma: float,
    x0_cov: Any,
    horizon: int | None = None,
) -> float:
    """Expected discounted cost of ``u = -K x`` from ``x0 ~ N(0, x0_cov)`` (Lyapunov sums).

    The reference for :func:`simulate_linear`; ``horizon=None`` is the infinite horizon.
    """
    a, b, gain = (np.asarray(x, float) for x in (a, b, gain))
    a_cl = a - b @ gain
    stage = np.asarray(q_eval, float) + gain.T @ np.asarray(r_eval, float) @ gain
    cov = np.asarray(x0_cov, float)
    sw = np.asarray(noise_cov, float)
    total, disc = 0.0, 1.0
    steps = horizon if horizon is not None else 100_000
    for _ in range(steps):
        total += disc * float(np.trace(stage @ cov))
        cov = a_cl @ cov @ a_cl.T + sw
        disc *= gamma
        if horizon is None and disc * np.trace(stage @ cov) < 1e-14 * max(total, 1e-300):
            break
    return total
