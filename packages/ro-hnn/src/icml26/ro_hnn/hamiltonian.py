"""Latent dynamics: the geometric HNN of RO-HNN, a plain HNN and a neural ODE.

* :class:`GeometricHNN`: ``H(q, p) = ½ pᵀ M^{-1}(q) p + V(q)`` with ``M^{-1}(q)`` produced by an
  SPD network (symmetric positive definite for every ``q`` by construction), ``V`` an MLP, and
  an optional SPD damping ``D(q)``: ``dq/dt = ∂H/∂p``, ``dp/dt = -∂H/∂q - D(q) ∂H/∂p``.
  Integrated by Strang-split Störmer-Verlet (:func:`icml26.ro_hnn.integrators.strang_step`).
* :class:`PlainHNN`: ``H = MLP(q, p)`` (Greydanus et al. 2019), optional constant diagonal
  damping; the same integrator. Used as the full-order baseline.
``input_scale`` (``1 / std`` of the training coordinates) normalises the networks' inputs.

* :class:`NeuralODE`: ``dx/dt = MLP(x)`` integrated by RK4 (no structure), for the AE baseline.

Each exposes ``vector_field(x)`` and ``step(x, h)`` on one state ``x = (q, p)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from flax import nnx

from icml26.ro_hnn.autoencoder import split_state
from icml26.ro_hnn.integrators import rk4_step, strang_step
from icml26.ro_hnn.layers import MLP
from icml26.ro_hnn.manifolds import spd_from_cholesky, tril_size

__all__ = ["GeometricHNN", "NeuralODE", "PlainHNN", "SPDField"]

_SOFTPLUS_INV_1 = 0.5413248546129181  # softplus^{-1}(1)


class SPDField(nnx.Module):
    """``q -> L(q) L(q)ᵀ + ε I`` with ``L`` lower triangular, positive diagonal (Cholesky network).

    At initialisation ``L(q) ≈ scale · I`` (the last layer is scaled down), so ``M^{-1} ≈ I``
    for ``scale = 1``.
    """

    def __init__(
        self,
        d: int,
        hidden: Sequence[int],
        *,
        scale: float = 1.0,
        eps: float = 1e-4,
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        self.d, self.eps = d, eps
        self.net = MLP([d, *hidden, tril_size(d)], rngs=rngs, last_scale=0.1, dtype=dtype)
        rows, cols = jnp.tril_indices(d)
        diag_raw = float(jnp.log(jnp.expm1(jnp.asarray(scale))))
        self.offset = nnx.Param(jnp.where(rows == cols, diag_raw, 0.0).astype(dtype))

    def __call__(self, q: jax.Array) -> jax.Array:
        return spd_from_cholesky(self.net(q) + self.offset[...], self.d, self.eps)


class GeometricHNN(nnx.Module):
    """The geometric Hamiltonian neural network on the latent space (see module doc).

    Args:
        d: latent configuration dimension.
        hidden: hidden widths of the ``M^{-1}``, ``V`` and ``D`` networks.
        damped: learn an SPD damping ``D(q)`` (for dissipative systems).
        iterations: fixed-point iterations of the implicit Störmer-Verlet stages.
        input_scale: the networks see ``z * input_scale``.
        frequency: the potential's scale ``ω_s``: ``V = ω_s² (½ qᵀ K q + MLP(q))``, so the
            learned stiffness starts at frequencies of order ``ω_s`` (the data's typical
            ``rms(p) / rms(q)``, :class:`icml26.ro_hnn.data.Reduction`) instead of ~1: with
            Adam's bounded steps a stiff system (the wave's reduced frequencies 10-19) is
            otherwise out of reach in a few thousand steps.
        rngs: Flax NNX random streams.
        dtype: parameter dtype (float64).
    """

    def __init__(
        self,
        d: int,
        *,
        hidden: Sequence[int] = (32, 32),
        damped: bool = False,
        iterations: int = 4,
        input_scale: float = 1.0,
        frequency: float = 1.0,
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        if d < 1:
            raise ValueError(f"latent dimension must be >= 1, got {d}")
        if not input_scale > 0:
            raise ValueError(f"input_scale must be positive, got {input_scale}")
        if not frequency > 0:
            raise ValueError(f"frequency must be positive, got {frequency}")
        self.d, self.iterations = d, iterations
        self.input_scale = float(input_scale)
        self.frequency = float(frequency)
        self.inverse_mass = SPDField(d, hidden, rngs=rngs, dtype=dtype)
        self.potential_net = MLP([d, *hidden, 1], rngs=rngs, dtype=dtype)
        # a learnable quadratic part keeps V bounded below near the data: ½ qᵀ K q, K SPD.
        self.stiffness = nnx.Param(jnp.zeros(tril_size(d), dtype))
        self.damping_field = (
            SPDField(d, hidden, scale=0.1, rngs=rngs, dtype=dtype) if damped else None
        )

    def potential(self, q: jax.Array) -> jax.Array:
        """The potential ``V(q) = ω_s² (½ qᵀ K q + MLP(q))`` (``K`` SPD, learned).

        Args:
            q: ``(d,)`` latent configuration.

        Returns:
            The scalar ``V(q)``.
        """
        k = spd_from_cholesky(self.stiffness[...], self.d, 0.0)
        quadratic = 0.5 * q @ k @ q + self.potential_net(q * self.input_scale)[0]
        return self.frequency**2 * quadratic

    def mass_inverse(self, q: jax.Array) -> jax.Array:
        """``M^{-1}(q)``, SPD for every ``q``."""
        return self.inverse_mass(q * self.input_scale)

    def damping_matrix(self, q: jax.Array) -> jax.Array:
        """``D(q)``, SPD for every ``q``."""
        assert self.damping_field is not None
        return self.damping_field(q * self.input_scale)

    def hamiltonian(self, q: jax.Array, p: jax.Array) -> jax.Array:
        """``H(q, p) = ½ pᵀ M⁻¹(q) p + V(q)``.

        Args:
            q: ``(d,)`` latent configuration.
            p: ``(d,)`` latent momentum.

        Returns:
            The scalar ``H``.
        """
        return 0.5 * p @ self.mass_inverse(q) @ p + self.potential(q)

    def energy(self, x: jax.Array) -> jax.Array:
        """The learned Hamiltonian ``H(q, p)`` of a latent state ``x = (q, p)``, float64 under
        ``jax.enable_x64`` whatever the caller's global setting (never a silent float32 value).

        Args:
            x: ``(2d,)`` latent state.

        Returns:
            The scalar learned energy, float64.
        """
        with jax.enable_x64(True):
            q, p = split_state(jnp.asarray(x, jnp.float64))
            return self.hamiltonian(q, p)

    def velocity(self, q: jax.Array, p: jax.Array) -> jax.Array:
        """``∂H/∂p = M^{-1}(q) p`` in closed form."""
        return self.mass_inverse(q) @ p

    def damping_operator(self, q: jax.Array) -> jax.Array:
        """``B(q) = D(q) M^{-1}(q)``: ``dp/dt ⊃ -D ∂H/∂p = -B p``."""
        return self.damping_matrix(q) @ self.mass_inverse(q)

    def vector_field(self, x: jax.Array) -> jax.Array:
        """Hamilton's equations (with the damping ``-D(q) q̇`` when learned) at ``x``.

        Args:
            x: ``(2d,)`` latent state ``(q, p)``.

        Returns:
            ``(2d,)`` time derivative ``(dq/dt, dp/dt)``.
        """
        q, p = split_state(x)
        dq = self.velocity(q, p)
        dp = -jax.grad(self.hamiltonian, argnums=0)(q, p)
        if self.damping_field is not None:
            dp = dp - self.damping_matrix(q) @ dq
        return jnp.concatenate([dq, dp])

    def step(self, x: jax.Array, h: float | jax.Array) -> jax.Array:
        """One structure-preserving step (``strang_step``: damping half-step, Störmer-Verlet
        step on ``H``, damping half-step; no damping when none is learned).

        Args:
            x: ``(2d,)`` latent state.
            h: the step size.

        Returns:
            ``(2d,)`` state after ``h``.
        """
        damping = self.damping_operator if self.damping_field is not None else None
        return strang_step(
            self.hamiltonian, damping, x, h, iterations=self.iterations, velocity=self.velocity
        )


class PlainHNN(nnx.Module):
    """``H(q, p) = MLP(q, p)``; optional constant diagonal damping ``dp/dt ⊃ -diag(γ) p``."""

    def __init__(
        self,
        n: int,
        *,
        hidden: Sequence[int] = (128, 128),
        damped: bool = False,
        iterations: int = 4,
        input_scale: float = 1.0,
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        self.n, self.iterations = n, iterations
        self.input_scale = float(input_scale)
        self.net = MLP([2 * n, *hidden, 1], rngs=rngs, dtype=dtype)
        self.damping_raw = nnx.Param(jnp.full(n, -2.0, dtype)) if damped else None

    def hamiltonian(self, q: jax.Array, p: jax.Array) -> jax.Array:
        return self.net(jnp.concatenate([q, p]) * self.input_scale)[0]

    def energy(self, x: jax.Array) -> jax.Array:
        """The learned ``H`` of a full state, float64 (as :meth:`GeometricHNN.energy`)."""
        with jax.enable_x64(True):
            q, p = split_state(jnp.asarray(x, jnp.float64))
            return self.hamiltonian(q, p)

    def damping_operator(self, q: jax.Array) -> jax.Array:
        assert self.damping_raw is not None
        return jax.nn.softplus(self.damping_raw[...])  # diagonal, as a vector

    def vector_field(self, x: jax.Array) -> jax.Array:
        q, p = split_state(x)
        dq = jax.grad(self.hamiltonian, argnums=1)(q, p)
        dp = -jax.grad(self.hamiltonian, argnums=0)(q, p)
        if self.damping_raw is not None:
            dp = dp - jax.nn.softplus(self.damping_raw[...]) * p
        return jnp.concatenate([dq, dp])

    def step(self, x: jax.Array, h: float | jax.Array) -> jax.Array:
        damping = self.damping_operator if self.damping_raw is not None else None
        return strang_step(self.hamiltonian, damping, x, h, iterations=self.iterations)


class NeuralODE(nnx.Module):
    """``dx/dt = f(x)``, ``f`` an MLP on the latent state, RK4 steps."""

    def __init__(
        self,
        dim: int,
        *,
        hidden: Sequence[int] = (32, 32),
        input_scale: float = 1.0,
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        self.input_scale = float(input_scale)
        self.net = MLP([dim, *hidden, dim], rngs=rngs, dtype=dtype)

    def vector_field(self, x: jax.Array) -> jax.Array:
        return self.net(x * self.input_scale) / self.input_scale

    def step(self, x: jax.Array, h: float | jax.Array) -> jax.Array:
        return rk4_step(self.vector_field, x, h)
