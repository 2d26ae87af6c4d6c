"""Autoencoders between the full phase space ``R^{2n}`` and a latent phase space ``R^{2d}``.

* :class:`SymplecticAutoencoder` (RO-HNN): the *cotangent lift* of a configuration-space
  embedding ``φ: R^d -> R^n`` built from biorthogonal layers, with encoder ``ρ: R^n -> R^d``
  such that ``ρ ∘ φ = id`` exactly. Decoder and encoder are

      Ψ(z_q, z_p) = (φ(z_q), Dρ(φ(z_q))ᵀ z_p),     E(q, p) = (ρ(q), Dφ(ρ(q))ᵀ p).

  Because ``Dρ(φ(z)) Dφ(z) = I``, the Liouville form pulls back exactly,
  ``Ψ*(pᵀ dq) = z_pᵀ Dρ Dφ dz_q = z_pᵀ dz_q``, so ``Ψ*ω = ω_latent``: the decoder is symplectic
  by construction (``DΨᵀ J_{2n} DΨ = J_{2d}``) for every value of the weights on the manifold,
  and ``E ∘ Ψ = id``.
  Layers: ``φ_l(x) = Φ_l σ_l(x) + b_l`` and ``ρ_l(y) = σ_l^{-1}(Ψ_lᵀ (y - b_l))`` with
  ``Ψ_lᵀ Φ_l = I``, widths non-decreasing from ``d`` to ``n`` (a deep, wide stack such as
  ``d -> 32 -> 64 -> 128 -> n``, like the reduced-Lagrangian predecessor's), and ``σ_l`` one of
  :data:`ACTIVATIONS` per layer: smooth bijections with closed-form inverses. The decoder's
  image lies in ``range(Φ_L) + b_L``, so the last hidden width bounds the subspace it can
  bend into: make it close to ``n`` where a linear reduction fails.
* :class:`PSDAutoencoder`: proper symplectic decomposition, cotangent lift (linear, fixed).
* :class:`MLPAutoencoder`: an unconstrained MLP autoencoder (the AE + neural ODE baseline).
* :class:`IdentityAutoencoder`: no reduction (the full-order HNN baseline).

All maps act on one state vector; batch with ``jax.vmap``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from icml26.ro_hnn.layers import MLP, Fixed
from icml26.ro_hnn.manifolds import random_biorthogonal

__all__ = [
    "ACTIVATIONS",
    "BiorthogonalLayer",
    "IdentityAutoencoder",
    "MLPAutoencoder",
    "PSDAutoencoder",
    "SymplecticAutoencoder",
    "canonical_j",
    "psd_basis",
    "smooth_leaky",
    "smooth_leaky_inverse",
    "split_state",
    "symplecticity_defect",
]


def split_state(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``x = (q, p)`` -> ``q, p``; the phase-space dimension (last axis) must be even."""
    if x.ndim < 1 or x.shape[-1] % 2:
        raise ValueError(
            f"a phase-space state needs an even last dimension (q and p), got shape {x.shape}"
        )
    n = x.shape[-1] // 2
    return x[..., :n], x[..., n:]


def smooth_leaky(x: jax.Array, c: float = 0.5) -> jax.Array:
    """``σ(x) = x + c (sqrt(x² + 1) - 1)``: smooth, strictly increasing for ``|c| < 1``, slopes ``1 ± c``."""
    return x + c * (jnp.sqrt(x * x + 1.0) - 1.0)


def smooth_leaky_inverse(y: jax.Array, c: float = 0.5) -> jax.Array:
    """Closed-form inverse of :func:`smooth_leaky` (root of a quadratic, ``0 <= c < 1``)."""
    u = y + c
    return (u - c * jnp.sqrt(u * u + 1.0 - c * c)) / (1.0 - c * c)


def _asinh(x: jax.Array, c: float) -> jax.Array:
    return x + c * (jnp.arcsinh(x) - x)


