"""The four models compared, as one interface: encode, step in latent space, decode.

========  ===========================================  =======================================
kind      reduction (autoencoder)                      latent dynamics
========  ===========================================  =======================================
rohnn     symplectic autoencoder (biorthogonal, exact)  geometric HNN, Strang/Störmer-Verlet
psd_hnn   PSD cotangent lift (linear, fixed)            geometric HNN, Strang/Störmer-Verlet
ae_node   unconstrained MLP autoencoder                 neural ODE, RK4
full_hnn  none (full phase space)                       plain HNN, Strang/Störmer-Verlet
========  ===========================================  =======================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from icml26.ro_hnn.autoencoder import (
    IdentityAutoencoder,
    MLPAutoencoder,
    PSDAutoencoder,
    SymplecticAutoencoder,
)
from icml26.ro_hnn.config import MODELS, Architecture
from icml26.ro_hnn.hamiltonian import GeometricHNN, NeuralODE, PlainHNN
from icml26.ro_hnn.integrators import rollout, strang_step

__all__ = [
    "MODELS",
    "Architecture",
    "GalerkinDynamics",
    "ReducedModel",
    "build_model",
    "psd_galerkin",
]


def _check_one(x: Any, dim: int, method: str, what: str) -> None:
    """Refuse anything but one finite ``(dim,)`` vector (batches go through ``jax.vmap``)."""
    shape = tuple(jnp.shape(x))
    if shape != (dim,):
        batch = f": for a batch use jax.vmap(model.{method})" if len(shape) > 1 else ""
        raise ValueError(f"{method} takes one {what} of shape ({dim},), got shape {shape}{batch}")
    if not isinstance(x, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(x))):
        raise ValueError(f"{method} got a non-finite {what} (NaN or inf entries)")


class ReducedModel(nnx.Module):
    """An autoencoder plus latent dynamics advanced ``substeps`` times per observation step ``dt``.

    Args:
        kind: the model's name (one of :data:`MODELS`).
        autoencoder: ``n``, ``d``, ``encode``, ``decode``.
        dynamics: ``step(z, h)`` (and ``energy(z)`` for Hamiltonian models).
        dt: the observation step.
        substeps: latent steps per observation step.
    """

    def __init__(
        self, kind: str, autoencoder: nnx.Module, dynamics: nnx.Module, *, dt: float, substeps: int
    ) -> None:
        self.kind = kind
        # duck-typed: an autoencoder (n, d, encode, decode) and dynamics (step[, energy])
        self.autoencoder: Any = autoencoder
        self.dynamics: Any = dynamics
        self.dt, self.substeps = float(dt), int(substeps)

    @property
    def full_dim(self) -> int:
        return 2 * int(self.autoencoder.n)

    @property
    def latent_dim(self) -> int:
        return 2 * int(self.autoencoder.d)

    def encode(self, x: jax.Array) -> jax.Array:
        """The latent state of a full state (float64 under ``jax.enable_x64``, whatever the
        caller's global setting: never a silent float32 result).

        Args:
            x: ``(2n,)`` full state.

        Returns:
            ``(2d,)`` latent state, float64.

        Raises:
            ValueError: ``x`` not of shape ``(2n,)`` (a batch ``(B, 2n)`` included: use
                ``jax.vmap(model.encode)``), or not finite.
        """
        _check_one(x, self.full_dim, "encode", "state")
        with jax.enable_x64(True):
            return self.autoencoder.encode(jnp.asarray(x, jnp.float64))

    def decode(self, z: jax.Array) -> jax.Array:
        """The full state of a latent state (float64 under ``jax.enable_x64``, like
        :meth:`encode`).

        Args:
            z: ``(2d,)`` latent state.

        Returns:
            ``(2n,)`` full state, float64.

        Raises:
            ValueError: ``z`` not of shape ``(2d,)`` (a batch included: use
                ``jax.vmap(model.decode)``), or not finite.
        """
        _check_one(z, self.latent_dim, "decode", "latent state")
        with jax.enable_x64(True):
            return self.autoencoder.decode(jnp.asarray(z, jnp.float64))

    def latent_step(self, z: jax.Array) -> jax.Array:
        """Advance a latent state by one data time step ``dt`` (``substeps`` dynamics steps).

        Args:
            z: ``(2d,)`` latent state.

        Returns:
            ``(2d,)`` latent state ``dt`` later.
        """
        h = self.dt / self.substeps
        for _ in range(self.substeps):
            z = self.dynamics.step(z, h)
        return z

    def predict(self, x0: jax.Array, steps: int) -> tuple[jax.Array, jax.Array]:
        """Roll out from one full state ``x0`` (float64, under ``jax.enable_x64``).

        Args:
            x0: ``(2n,)`` full state.
            steps: observation steps.

        Returns:
            Latent ``(steps+1, 2d)`` and decoded ``(steps+1, 2n)`` trajectories.

        Raises:
            ValueError: ``x0`` not of shape ``(2n,)`` (a batch ``(B, 2n)`` included: use
                ``jax.vmap(lambda x: model.predict(x, steps))``), or not finite.
        """
        shape = tuple(jnp.shape(x0))
        if shape != (self.full_dim,):
            raise ValueError(
                f"predict takes one state of shape ({self.full_dim},), got shape {shape}"
                + (
                    "; for a batch use jax.vmap(lambda x: model.predict(x, steps))"
                    if len(shape) > 1
                    else ""
                )
            )
        if not isinstance(x0, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(x0))):
            raise ValueError("predict got a non-finite initial state (NaN or inf entries)")
        with jax.enable_x64(True):
            z = rollout(self.latent_step, self.encode(jnp.asarray(x0, jnp.float64)), steps)
            return z, jax.vmap(self.decode)(z)


class GalerkinDynamics(nnx.Module):
    """The exact reduced Hamiltonian of a linear reduction: ``H_r(z) = H(Ψ(z))`` with the
    system's true ``H`` (a reference, not a learned model), integrated like the learned models.

    Args:
        energy: the true Hamiltonian of one full state (a hashable function).
        autoencoder: the (fixed) reduction whose decoder ``Ψ`` is used.
        iterations: fixed-point iterations of the implicit Störmer-Verlet stages.
    """

    def __init__(
        self, energy: Callable[[jax.Array], jax.Array], autoencoder: nnx.Module, iterations: int
    ) -> None:
        self.true_energy = energy
        self.decoder: Any = autoencoder
        self.iterations = int(iterations)

    def hamiltonian(self, q: jax.Array, p: jax.Array) -> jax.Array:
        """``H(Ψ(q, p))``."""
        return self.true_energy(self.decoder.decode(jnp.concatenate([q, p])))

    def energy(self, x: jax.Array) -> jax.Array:
        """``H(Ψ(x))`` of a latent state ``x = (q, p)``."""
        return self.true_energy(self.decoder.decode(x))

    def step(self, x: jax.Array, h: float | jax.Array) -> jax.Array:
        """One Störmer-Verlet step of ``H_r`` (:func:`~icml26.ro_hnn.integrators.strang_step`)."""
        return strang_step(self.hamiltonian, None, x, h, iterations=self.iterations)


def psd_galerkin(
    energy: Callable[[jax.Array], jax.Array],
    basis: jax.Array | np.ndarray,
    q_ref: jax.Array | np.ndarray,
    *,
    dt: float,
    substeps: int = 1,
    iterations: int = 3,
) -> ReducedModel:
    """PSD-Galerkin: the true Hamiltonian projected onto a PSD basis (the reference a PSD + HNN
    model can at best learn, up to the integrator's error).

    Args:
        energy: the system's true Hamiltonian of one full state (conservative systems).
        basis: ``(n, d)`` orthonormal PSD basis.
        q_ref: ``(n,)`` reference configuration.
        dt: observation step.
        substeps: Störmer-Verlet steps per observation step.
        iterations: fixed-point iterations of the implicit stages.

    Returns:
        A :class:`ReducedModel` of kind ``psd_galerkin`` (no trainable parameters).
    """
    with jax.enable_x64(True):
        ae = PSDAutoencoder(jnp.asarray(basis, jnp.float64), jnp.asarray(q_ref, jnp.float64))
        dynamics = GalerkinDynamics(energy, ae, iterations)
        return ReducedModel("psd_galerkin", ae, dynamics, dt=dt, substeps=substeps)


def build_model(
    kind: str,
    *,
    n: int,
    dt: float,
    damped: bool,
    arch: Architecture,
    basis: jax.Array | np.ndarray | None = None,
    q_ref: jax.Array | np.ndarray | None = None,
    latent_scale: float = 1.0,
    full_scale: float = 1.0,
    frequency: float = 1.0,
    seed: int = 0,
) -> ReducedModel:
    """A freshly initialised model of ``kind`` for a system with ``n`` coordinates.

    Args:
        kind: one of :data:`MODELS`.
        n: full configuration dimension.
        dt: observation step.
        damped: learn dissipation (SPD ``D(q)`` for HNNs; the NODE is free to dissipate).
        arch: the sizes.
        basis: PSD basis ``(n, k)``, ``k >= d``, fitted on the training data (required for
            ``psd_hnn`` and ``ae_node``, which use its first ``d`` columns; ``rohnn`` starts from it
            when ``arch.init_from_psd``, using more columns for its wider last layer).
        q_ref: reference configuration (mean of the training data), shape ``(n,)``.
        latent_scale: typical size of the latent coordinates (networks see ``z / latent_scale``).
        full_scale: typical size of the full coordinates (for ``full_hnn``).
        frequency: the data's typical frequency ``rms(p) / rms(q)`` in latent coordinates
            (``Reduction.frequency``): the scale of the geometric HNN's potential.
        seed: initialisation seed.

    Returns:
        The model, with float64 parameters (built under ``jax.enable_x64``, whatever the
        caller's global setting).

    Raises:
        ValueError: an unknown kind, a latent size above ``n``, a missing or wrong basis.
        TypeError: a parameter that is not float64.
    """
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; models: {', '.join(MODELS)}")
    with jax.enable_x64(True):
        model = _build(
            kind, n, dt, damped, arch, basis, q_ref, latent_scale, full_scale, frequency, seed
        )
    low = sorted(
        {
            str(p.dtype)
            for p in jax.tree_util.tree_leaves(nnx.state(model))
            if hasattr(p, "dtype")
            and jnp.issubdtype(p.dtype, jnp.floating)
            and p.dtype != jnp.float64
        }
    )
    if low:
        raise TypeError(
            f"{kind}: parameters in {low}, not float64 (the model must not run in float32)"
        )
    return model


def _build(
    kind: str,
    n: int,
    dt: float,
    damped: bool,
    arch: Architecture,
    basis: Any,
    q_ref: Any,
    latent_scale: float,
    full_scale: float,
    frequency: float,
    seed: int,
) -> ReducedModel:
    d = arch.latent_dof
    if kind != "full_hnn" and d > n:
        raise ValueError(f"latent_dof={d} exceeds the system's {n} coordinates")
    rngs = nnx.Rngs(seed)
    q_ref = jnp.zeros(n) if q_ref is None else jnp.asarray(q_ref)
    symplectic = kind in ("rohnn", "rohnn_l2")  # rohnn_l2: the same model (trained differently)
    needs_basis = kind in ("psd_hnn", "ae_node") or (symplectic and arch.init_from_psd)
    if needs_basis and (basis is None or basis.shape[0] != n or basis.shape[1] < d):
        raise ValueError(f"{kind} needs a PSD basis of shape ({n}, >= {d})")
    narrow = None if basis is None else jnp.asarray(basis)[:, :d]
    if not (latent_scale > 0 and full_scale > 0 and frequency > 0):
        raise ValueError("latent_scale, full_scale and frequency must be positive")
    lat_in, full_in = 1.0 / float(latent_scale), 1.0 / float(full_scale)
    hidden: Sequence[int] = arch.hnn_hidden
    autoencoder: nnx.Module
    dynamics: nnx.Module
    if symplectic:
        autoencoder = SymplecticAutoencoder(
            n,
            d,
            hidden=arch.ae_hidden,
            c=arch.activation_c,
            activations=arch.ae_activations,
            rngs=rngs,
        )
        if arch.init_from_psd:
            assert basis is not None
            autoencoder.init_from_basis(jnp.asarray(basis), q_ref, key=rngs.params())
        dynamics = GeometricHNN(
            d,
            hidden=hidden,
            damped=damped,
            iterations=arch.iterations,
            input_scale=lat_in,
            frequency=frequency,
            rngs=rngs,
        )
    elif kind == "psd_hnn":
        assert narrow is not None
        autoencoder = PSDAutoencoder(narrow, q_ref)
        dynamics = GeometricHNN(
            d,
            hidden=hidden,
            damped=damped,
            iterations=arch.iterations,
            input_scale=lat_in,
            frequency=frequency,
            rngs=rngs,
        )
    elif kind == "ae_node":
        assert narrow is not None
        autoencoder = MLPAutoencoder(narrow, q_ref, hidden=arch.ae_mlp_hidden, rngs=rngs)
        dynamics = NeuralODE(2 * d, hidden=arch.node_hidden, input_scale=lat_in, rngs=rngs)
    else:
        autoencoder = IdentityAutoencoder(n)
        dynamics = PlainHNN(
            n,
            hidden=arch.full_hidden,
            damped=damped,
            iterations=arch.iterations,
            input_scale=full_in,
            rngs=rngs,
        )
    return ReducedModel(kind, autoencoder, dynamics, dt=dt, substeps=arch.substeps)
