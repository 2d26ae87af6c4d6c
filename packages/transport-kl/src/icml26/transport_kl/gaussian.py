r"""Closed forms of KL, WKL, KWKL and Bures-Wasserstein W2 between Gaussians (JAX, float64).

Dynamical definition (Datar & Ay 2025; Stein, Datar & Ay 2026). Let ``nu`` be the image of
``mu`` under the time-1 flow ``phi_t`` of the gradient of a potential ``f`` in a geometry ``G``
(the velocity field is ``G(rho_t) grad f``). Then

.. math::

    D_G(\mu | \nu) = \int \int_0^1 (f\circ\varphi_1 - f\circ\varphi_t)(x)\,dt\,d\mu(x)
                   = \int_0^1 t\, \|\dot\rho_t\|^2_{G}\, dt .

* Fisher-Rao geometry: the flow is ``rho_t ∝ exp(t f) mu`` and ``D = KL(nu | mu)``.
* Wasserstein (Otto) geometry, velocity ``grad f``: **WKL**.
* Kalman-Wasserstein geometry with regulariser ``lam``, velocity ``(Cov(rho_t) + lam I) grad f``:
  **KWKL**. ``lam = 0`` is the (affine-invariant) Kalman-Wasserstein geometry of the ensemble
  Kalman sampler; ``lam > 0`` is its covariance-regularised version.

For Gaussians ``f`` is quadratic, the flow is affine and the integral is explicit. Per
coordinate of a suitable orthonormal basis (``s = sigma_2 - sigma_1``, ``delta`` = mean shift)::

    WKL  = sum_i  G(tau_i) (U^T S1 U)_ii + K(tau_i) (U^T delta)_i^2,   T = U diag(tau) U^T
    KWKL = sum_i  1/2 r_lam(v1_i, v2_i) (s_i^2 + delta_i^2)

with ``T`` the optimal transport map from ``S1`` to ``S2``, ``G(tau) = tau^2 log(tau)/2 -
(tau^2-1)/4``, ``K(tau) = G(tau)/(tau-1)^2`` (``K(1) = 1/2``) and ``r_lam = H/s^2`` where
``H = a v2 - log((v2+lam)/(v1+lam))/2``, ``a = log(v2 (v1+lam) / (v1 (v2+lam)))/(2 lam)``
(``a = (1/v1 - 1/v2)/2`` at ``lam = 0``). KWKL at ``lam = 0`` is computed after whitening by
``S1`` (affine invariance); for ``lam > 0`` it is closed-form when ``S1`` and ``S2`` commute
(equal, diagonal, isotropic covariances). For other pairs use
:func:`icml26.transport_kl.flow.flow_divergence` (numerical shooting).

Equal covariances (any PSD ``S``, singular included)::

    KL = 1/2 d^T S^{-1} d      WKL = 1/2 |d|^2      KWKL = 1/2 d^T (S + lam I)^{-1} d     W2^2 = |d|^2

so as ``S = eps I -> 0`` KL blows up like ``1/eps`` while WKL, KWKL (``lam > 0``) and W2 stay
finite. All functions take ``(mean1, cov1, mean2, cov2)`` with any leading batch axes
(broadcast) and return float64 arrays; invalid inputs raise ``ValueError`` naming the problem.

**Argument convention (one for every divergence here and in** :mod:`~icml26.transport_kl.flow`
**).** ``D(mean1, cov1, mean2, cov2)`` is the analog of ``KL(N1 || N2)``: ``N2`` is the
reference and ``N1`` the law compared with it. In the dynamical definition the flow starts at
the reference and ends at the compared law, ``D(N1 || N2) = D_G(start = N2 | end = N1)``; for
the Fisher-Rao geometry this is exactly ``KL(N1 || N2)`` (so ``kl``, ``wkl`` and ``kwkl`` read
the same way; ``tests/test_convention.py`` checks each against its definition). Support: like
``KL(N1 || N2)``, which is finite only when ``N1`` lives on the support of ``N2``, ``wkl`` is
finite for a singular ``cov1`` and infinite when ``range(cov1)`` is not inside ``range(cov2)``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import xlogy

from icml26.transport_kl._checks import check_gaussian_pair, check_nonnegative, is_concrete
from icml26.transport_kl._x64 import x64
from icml26.transport_kl.linalg import bures_trace, ot_map, psd_eigh, psd_inv_sqrt, symmetrize

__all__ = ["kl", "kwkl", "kwkl_closed_form_available", "w2", "wkl"]

_GL_T = 0.5 * (np.polynomial.legendre.leggauss(16)[0] + 1.0)
_GL_W = np.polynomial.legendre.leggauss(16)[1] * 0.5


# --------------------------------------------------------------------------------------------
# scalar helpers
# --------------------------------------------------------------------------------------------
def _g(tau: Array) -> Array:
    """``G(tau) = tau^2 log(tau)/2 - (tau^2 - 1)/4`` (``G(0) = 1/4``, ``G(1) = 0``)."""
    return 0.5 * xlogy(tau**2, tau) - 0.25 * (tau**2 - 1.0)


def _k(tau: Array) -> Array:
    """``K(tau) = G(tau) / (tau - 1)^2``, with its Taylor series near ``tau = 1``."""
    u = tau - 1.0
    near = jnp.abs(u) < 1e-3
    u_safe = jnp.where(near, 1.0, u)
    series = 0.5 + u / 6.0 - u**2 / 24.0 + u**3 / 60.0
    return jnp.where(near, series, _g(tau) / u_safe**2)


def _kw_ratio(v1: Array, v2: Array, lam: Array) -> Array:
    """``r_lam(v1, v2) = H / (sqrt(v2) - sqrt(v1))^2`` for the Kalman-Wasserstein flow.

    ``H = int_{v1}^{v2} (v2 - w) / (2 w (w + lam)) dw``; closed form away from ``v1 = v2``,
    16-point Gauss-Legendre (exact to rounding there, the integrand is nearly constant) when
    ``|v2 - v1| <= 0.01 (v1 + v2)``. Equal variances give ``1 / (v + lam)``.
    """
    s1, s2 = jnp.sqrt(v1), jnp.sqrt(v2)
    near = jnp.abs(v2 - v1) <= 1e-2 * (v1 + v2)
    # quadrature branch
    t = jnp.asarray(_GL_T)
    w = v1[..., None] + t * (v2 - v1)[..., None]
    num = (s1 + s2)[..., None] ** 2
    q = jnp.where(w > 0, num / jnp.where(w > 0, w, 1.0), 4.0)
    integrand = (1.0 - t) * q / (2.0 * (w + lam[..., None]))
    r_near = jnp.sum(jnp.asarray(_GL_W) * integrand, axis=-1)
    # closed-form branch (guarded so the unused side never produces NaN gradients)
    v1c = jnp.where(near, 1.0, v1)
    v2c = jnp.where(near, 2.0, v2)
    lam_pos = lam > 0
    lam_c = jnp.where(lam_pos, lam, 1.0)
    log_ratio = jnp.log((v2c + lam_c) / (v1c + lam_c))
    # a * v2 with xlogy so that v2 = 0 (degenerate target) gives the finite limit
    av2_pos = (xlogy(v2c, v2c) - v2c * jnp.log(v1c) - v2c * log_ratio) / (2.0 * lam_c)
    av2_zero = 0.5 * (v2c / v1c - 1.0)
    h_pos = av2_pos - 0.5 * log_ratio
    h_zero = av2_zero - 0.5 * (jnp.log(v2c) - jnp.log(v1c))
    h = jnp.where(lam_pos, h_pos, h_zero)
    r_far = h / (jnp.sqrt(v2c) - jnp.sqrt(v1c)) ** 2
    return jnp.where(near, r_near, r_far)


# --------------------------------------------------------------------------------------------
# single-pair kernels
# --------------------------------------------------------------------------------------------
def _kl1(m1: Array, s1: Array, m2: Array, s2: Array) -> Array:
    w1, _, nz1 = psd_eigh(s1)
    w2_, v2, nz2 = psd_eigh(s2)
    inv_w2 = jnp.where(nz2, 1.0 / jnp.where(nz2, w2_, 1.0), 0.0)
    s2_inv = (v2 * inv_w2) @ v2.T
    d = m2 - m1
    val = 0.5 * (
        jnp.trace(s2_inv @ s1)
        + d @ s2_inv @ d
        - m1.shape[-1]
        + jnp.sum(jnp.log(jnp.where(nz2, w2_, 1.0)))
        - jnp.sum(jnp.log(jnp.where(nz1, w1, 1.0)))
    )
    ok = jnp.all(nz1) & jnp.all(nz2)
    return jnp.where(ok, jnp.maximum(val, 0.0), jnp.inf)


def _wkl1(m1: Array, s1: Array, m2: Array, s2: Array) -> Array:
    t, feasible = ot_map(s1, s2)
    tau, u = jnp.linalg.eigh(t)
    tau = jnp.maximum(tau, 0.0)
    v = jnp.diagonal(u.T @ s1 @ u)
    dd = u.T @ (m2 - m1)
    kk = _k(tau)
    val = jnp.sum(kk * (tau - 1.0) ** 2 * v + kk * dd**2)
    return jnp.where(feasible, val, jnp.inf)


_PHI = 0.6180339887498949  # generic weight: a combination of commuting matrices shares their eigenbasis


def _kwkl1(m1: Array, s1: Array, m2: Array, s2: Array, lam: Array) -> Array:
    d = m2 - m1
    # lam > 0, commuting covariances: common eigenbasis
    n1 = jnp.maximum(jnp.max(jnp.abs(s1)), 1e-300)
    n2 = jnp.maximum(jnp.max(jnp.abs(s2)), 1e-300)
    _, w = jnp.linalg.eigh(symmetrize(s1 / n1 + _PHI * s2 / n2))
    v1 = jnp.maximum(jnp.diagonal(w.T @ s1 @ w), 0.0)
    v2 = jnp.maximum(jnp.diagonal(w.T @ s2 @ w), 0.0)
    dd = w.T @ d
    lam_v = jnp.broadcast_to(lam, v1.shape)
    val_comm = 0.5 * jnp.sum(
        _kw_ratio(v1, v2, lam_v) * ((jnp.sqrt(v2) - jnp.sqrt(v1)) ** 2 + dd**2)
    )
    # lam = 0: whiten by S1 (affine invariance of the Kalman-Wasserstein flow). The branch not
    # taken gets harmless inputs so that it cannot inject NaN into gradients.
    eye = jnp.eye(s1.shape[-1], dtype=s1.dtype)
    zero_branch = lam == 0
    l_inv, ker1 = psd_inv_sqrt(jnp.where(zero_branch, s1, eye))
    s2w = symmetrize(l_inv @ jnp.where(zero_branch, s2, eye) @ l_inv)
    v2w, uw = jnp.linalg.eigh(s2w)
    v2w = jnp.maximum(v2w, 0.0)
    ddw = uw.T @ (l_inv @ d)
    ones = jnp.ones_like(v2w)
    val_zero = 0.5 * jnp.sum(
        _kw_ratio(ones, v2w, jnp.zeros_like(v2w)) * ((jnp.sqrt(v2w) - 1.0) ** 2 + ddw**2)
    )
    val_zero = jnp.where(jnp.max(jnp.abs(ker1)) > 0.5, jnp.inf, val_zero)
    comm = jnp.max(jnp.abs(s1 @ s2 - s2 @ s1)) <= 1e-9 * n1 * n2 * s1.shape[-1]
    val_comm = jnp.where(comm, val_comm, jnp.nan)
    return jnp.where(lam > 0, val_comm, val_zero)


def _w2sq1(m1: Array, s1: Array, m2: Array, s2: Array) -> Array:
    d = m2 - m1
    val = d @ d + jnp.trace(s1) + jnp.trace(s2) - 2.0 * bures_trace(s1, s2)
    return jnp.maximum(val, 0.0)


_SIG = "(d),(d,d),(d),(d,d)->()"
_kl_b = jax.jit(jnp.vectorize(_kl1, signature=_SIG))
_wkl_b = jax.jit(jnp.vectorize(_wkl1, signature=_SIG))
_w2sq_b = jax.jit(jnp.vectorize(_w2sq1, signature=_SIG))
_kwkl_b = jax.jit(jnp.vectorize(_kwkl1, signature="(d),(d,d),(d),(d,d),()->()"))


def _prep(mean1: Any, cov1: Any, mean2: Any, cov2: Any, validate: bool) -> tuple[Array, ...]:
    if validate:
        check_gaussian_pair(mean1, cov1, mean2, cov2)
    return tuple(jnp.asarray(a, dtype=jnp.float64) for a in (mean1, cov1, mean2, cov2))


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
@x64
def kl(mean1: Any, cov1: Any, mean2: Any, cov2: Any, *, validate: bool = True) -> Array:
    """Classical ``KL(N1 || N2) = E_N1[log N1 - log N2]``; ``inf`` if either cov is singular.

    Args:
        mean1: mean of the compared law ``N1``, ``(..., d)``.
        cov1: covariance of ``N1``, ``(..., d, d)``.
        mean2: mean of the reference ``N2``.
        cov2: covariance of ``N2``.
        validate: check shapes, symmetry and PSD-ness first.

    Returns:
        float64 array of the batch shape.

    Raises:
        ValueError: shapes that do not fit, NaN, or a covariance that is not symmetric PSD.
    """
    return _kl_b(*_prep(mean1, cov1, mean2, cov2, validate))


@x64
def wkl(mean1: Any, cov1: Any, mean2: Any, cov2: Any, *, validate: bool = True) -> Array:
    """Wasserstein analog of ``KL(N1 || N2)``: the Otto-geometry flow from ``N2`` to ``N1``.

    Finite for singular ``cov1`` and for equal singular covariances; ``inf`` when
    ``range(cov1)`` is not inside ``range(cov2)`` (no linear flow inflates a degenerate law).

    Args:
        mean1: mean of the compared law ``N1`` (the flow's end).
        cov1: covariance of ``N1``.
        mean2: mean of the reference ``N2`` (the flow's start).
        cov2: covariance of ``N2``.
        validate: check shapes, symmetry and PSD-ness first.

    Returns:
        float64 array of the batch shape.

    Raises:
        ValueError: shapes that do not fit, NaN, or a covariance that is not symmetric PSD.
    """
    m1, s1, m2, s2 = _prep(mean1, cov1, mean2, cov2, validate)
    return _wkl_b(m2, s2, m1, s1)


def kwkl_closed_form_available(cov1: Any, cov2: Any, lam: float) -> bool:
    """Whether :func:`kwkl` has a closed form: ``lam == 0`` or commuting covariances."""
    if lam == 0:
        return True
    c1, c2 = np.asarray(cov1, float), np.asarray(cov2, float)
    comm = np.max(np.abs(c1 @ c2 - c2 @ c1), axis=(-1, -2))
    n = np.max(np.abs(c1), axis=(-1, -2)) * np.max(np.abs(c2), axis=(-1, -2)) * c1.shape[-1]
    return bool(np.all(comm <= 1e-9 * np.maximum(n, 1e-300)))


@x64
def kwkl(
    mean1: Any,
    cov1: Any,
    mean2: Any,
    cov2: Any,
    lam: Any = 1.0,
    *,
    validate: bool = True,
) -> Array:
    """Kalman-Wasserstein analog of ``KL(N1 || N2)`` (velocity ``(Cov + lam I) grad f``).

    The flow runs from the reference ``N2`` to ``N1``. Closed form for ``lam = 0`` (any SPD
    ``cov2``) and for commuting covariances when ``lam > 0``.

    Args:
        mean1: mean of the compared law ``N1``.
        cov1: covariance of ``N1``.
        mean2: mean of the reference ``N2``.
        cov2: covariance of ``N2``.
        lam: the regulariser ``lam >= 0``.
        validate: check the inputs first.

    Returns:
        float64 array of the batch shape.

    Raises:
        ValueError: bad inputs, or ``lam > 0`` with covariances that do not commute (eagerly;
            NaN under ``jit``): use :func:`icml26.transport_kl.flow.flow_divergence` then.
    """
    check_nonnegative("lam", lam)
    args = _prep(mean1, cov1, mean2, cov2, validate)
    if validate and is_concrete(lam, *args):
        lam_np = np.asarray(lam, float)
        if np.any(lam_np > 0) and not kwkl_closed_form_available(
            np.asarray(args[1]), np.asarray(args[3]), 1.0
        ):
            raise ValueError(
                "kwkl with lam > 0 has a closed form only for commuting covariances; use "
                "icml26.transport_kl.flow.flow_divergence(..., geometry='kalman_wasserstein')"
            )
    m1, s1, m2, s2 = args
    return _kwkl_b(m2, s2, m1, s1, jnp.asarray(lam, dtype=jnp.float64))


@x64
def w2(
    mean1: Any,
    cov1: Any,
    mean2: Any,
    cov2: Any,
    *,
    squared: bool = False,
    validate: bool = True,
) -> Array:
    """Bures-Wasserstein distance ``W2(N1, N2)`` (symmetric).

    Args:
        mean1: mean of the first law.
        cov1: covariance of the first law.
        mean2: mean of the second law.
        cov2: covariance of the second law.
        squared: return ``W2^2``.
        validate: check the inputs first.

    Returns:
        float64 array of the batch shape.

    Raises:
        ValueError: bad inputs.
    """
    val = _w2sq_b(*_prep(mean1, cov1, mean2, cov2, validate))
    return val if squared else jnp.sqrt(val)