def _asinh_inverse(y: jax.Array, c: float) -> jax.Array:
    # y = (1 - c) x + c asinh(x) is strictly increasing; 8 Newton steps (quadratic) as a
    # fori_loop: one small loop body to compile instead of eight unrolled copies.
    def slope(x: jax.Array) -> jax.Array:
        return (1.0 - c) + c / jnp.sqrt(1.0 + x * x)

    def newton(_: int, x: jax.Array) -> jax.Array:
        return x - ((1.0 - c) * x + c * jnp.arcsinh(x) - y) / slope(x)

    # The start is y / σ'(y), not y itself: a loop whose initial carry is the very buffer its
    # body also reads (y) is miscompiled by XLA:CPU (jaxlib 0.10.2) under
    # `--xla_cpu_multi_thread_eigen=false` when y comes from a batched matmul (jit of vmap,
    # traced weights): the encoder returned wrong latents and the decoder's symplecticity
    # defect read 0.67 (tests/test_autoencoder.py::test_asinh_stack_compiled_like_the_evaluation).
    return jax.lax.fori_loop(0, 8, newton, y / slope(y))


#: Per-layer activations ``name -> (σ, σ^{-1})``: ``identity``; ``smooth_leaky`` (slopes
#: ``1 ± c``, :func:`smooth_leaky`); ``asinh`` (``(1 - c) x + c asinh(x)``, inverted by Newton).
ACTIVATIONS = {
    "identity": (lambda x, c: x, lambda y, c: y),
    "smooth_leaky": (lambda x, c: smooth_leaky(x, c), lambda y, c: smooth_leaky_inverse(y, c)),
    "asinh": (_asinh, _asinh_inverse),
}


