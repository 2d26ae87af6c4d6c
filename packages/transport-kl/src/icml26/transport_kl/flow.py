r"""Numerical references: the divergences computed from their *dynamical* definition.

Nothing here uses the closed forms of :mod:`icml26.transport_kl.gaussian`:

* :func:`flow_divergence` (Wasserstein / Kalman-Wasserstein): finds the quadratic potential
  ``f(x) = x^T A x / 2 + b^T x`` whose gradient flow carries ``N(m1, S1)`` to ``N(m2, S2)`` by
  Newton shooting on the moment ODE (RK4), then integrates
  ``D = int_0^1 t E_{rho_t}[grad f^T C_t grad f] dt`` along the flow, ``C_t = I`` (Wasserstein)
  or ``Cov(rho_t) + lam I`` (Kalman-Wasserstein).
* :func:`fisher_rao_divergence`: the same path integral for the Fisher-Rao flow
  ``rho_t ∝ exp(t f) mu`` (an exponential-family geodesic), whose metric is ``Var_{rho_t}(f)``;
  it equals ``KL`` (both take ``(N1, N2)`` as the analog of ``KL(N1 || N2)``: the flow
  runs from ``N2`` to ``N1``).
* :func:`w2_by_coupling_search`: ``W2^2`` by maximising the correlation
  ``tr(S1^{1/2} Q S2^{1/2})`` over rotations (Cayley map of a skew matrix) with ``optax.lbfgs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from icml26.transport_kl._checks import check_gaussian_pair, check_nonnegative
from icml26.transport_kl._x64 import x64
from icml26.transport_kl.linalg import psd_sqrt, symmetrize
from icml26.transport_kl.ode import rk4_step

__all__ = [
    "FlowResult",
    "fisher_rao_divergence",
    "flow_divergence",
    "moment_flow",
    "w2_by_coupling_search",
]

Geometry = Literal["wasserstein", "kalman_wasserstein"]


@dataclass(frozen=True)
class FlowResult:
    """A divergence from the flow definition, with the potential and the shooting residual."""

    value: float
    A: np.ndarray
    b: np.ndarray
    residual: float
    iterations: int


def _unpack(theta: Array, d: int) -> tuple[Array, Array]:
    iu = jnp.triu_indices(d)
    a = jnp.zeros((d, d), theta.dtype).at[iu].set(theta[: len(iu[0])])
    a = a + a.T - jnp.diag(jnp.diag(a))
    return a, theta[len(iu[0]) :]


def _precond(s: Array, geometry: str, lam: Array) -> Array:
    d = s.shape[-1]
    if geometry == "wasserstein":
        return jnp.eye(d, dtype=s.dtype)
    return s + lam * jnp.eye(d, dtype=s.dtype)


@partial(jax.jit, static_argnames=("geometry", "steps"))
def moment_flow(
    a: Array, b: Array, m0: Array, s0: Array, lam: Array, *, geometry: str, steps: int
) -> tuple[Array, Array, Array]:
    """RK4 on the Gaussian moment ODE of ``x' = C(rho_t)(A x + b)``.

    Returns ``(m_1, S_1, J_1)`` with ``J_1 = int_0^1 t E[grad f^T C grad f] dt``.
    """
    h = 1.0 / steps

    def rhs(t: Array, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        m, s, _ = state
        c = _precond(s, geometry, lam)
        g = a @ m + b
        dm = c @ g
        ds = c @ a @ s + s @ a @ c
        metric = g @ c @ g + jnp.trace(a @ c @ a @ s)
        return dm, symmetrize(ds), t * metric

    def step(
        state: tuple[Array, Array, Array], k: Array
    ) -> tuple[tuple[Array, Array, Array], None]:
        return rk4_step(rhs, k * h, state, h), None

    init = (m0, s0, jnp.zeros((), m0.dtype))
    out, _ = jax.lax.scan(step, init, jnp.arange(steps, dtype=m0.dtype))
    return out


def _shoot_residual(
    theta: Array,
    m1: Array,
    s1: Array,
    m2: Array,
    s2: Array,
    lam: Array,
    scale: Array,
    geometry: str,
    steps: int,
) -> Array:
    d = m1.shape[-1]
    iu = jnp.triu_indices(d)
    a, b = _unpack(theta, d)
    m, s, _ = moment_flow(a, b, m1, s1, lam, geometry=geometry, steps=steps)
    return jnp.concatenate([m - m2, (s - s2)[iu]]) / scale


@partial(jax.jit, static_argnames=("geometry", "steps"))
def _residual_and_jacobian(
    theta: Array,
    m1: Array,
    s1: Array,
    m2: Array,
    s2: Array,
    lam: Array,
    scale: Array,
    geometry: str,
    steps: int,
) -> tuple[Array, Array]:
    args = (m1, s1, m2, s2, lam, scale, geometry, steps)
    return _shoot_residual(theta, *args), jax.jacfwd(_shoot_residual)(theta, *args)


@x64
def flow_divergence(
    mean1: Any,
    cov1: Any,
    mean2: Any,
    cov2: Any,
    *,
    geometry: Geometry = "wasserstein",
    lam: float = 0.0,
    steps: int = 256,
    tol: float = 1e-11,
    max_iter: int = 60,
) -> FlowResult:
    """The analog of ``KL(N1 || N2)`` from the flow definition, by shooting.

    Same argument convention as :mod:`~icml26.transport_kl.gaussian`: the flow starts at the
    reference ``N2`` and ends at ``N1``; ``A``, ``b`` are the potential of that flow.

    Args:
        mean1: mean of the compared law ``N1`` (the flow's end).
        cov1: covariance of ``N1``.
        mean2: mean of the reference ``N2`` (the flow's start).
        cov2: covariance of ``N2``.
        geometry: ``"wasserstein"`` or ``"kalman_wasserstein"``.
        lam: the Kalman-Wasserstein regulariser.
        steps: RK4 steps.
        tol: the shooting tolerance.
        max_iter: Newton steps.

    Returns:
        :class:`FlowResult`.

    Raises:
        ValueError: bad inputs, or the shooting does not reach ``N1`` (residual > 1e-7).
    """
    start_mean, start_cov, end_mean, end_cov = mean2, cov2, mean1, cov1  # N2 -> N1
    if geometry not in ("wasserstein", "kalman_wasserstein"):
        raise ValueError(
            f"geometry must be 'wasserstein' or 'kalman_wasserstein', got {geometry!r}"
        )
    check_gaussian_pair(start_mean, start_cov, end_mean, end_cov)
    check_nonnegative("lam", lam)
    m_start, s_start, m_end, s_end = (
        jnp.asarray(x, jnp.float64) for x in (start_mean, start_cov, end_mean, end_cov)
    )
    d = m_start.shape[-1]
    iu = jnp.triu_indices(d)
    lam_a = jnp.asarray(lam, jnp.float64)
    scale = 1.0 + jnp.max(jnp.abs(s_end))

    def res_jac(th: Array) -> tuple[Array, Array]:
        return _residual_and_jacobian(
            th, m_start, s_start, m_end, s_end, lam_a, scale, geometry, steps
        )

    c0 = _precond(s_start, geometry, lam_a)
    theta = jnp.concatenate([jnp.zeros(len(iu[0])), jnp.linalg.solve(c0, m_end - m_start)])
    r, jac = res_jac(theta)
    norm = float(jnp.linalg.norm(r))
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - reported
        if norm < tol:
            break
        step = jnp.linalg.lstsq(jac, -r)[0]
        alpha = 1.0
        while alpha > 1e-4:
            cand = theta + alpha * step
            r_c, jac_c = res_jac(cand)
            n_c = float(jnp.linalg.norm(r_c))
            if np.isfinite(n_c) and n_c < norm:
                theta, r, jac, norm = cand, r_c, jac_c, n_c
                break
            alpha *= 0.5
        else:
            break
    if not norm < 1e-7:
        raise ValueError(
            f"shooting did not reach the target law (residual {norm:.2e}); the pair may be too "
            "far apart or degenerate for the numerical flow"
        )
    a, b = _unpack(theta, d)
    _, _, value = moment_flow(a, b, m_start, s_start, lam_a, geometry=geometry, steps=steps)
    return FlowResult(float(value), np.asarray(a), np.asarray(b), norm, it)


def _quad_var(a: Array, b: Array, m: Array, s: Array) -> Array:
    """``Var(x^T A x / 2 + b^T x)`` for ``x ~ N(m, S)``."""
    g = a @ m + b
    return 0.5 * jnp.trace(a @ s @ a @ s) + g @ s @ g


@x64
def fisher_rao_divergence(
    mean1: Any, cov1: Any, mean2: Any, cov2: Any, *, nodes: int = 64
) -> float:
    """``int_0^1 t Var_{rho_t}(f) dt`` along ``rho_t ∝ N2^{1-t} N1^t``; equals ``KL(N1 || N2)``.

    Args:
        mean1: mean of the compared law ``N1`` (the flow's end).
        cov1: covariance of ``N1``.
        mean2: mean of the reference ``N2`` (the flow's start).
        cov2: covariance of ``N2``.
        nodes: Gauss-Legendre nodes in ``t``.

    Returns:
        The path integral.

    Raises:
        ValueError: bad inputs.
    """
    start_mean, start_cov, end_mean, end_cov = mean2, cov2, mean1, cov1  # N2 -> N1
    check_gaussian_pair(start_mean, start_cov, end_mean, end_cov)
    m_start, s_start, m_end, s_end = (
        jnp.asarray(x, jnp.float64) for x in (start_mean, start_cov, end_mean, end_cov)
    )
    p_start, p_end = jnp.linalg.inv(s_start), jnp.linalg.inv(s_end)
    # f = log p_end - log p_start = -x^T (P_end - P_start) x / 2 + (P_end m_end - P_start m_start)^T x
    a = -(p_end - p_start)
    b = p_end @ m_end - p_start @ m_start
    x, w = np.polynomial.legendre.leggauss(nodes)
    total = 0.0
    for t, wt in zip(0.5 * (x + 1.0), 0.5 * w, strict=True):
        p_t = (1 - t) * p_start + t * p_end
        s_t = jnp.linalg.inv(p_t)
        m_t = s_t @ ((1 - t) * p_start @ m_start + t * p_end @ m_end)
        total += wt * t * float(_quad_var(a, b, m_t, s_t))
    return total


@partial(jax.jit, static_argnames=("iters",))
def _coupling_search(r1: Array, r2: Array, key: Array, *, iters: int) -> Array:
    """``max_Q tr(R2 Q R1)`` over rotations ``Q = (I + X)^{-1}(I - X)`` (Cayley, ``X`` skew), L-BFGS."""
    d = r1.shape[-1]
    iu = jnp.triu_indices(d, 1)

    def loss(x: Array) -> Array:
        sk = jnp.zeros((d, d), r1.dtype).at[iu].set(x)
        sk = sk - sk.T
        eye = jnp.eye(d, dtype=r1.dtype)
        q = jnp.linalg.solve(eye + sk, eye - sk)  # Cayley map: skew -> rotation
        return -jnp.trace(r2 @ q @ r1)

    x0 = 1e-3 * jax.random.normal(key, (len(iu[0]),), r1.dtype)
    opt = optax.lbfgs()
    vg = optax.value_and_grad_from_state(loss)

    def step(carry: tuple[Array, Any], _: Any) -> tuple[tuple[Array, Any], None]:
        x, st = carry
        val, g = vg(x, state=st)
        upd, st = opt.update(g, st, x, value=val, grad=g, value_fn=loss)
        return (optax.apply_updates(x, upd), st), None

    (x, _), _ = jax.lax.scan(step, (x0, opt.init(x0)), None, length=iters)
    return -loss(x)


@x64
def w2_by_coupling_search(
    mean1: Any, cov1: Any, mean2: Any, cov2: Any, *, iters: int = 300, seed: int = 0
) -> float:
    """``W2^2`` by searching the optimal Gaussian coupling over rotations with ``optax.lbfgs``.

    For ``X ~ N(m1, S1)``, ``Y = m2 + S2^{1/2} Q S1^{-1/2}(X - m1)`` couples the two laws for
    any orthogonal ``Q``; ``W2^2 = |dm|^2 + tr S1 + tr S2 - 2 max_Q tr(S2^{1/2} Q S1^{1/2})``.
    """
    check_gaussian_pair(mean1, cov1, mean2, cov2)
    m1, s1, m2, s2 = (jnp.asarray(x, jnp.float64) for x in (mean1, cov1, mean2, cov2))
    best = _coupling_search(psd_sqrt(s1), psd_sqrt(s2), jax.random.key(seed), iters=iters)
    dm = m2 - m1
    return float(dm @ dm + jnp.trace(s1) + jnp.trace(s2) - 2.0 * best)
