"""Time integrators for learned dynamics: symplectic Störmer-Verlet with Strang-split damping, RK4.

diffrax has no symplectic solver for non-separable Hamiltonians, so the generalised
Störmer-Verlet (leapfrog) scheme is written here (Hairer, Lubich & Wanner, *Geometric
Numerical Integration*, eq. VI.3.4)::

    p_{1/2} = p_0 - h/2 ∂_q H(q_0, p_{1/2})                      (implicit in p_{1/2})
    q_1     = q_0 + h/2 [∂_p H(q_0, p_{1/2}) + ∂_p H(q_1, p_{1/2})]  (implicit in q_1)
    p_1     = p_{1/2} - h/2 ∂_q H(q_1, p_{1/2})

Both implicit stages are solved by a fixed number of fixed-point iterations (static shapes,
differentiable); for a separable ``H`` one iteration is exact and the scheme is the explicit
leapfrog. Damping ``dp/dt = -B(q) p`` (``B = D(q) M^{-1}(q)``, similar to an SPD matrix) is
added by Strang splitting: half a step of the damping flow by the Cayley transform
``(I + h/4 B)^{-1} (I - h/4 B)`` (A-stable, contracting), a Störmer-Verlet step, then half a
damping step again. The composition is second order and conformally symplectic.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

__all__ = [
    "cayley_damping",
    "rk4_step",
    "rollout",
    "stormer_verlet_step",
    "strang_step",
]

Hamiltonian = Callable[[jax.Array, jax.Array], jax.Array]
StepFn = Callable[[jax.Array], jax.Array]


def stormer_verlet_step(
    hamiltonian: Hamiltonian,
    q: jax.Array,
    p: jax.Array,
    h: float | jax.Array,
    *,
    iterations: int = 4,
    velocity: Callable[[jax.Array, jax.Array], jax.Array] | None = None,
) -> tuple[jax.Array, jax.Array]:
    """One generalised Störmer-Verlet step of ``H(q, p)`` (scalar function of two vectors).

    Args:
        hamiltonian: ``H(q, p) -> scalar``.
        q, p: position and momentum, shape ``(d,)``.
        h: step size.
        iterations: fixed-point iterations for each implicit stage (>= 1).
        velocity: ``∂H/∂p`` in closed form, if known (else by automatic differentiation).

    Returns:
        ``(q_1, p_1)``.
    """
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    dH_dq = jax.grad(hamiltonian, argnums=0)
    dH_dp = velocity if velocity is not None else jax.grad(hamiltonian, argnums=1)

    def stage1(_: int, p_half: jax.Array) -> jax.Array:
        return p - 0.5 * h * dH_dq(q, p_half)

    p_half = jax.lax.fori_loop(0, iterations, stage1, p - 0.5 * h * dH_dq(q, p))
    v0 = dH_dp(q, p_half)

    def stage2(_: int, q_new: jax.Array) -> jax.Array:
        return q + 0.5 * h * (v0 + dH_dp(q_new, p_half))

    q1 = jax.lax.fori_loop(0, iterations, stage2, q + h * v0)
    p1 = p_half - 0.5 * h * dH_dq(q1, p_half)
    return q1, p1


def cayley_damping(b: jax.Array, p: jax.Array, h: float | jax.Array) -> jax.Array:
    """Advance ``dp/dt = -B p`` by ``h`` with the Cayley transform ``(I + h/2 B)^{-1}(I - h/2 B) p``.

    ``b`` is a matrix, or a vector meaning the diagonal matrix ``diag(b)``.
    """
    if b.ndim == 1:
        return p * (1.0 - 0.5 * h * b) / (1.0 + 0.5 * h * b)
    eye = jnp.eye(b.shape[-1], dtype=b.dtype)
    return jnp.linalg.solve(eye + 0.5 * h * b, p - 0.5 * h * (b @ p))


def strang_step(
    hamiltonian: Hamiltonian,
    damping: Callable[[jax.Array], jax.Array] | None,
    x: jax.Array,
    h: float | jax.Array,
    *,
    iterations: int = 4,
    velocity: Callable[[jax.Array, jax.Array], jax.Array] | None = None,
) -> jax.Array:
    """Damping half-step, Störmer-Verlet step, damping half-step on ``x = (q, p)``.

    Args:
        hamiltonian: ``H(q, p)``.
        damping: ``q -> B(q)`` with ``dp/dt = -B(q) p`` the dissipative part, or ``None``.
        x: the state, shape ``(2d,)``.
        h: step size.
        iterations: fixed-point iterations of the implicit stages.
        velocity: ``∂H/∂p`` in closed form, if known.
    """
    if x.ndim != 1 or x.shape[0] % 2:
        raise ValueError(
            f"a phase-space state must be a vector of even length, got shape {x.shape}"
        )
    d = x.shape[0] // 2
    q, p = x[:d], x[d:]
    if damping is not None:
        p = cayley_damping(damping(q), p, 0.5 * h)
    q, p = stormer_verlet_step(hamiltonian, q, p, h, iterations=iterations, velocity=velocity)
    if damping is not None:
        p = cayley_damping(damping(q), p, 0.5 * h)
    return jnp.concatenate([q, p])


def rk4_step(field: StepFn, x: jax.Array, h: float | jax.Array) -> jax.Array:
    """One classical Runge-Kutta step of ``dx/dt = field(x)`` (not symplectic: the NODE baseline)."""
    k1 = field(x)
    k2 = field(x + 0.5 * h * k1)
    k3 = field(x + 0.5 * h * k2)
    k4 = field(x + h * k3)
    return x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def rollout(step: StepFn, x0: jax.Array, steps: int) -> jax.Array:
    """``x0 (..., D)`` -> trajectory ``(steps + 1, D)`` by repeated ``step`` (one state)."""

    def body(x: jax.Array, _: None) -> tuple[jax.Array, jax.Array]:
        x = step(x)
        return x, x

    _, xs = jax.lax.scan(body, x0, None, length=steps)
    return jnp.concatenate([x0[None], xs])