class BiorthogonalLayer(nnx.Module):
    """``φ(x) = Φ σ(x) + b`` (decoder) and ``ρ(y) = σ^{-1}(Ψᵀ (y - b))`` (encoder), ``Ψᵀ Φ = I``.

    ``phi`` and ``psi`` live on the biorthogonal manifold: the trainer projects their gradients
    onto its tangent space and retracts them after every update (:mod:`icml26.ro_hnn.train`).
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        *,
        activation: str | bool,
        c: float,
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        if isinstance(activation, bool):
            activation = "smooth_leaky" if activation else "identity"
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"unknown activation {activation!r}; choose from {', '.join(ACTIVATIONS)}"
            )
        phi, psi = random_biorthogonal(rngs.params(), d_out, d_in, dtype)
        self.phi = nnx.Param(phi)
        self.psi = nnx.Param(psi)
        self.b = nnx.Param(jnp.zeros(d_out, dtype))
        self.activation = activation
        self.c = c

    def decode(self, x: jax.Array) -> jax.Array:
        return self.phi[...] @ ACTIVATIONS[self.activation][0](x, self.c) + self.b[...]

    def encode(self, y: jax.Array) -> jax.Array:
        return ACTIVATIONS[self.activation][1](self.psi[...].T @ (y - self.b[...]), self.c)


class SymplecticAutoencoder(nnx.Module):
    """RO-HNN's geometrically constrained symplectic autoencoder (cotangent lift, see module doc).

    Args:
        n: full configuration dimension.
        d: latent configuration dimension (latent phase space ``2d``).
        hidden: widths of the hidden layers of ``φ`` (non-decreasing, between ``d`` and ``n``;
            widths above ``n`` are capped at ``n``).
        c: the activations' shape parameter (``0 <= c < 1``).
        activations: one name of :data:`ACTIVATIONS` per layer (``len(hidden) + 1``), applied
            to the layer's input; default: ``identity`` on the first layer, ``smooth_leaky`` on
            every other.
        rngs: Flax NNX random streams.
        dtype: the parameters' dtype (default float64).
    """

    def __init__(
        self,
        n: int,
        d: int,
        *,
        hidden: Sequence[int] = (32,),
        c: float = 0.5,
        activations: Sequence[str] = (),
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        widths = [d, *[min(int(h), n) for h in hidden], n]
        acts = list(activations) or ["identity"] + ["smooth_leaky"] * (len(widths) - 2)
        if len(acts) != len(widths) - 1:
            raise ValueError(
                f"activations needs one name per layer ({len(widths) - 1} for widths {widths}), "
                f"got {list(activations)}"
            )
        if not 0 < d <= n:
            raise ValueError(f"latent dimension d={d} must satisfy 0 < d <= n={n}")
        if any(a > b for a, b in itertools.pairwise(widths)):
            raise ValueError(f"layer widths must be non-decreasing from d to n, got {widths}")
        if not 0.0 <= c < 1.0:
            raise ValueError(f"activation parameter c must be in [0, 1), got {c}")
        self.n, self.d = n, d
        self.layers = nnx.List(
            [
                BiorthogonalLayer(a, b, activation=act, c=c, rngs=rngs, dtype=dtype)
                for act, (a, b) in zip(acts, itertools.pairwise(widths), strict=True)
            ]
        )

    def embed(self, zq: jax.Array) -> jax.Array:
        """``φ: R^d -> R^n``."""
        for layer in self.layers:
            zq = layer.decode(zq)
        return zq

    def submerse(self, q: jax.Array) -> jax.Array:
        """``ρ: R^n -> R^d`` with ``ρ ∘ φ = id``."""
        for layer in reversed(self.layers):
            q = layer.encode(q)
        return q

    def decode(self, z: jax.Array) -> jax.Array:
        """The full state of a latent state: ``q = φ(z_q)``, ``p = Dρ(q)ᵀ z_p`` (cotangent lift).

        Args:
            z: ``(2d,)`` latent state ``(z_q, z_p)``.

        Returns:
            ``(2n,)`` full state ``(q, p)``.
        """
        zq, zp = split_state(z)
        q = self.embed(zq)
        _, pullback = jax.vjp(self.submerse, q)
        (p,) = pullback(zp)  # Dρ(q)ᵀ z_p
        return jnp.concatenate([q, p])

    def encode(self, x: jax.Array) -> jax.Array:
        """The latent state of a full state: ``z_q = ρ(q)``, ``z_p = Dφ(z_q)ᵀ p``.

        Args:
            x: ``(2n,)`` full state ``(q, p)``.

        Returns:
            ``(2d,)`` latent state ``(z_q, z_p)``.
        """
        q, p = split_state(x)
        zq = self.submerse(q)
        _, pullback = jax.vjp(self.embed, zq)
        (zp,) = pullback(p)  # Dφ(z_q)ᵀ p
        return jnp.concatenate([zq, zp])

    def init_from_basis(
        self, basis: jax.Array, q_ref: jax.Array, *, key: jax.Array, noise: float = 1e-2
    ) -> None:
        """Start near a linear reduced basis: ``φ(z) ≈ V σ(...σ(z)) + q_ref`` (then retract).

        The last layer's columns are the leading columns of ``basis`` (``V``, ``n × k``, ``k >= d``,
        orthonormal; completed by random directions if ``k`` is below the layer's width), so the
        decoder starts as a warped PSD and its extra directions are the next PSD modes; inner
        layers are ``[I; 0]`` plus ``noise``; the result is on the manifold exactly.
        """
        n, k = basis.shape
        if n != self.n or k < self.d:
            raise ValueError(f"basis must have shape ({self.n}, >= {self.d}), got {basis.shape}")
        keys = jax.random.split(key, len(self.layers) + 1)
        for i, layer in enumerate(self.layers):
            out_dim, in_dim = layer.phi.shape
            if i == len(self.layers) - 1:
                cols = basis[:, : min(k, in_dim)]
                extra = jax.random.normal(keys[-1], (out_dim, in_dim - cols.shape[1]), basis.dtype)
                phi, r = jnp.linalg.qr(jnp.concatenate([cols, extra], axis=1))
                phi = phi * jnp.sign(jnp.diagonal(r))[None, :]
                layer.b[...] = jnp.asarray(q_ref, basis.dtype)
            else:
                phi = jnp.eye(out_dim, in_dim, dtype=basis.dtype)
                phi = phi + noise * jax.random.normal(keys[i], phi.shape, basis.dtype)
                phi, _ = jnp.linalg.qr(phi)
            layer.phi[...] = phi
            layer.psi[...] = phi  # orthonormal columns: Φᵀ Φ = I


def psd_basis(q: np.ndarray, p: np.ndarray, d: int, q_ref: np.ndarray | None = None) -> np.ndarray:
    """Cotangent-lift PSD basis ``V`` (``n × d``, orthonormal) from snapshots ``q, p`` (``(S, n)``).

    The left singular vectors of the snapshot matrix ``[q - q_ref, p]ᵀ`` (Peng & Mohseni 2016);
    ``A = diag(V, V)`` is then symplectic, ``Aᵀ J_{2n} A = J_{2d}``.

    Args:
        q: ``(S, n)`` configuration snapshots.
        p: ``(S, n)`` momentum snapshots.
        d: columns of the basis.
        q_ref: the reference configuration subtracted from ``q``.

    Returns:
        ``(n, d)`` orthonormal basis.

    Raises:
        ValueError: shapes that do not match, or ``d`` outside ``[1, n]``.
    """
    q, p = np.asarray(q), np.asarray(p)
    if q.ndim != 2 or q.shape != p.shape:
        raise ValueError(
            f"snapshots q and p must both have shape (S, n), got {q.shape} and {p.shape}"
        )
    if not 0 < d <= q.shape[1]:
        raise ValueError(f"latent dimension d={d} must satisfy 0 < d <= n={q.shape[1]}")
    centred = q - (0.0 if q_ref is None else q_ref)
    snapshots = np.concatenate([centred, p], axis=0).T  # (n, 2S)
    u, _, _ = np.linalg.svd(snapshots, full_matrices=False)
    return u[:, :d]


class PSDAutoencoder(nnx.Module):
    """Linear symplectic reduction ``x = diag(V, V) z + (q_ref, 0)``; encoder ``diag(V, V)ᵀ``."""

    def __init__(self, basis: jax.Array, q_ref: jax.Array) -> None:
        self.n, self.d = basis.shape
        self.basis = Fixed(jnp.asarray(basis))
        self.q_ref = Fixed(jnp.asarray(q_ref))

    def decode(self, z: jax.Array) -> jax.Array:
        zq, zp = split_state(z)
        v = self.basis[...]
        return jnp.concatenate([v @ zq + self.q_ref[...], v @ zp])

    def encode(self, x: jax.Array) -> jax.Array:
        q, p = split_state(x)
        v = self.basis[...]
        return jnp.concatenate([v.T @ (q - self.q_ref[...]), v.T @ p])


class MLPAutoencoder(nnx.Module):
    """Unconstrained autoencoder: a linear reduced basis plus MLP corrections (zero at init).

    ``E(x) = Aᵀ (x - x_ref) + e(x)``, ``D(z) = A z + x_ref + g(z)`` with ``A`` the block-diagonal
    PSD basis (so all reduced models start from the same linear subspace), ``e, g`` MLPs.
    Nothing makes ``D`` symplectic.
    """

    def __init__(
        self,
        basis: jax.Array,
        q_ref: jax.Array,
        *,
        hidden: Sequence[int] = (64,),
        rngs: nnx.Rngs,
        dtype: jnp.dtype = jnp.float64,
    ) -> None:
        self.n, self.d = basis.shape
        self.linear = PSDAutoencoder(basis, q_ref)
        self.enc = MLP([2 * self.n, *hidden, 2 * self.d], rngs=rngs, last_scale=0.0, dtype=dtype)
        self.dec = MLP([2 * self.d, *hidden, 2 * self.n], rngs=rngs, last_scale=0.0, dtype=dtype)

    def encode(self, x: jax.Array) -> jax.Array:
        return self.linear.encode(x) + self.enc(x)

    def decode(self, z: jax.Array) -> jax.Array:
        return self.linear.decode(z) + self.dec(z)


class IdentityAutoencoder(nnx.Module):
    """No reduction: the latent space is the full phase space."""

    def __init__(self, n: int) -> None:
        self.n = self.d = n

    def encode(self, x: jax.Array) -> jax.Array:
        split_state(x)
        return x

    def decode(self, z: jax.Array) -> jax.Array:
        return z


def symplecticity_defect(decode, z: jax.Array) -> jax.Array:  # type: ignore[no-untyped-def]
    """``||DΨ(z)ᵀ J_{2n} DΨ(z) - J_{2d}||_F`` for a decoder ``Ψ = decode`` at one latent ``z``."""
    jac = jax.jacfwd(decode)(z)  # (2n, 2d)
    big, small = jac.shape[0] // 2, z.shape[0] // 2
    return jnp.linalg.norm(
        jac.T @ canonical_j(big, jac.dtype) @ jac - canonical_j(small, jac.dtype)
    )


def canonical_j(n: int, dtype: jnp.dtype = jnp.float64) -> jax.Array:
    """``J_{2n} = [[0, I], [-I, 0]]``."""
    eye = jnp.eye(n, dtype=dtype)
    zero = jnp.zeros((n, n), dtype)
    return jnp.block([[zero, eye], [-eye, zero]])
