"""Eigen-decomposition based matrix functions for symmetric PSD matrices (JAX, float64).

``scipy.linalg.sqrtm`` and Newton-Schulz iterations return NaNs or complex parts on
ill-conditioned or singular covariances; here every square root, inverse square root and
pseudo-inverse goes through ``eigh`` with eigenvalues clipped at a *relative* threshold, so
``Sigma = 1e-12 I`` is treated as full rank while an exactly singular matrix is not.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array

__all__ = [
    "bures_trace",
    "ot_map",
    "psd_eigh",
    "psd_inv_sqrt",
    "psd_sqrt",
    "random_rotation",
    "random_spd",
    "symmetrize",
]


def random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed ``d x d`` orthogonal matrix (QR of a Gaussian matrix, signs fixed).

    Args:
        rng: the stream.
        d: the dimension.

    Returns:
        An orthogonal ``(d, d)`` array.
    """
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def random_spd(rng: np.random.Generator, d: int) -> np.ndarray:
    """A random well-conditioned SPD matrix ``X X^T / d + 0.3 I`` (test pairs, benchmarks).

    Args:
        rng: the stream.
        d: the dimension.

    Returns:
        A ``(d, d)`` SPD array.
    """
    x = rng.normal(size=(d, d))
    return x @ x.T / d + 0.3 * np.eye(d)


def symmetrize(a: Array) -> Array:
    return 0.5 * (a + jnp.swapaxes(a, -1, -2))


def _rank_tol(w: Array, d: int) -> Array:
    """Eigenvalues below this count as zero (relative to the largest, as ``numpy.linalg.pinv``)."""
    return (
        jnp.maximum(jnp.max(jnp.abs(w), axis=-1, keepdims=True), 1e-300)
        * d
        * 1e3
        * jnp.finfo(w.dtype).eps
    )


def psd_eigh(a: Array) -> tuple[Array, Array, Array]:
    """``(w, V, nonzero)``: eigenvalues clipped at 0, eigenvectors, mask of the range."""
    w, v = jnp.linalg.eigh(symmetrize(a))
    nonzero = w > _rank_tol(w, a.shape[-1])
    return jnp.where(nonzero, w, 0.0), v, nonzero


def psd_sqrt(a: Array) -> Array:
    """Symmetric PSD square root ``A^{1/2}``."""
    w, v, _ = psd_eigh(a)
    return (v * jnp.sqrt(w)[..., None, :]) @ jnp.swapaxes(v, -1, -2)


def psd_inv_sqrt(a: Array) -> tuple[Array, Array]:
    """``(A^{+1/2}, P_ker)``: pseudo-inverse square root and the projector onto ``ker A``."""
    w, v, nonzero = psd_eigh(a)
    inv = jnp.where(nonzero, 1.0 / jnp.sqrt(jnp.where(nonzero, w, 1.0)), 0.0)
    vt = jnp.swapaxes(v, -1, -2)
    ker = (v * jnp.where(nonzero, 0.0, 1.0)[..., None, :]) @ vt
    return (v * inv[..., None, :]) @ vt, ker


def bures_trace(a: Array, b: Array) -> Array:
    """``tr (A^{1/2} B A^{1/2})^{1/2}`` as the nuclear norm of ``B^{1/2} A^{1/2}`` (no squaring)."""
    return jnp.sum(jnp.linalg.svd(psd_sqrt(b) @ psd_sqrt(a), compute_uv=False), axis=-1)


def ot_map(cov1: Array, cov2: Array) -> tuple[Array, Array]:
    """The linear optimal transport map ``T`` from ``N(0, cov1)`` to ``N(0, cov2)`` and a flag.

    ``T = cov1^{-1/2} (cov1^{1/2} cov2 cov1^{1/2})^{1/2} cov1^{-1/2}`` on ``range(cov1)``,
    extended by the identity on ``ker(cov1)`` (the limit of ``cov_i + eps I`` as eps -> 0 when
    the kernels agree). ``T`` is symmetric PSD and ``T cov1 T = cov2`` whenever
    ``range(cov2) ⊆ range(cov1)``; otherwise no linear (gradient) flow maps ``cov1`` onto
    ``cov2`` and the returned flag is False. Equal covariances give ``T = I`` exactly.

    The middle factor is computed from the SVD of ``cov2^{1/2} cov1^{1/2} = U S V^T`` as
    ``V S V^T``, avoiding the squared condition number of the textbook formula.
    """
    d = cov1.shape[-1]
    s1 = psd_sqrt(cov1)
    s1_pinv, ker1 = psd_inv_sqrt(cov1)
    # Square: the thin SVD is the full one, and its JVP exists in every supported JAX.
    _, sv, vt = jnp.linalg.svd(psd_sqrt(cov2) @ s1, full_matrices=False)
    middle = (jnp.swapaxes(vt, -1, -2) * sv[..., None, :]) @ vt
    t = symmetrize(s1_pinv @ middle @ s1_pinv + ker1)
    scale = jnp.maximum(jnp.max(jnp.abs(cov2)), 1e-300)
    feasible = jnp.max(jnp.abs(ker1 @ cov2 @ ker1)) <= 1e-9 * scale
    same = jnp.max(jnp.abs(cov1 - cov2)) <= 64 * jnp.finfo(cov1.dtype).eps * jnp.maximum(
        jnp.max(jnp.abs(cov1)), 1e-300
    )
    del s1
    return jnp.where(same, jnp.eye(d, dtype=cov1.dtype), t), feasible
