"""Matrix manifolds of RO-HNN: biorthogonal pairs (autoencoder weights) and SPD matrices.

Biorthogonal manifold ``B(n, d) = {(Φ, Ψ) ∈ R^{n×d} × R^{n×d} : Ψᵀ Φ = I_d}``. A decoder layer
uses ``Φ`` and the matching encoder layer ``Ψ``, so encoder ∘ decoder is the identity (the
decoder is an embedding with a left inverse). Optimisation on ``B`` is Riemannian: the
Euclidean gradient is projected onto the tangent space ``{(X, Y): Ψᵀ X + Yᵀ Φ = 0}``
(orthogonally, in the Frobenius metric) and every update is followed by a retraction that
restores ``Ψᵀ Φ = I`` to floating-point precision.

SPD matrices are produced by a Cholesky factor with a positive diagonal plus a floor ``ε I``,
so ``M^{-1}(q)`` and ``D(q)`` are symmetric positive definite for *every* input.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "biorthogonal_defect",
    "biorthogonal_retraction",
    "biorthogonal_tangent_projection",
    "random_biorthogonal",
    "solve_sylvester_spd",
    "spd_from_cholesky",
    "tril_size",
]


def random_biorthogonal(
    key: jax.Array, n: int, d: int, dtype: jnp.dtype = jnp.float64
) -> tuple[jax.Array, jax.Array]:
    """A random point of ``B(n, d)``: ``Φ = Ψ`` with orthonormal columns (QR of a Gaussian)."""
    if not 0 < d <= n:
        raise ValueError(f"a biorthogonal pair needs 0 < d <= n, got n={n}, d={d}")
    q, r = jnp.linalg.qr(jax.random.normal(key, (n, d), dtype))
    q = q * jnp.sign(jnp.diagonal(r))[None, :]
    return q, q


def biorthogonal_defect(phi: jax.Array, psi: jax.Array) -> jax.Array:
    """``max |Ψᵀ Φ - I|``: zero on the manifold."""
    return jnp.max(jnp.abs(psi.T @ phi - jnp.eye(phi.shape[1], dtype=phi.dtype)))


def biorthogonal_retraction(phi: jax.Array, psi: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Map a nearby pair back onto ``B(n, d)``: ``(Φ, Ψ) -> (Φ, Ψ (Ψᵀ Φ)^{-ᵀ})``.

    Exact: the result satisfies ``Ψ'ᵀ Φ = (Ψᵀ Φ)^{-1} Ψᵀ Φ = I``. It is a retraction (identity
    on the manifold, first-order correct along tangent directions, since ``Ψᵀ Φ = I + O(ξ²)``
    after a tangent step ``ξ``).
    """
    a = psi.T @ phi
    return phi, jnp.linalg.solve(a, psi.T).T


def solve_sylvester_spd(g: jax.Array, f: jax.Array, c: jax.Array) -> jax.Array:
    """Solve ``G Λ + Λ F = C`` for symmetric positive definite ``G`` and ``F``.

    With ``G = U diag(g) Uᵀ`` and ``F = V diag(f) Vᵀ``: ``Λ = U [(Uᵀ C V) / (g_i + f_j)] Vᵀ``;
    ``g_i + f_j > 0`` so the solution is unique.
    """
    gw, gu = jnp.linalg.eigh(g)
    fw, fv = jnp.linalg.eigh(f)
    return gu @ ((gu.T @ c @ fv) / (gw[:, None] + fw[None, :])) @ fv.T


def biorthogonal_tangent_projection(
    phi: jax.Array, psi: jax.Array, x: jax.Array, y: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """Orthogonal projection of ``(X, Y)`` onto the tangent space of ``B(n, d)`` at ``(Φ, Ψ)``.

    The normal space is ``{(Ψ Λ, Φ Λᵀ)}`` (gradients of ``tr(Λᵀ (Ψᵀ Φ - I))``); the multiplier
    solves ``Ψᵀ Ψ Λ + Λ Φᵀ Φ = Ψᵀ X + Yᵀ Φ``.
    """
    lam = solve_sylvester_spd(psi.T @ psi, phi.T @ phi, psi.T @ x + y.T @ phi)
    return x - psi @ lam, y - phi @ lam.T


def tril_size(d: int) -> int:
    """Number of entries of a ``d × d`` lower-triangular matrix."""
    return d * (d + 1) // 2


def spd_from_cholesky(raw: jax.Array, d: int, eps: float = 1e-4) -> jax.Array:
    """``L Lᵀ + ε I`` with ``L`` lower triangular from ``raw`` (``d(d+1)/2`` entries).

    The diagonal of ``L`` goes through softplus (so ``raw = 0`` gives ``L ≈ 0.69 I``); the
    result is SPD for any finite ``raw`` because ``ε > 0``.
    """
    if raw.shape[-1] != tril_size(d):
        raise ValueError(f"expected {tril_size(d)} Cholesky entries for d={d}, got {raw.shape[-1]}")
    rows, cols = np.tril_indices(d)
    # a constant 0/1 matrix places the entries (cheaper to compile and differentiate than a scatter)
    place = np.zeros((d * d, rows.size))
    place[rows * d + cols, np.arange(rows.size)] = 1.0
    is_diag = np.zeros(rows.size)
    is_diag[rows == cols] = 1.0
    entries = jnp.where(is_diag > 0, jax.nn.softplus(raw), raw)
    lower = (jnp.asarray(place, raw.dtype) @ entries).reshape(d, d)
    return lower @ lower.T + eps * jnp.eye(d, dtype=raw.dtype)
