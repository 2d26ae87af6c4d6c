r"""Elliptic laws (multivariate Student-t and other scale mixtures of Gaussians).

An elliptic law ``E(m, S; g)`` is ``m + S^{1/2} R U`` with ``U`` uniform on the sphere and a
radial law fixed by the family; its covariance is ``kappa S`` with ``kappa = E[R^2] / d``
(Student-t with ``dof`` degrees of freedom: ``kappa = dof / (dof - 2)``). A gradient flow of a
quadratic potential is affine, so it maps ``E(m, S; g)`` into the same family, and the flow
integral only involves first and second moments. Hence, within one family,

    WKL(E1 | E2)  = WKL(N(m1, kappa S1) | N(m2, kappa S2))
    KWKL(E1 | E2) = KWKL(N(m1, kappa S1) | N(m2, kappa S2))
    W2(E1, E2)    = W2(N(m1, kappa S1), N(m2, kappa S2))   (the linear OT map is optimal)

and with equal, degenerating scatter ``S = eps I`` they stay finite, while ``KL`` (affine
invariant) grows like ``1/eps``. :func:`kl_student_t_mc` estimates the classical KL by Monte
Carlo (no closed form exists), :func:`particle_flow_divergence` evaluates the flow definition
on samples (an interacting particle system for Kalman-Wasserstein, as an ensemble Kalman
method) as an independent check of the closed forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from icml26.transport_kl import gaussian
from icml26.transport_kl._x64 import x64
from icml26.transport_kl.ode import rk4_step

__all__ = [
    "ParticleFlowResult",
    "kl_student_t_mc",
    "kwkl_student_t",
    "particle_flow_divergence",
    "sample_student_t",
    "student_t_kappa",
    "w2_student_t",
    "wkl_student_t",
]


def student_t_kappa(dof: float) -> float:
    """Covariance / scatter ratio of a Student-t law (finite covariance needs ``dof > 2``)."""
    if not np.isfinite(dof) or dof <= 2:
        raise ValueError(f"Student-t dof must be > 2 for a finite covariance, got {dof}")
    return float(dof / (dof - 2.0))


def wkl_student_t(mean1: Any, scatter1: Any, mean2: Any, scatter2: Any, dof: float) -> Array:
    """WKL between two Student-t laws with the same ``dof`` (scatter matrices ``S1, S2``)."""
    k = student_t_kappa(dof)
    return gaussian.wkl(mean1, k * np.asarray(scatter1), mean2, k * np.asarray(scatter2))


def kwkl_student_t(
    mean1: Any, scatter1: Any, mean2: Any, scatter2: Any, dof: float, lam: float = 1.0
) -> Array:
    """KWKL between two Student-t laws with the same ``dof``."""
    k = student_t_kappa(dof)
    return gaussian.kwkl(mean1, k * np.asarray(scatter1), mean2, k * np.asarray(scatter2), lam)


def w2_student_t(
    mean1: Any, scatter1: Any, mean2: Any, scatter2: Any, dof: float, *, squared: bool = False
) -> Array:
    """Wasserstein-2 between two Student-t laws with the same ``dof``."""
    k = student_t_kappa(dof)
    return gaussian.w2(
        mean1, k * np.asarray(scatter1), mean2, k * np.asarray(scatter2), squared=squared
    )


def sample_student_t(
    key: Array,
    mean: Any,
    scatter: Any,
    dof: float,
    n: int,
    *,
    antithetic: bool = True,
    moment_match: bool = False,
) -> Array:
    """``n`` samples of ``t_dof(mean, scatter)``.

    ``antithetic`` pairs ``m ± z`` halve the Monte-Carlo noise; ``moment_match`` rescales the
    sample affinely so that its empirical mean and covariance equal ``mean`` and
    ``kappa * scatter`` exactly (the shape of the sample, heavy tails included, is kept).
    """
    student_t_kappa(dof)
    with jax.enable_x64(True):
        mean = jnp.asarray(mean, jnp.float64)
        d = mean.shape[-1]
        kz, kg = jax.random.split(key)
        half = (n + 1) // 2 if antithetic else n
        z = jax.random.normal(kz, (half, d), jnp.float64)
        g = jax.random.gamma(kg, dof / 2.0, (half, 1), jnp.float64) / (dof / 2.0)
        x = z / jnp.sqrt(g)
        if antithetic:
            x = jnp.concatenate([x, -x])[:n]
        w, v = jnp.linalg.eigh(jnp.asarray(scatter, jnp.float64))
        root = (v * jnp.sqrt(jnp.maximum(w, 0.0))) @ v.T
        if moment_match:
            xc = x - x.mean(0)
            cw, cv = jnp.linalg.eigh(xc.T @ xc / n)
            x = (xc @ (cv / jnp.sqrt(cw))) @ cv.T * jnp.sqrt(student_t_kappa(dof))
        return mean + x @ root


@dataclass(frozen=True)
class ParticleFlowResult:
    value: float
    stderr: float
    final_mean: np.ndarray
    final_cov: np.ndarray


@partial(jax.jit, static_argnames=("kalman", "steps"))
def _particle_flow(
    x0: Array, a: Array, b: Array, lam: Array, *, kalman: bool, steps: int
) -> tuple[Array, Array]:
    """RK4 for ``x' = C_t (A x + b)`` on particles; per-particle ``int_0^1 t g^T C_t g dt``."""
    h = 1.0 / steps
    d = x0.shape[-1]

    def precond(x: Array) -> Array:
        if not kalman:
            return jnp.eye(d, dtype=x.dtype)
        xc = x - x.mean(0)
        return xc.T @ xc / x.shape[0] + lam * jnp.eye(d, dtype=x.dtype)

    def rhs(t: Array, x: Array) -> tuple[Array, Array]:
        c = precond(x)
        g = x @ a + b  # A symmetric
        return g @ c, t * jnp.einsum("ni,ij,nj->n", g, c, g)

    def step(state: tuple[Array, Array], k: Array) -> tuple[tuple[Array, Array], None]:
        return rk4_step(lambda t, xa: rhs(t, xa[0]), k * h, state, h), None

    (x1, acc), _ = jax.lax.scan(
        step, (x0, jnp.zeros(x0.shape[0], x0.dtype)), jnp.arange(steps, dtype=x0.dtype)
    )
    return x1, acc


@x64
def particle_flow_divergence(
    samples: Any, a: Any, b: Any, *, lam: float | None = None, steps: int = 128
) -> ParticleFlowResult:
    """Monte-Carlo flow definition ``E_mu[int_0^1 t grad f^T C grad f dt]`` on particles.

    ``lam=None``: Wasserstein flow ``x' = A x + b``; ``lam >= 0``: Kalman-Wasserstein flow with
    the *empirical* covariance of the particles plus ``lam I`` (an ensemble Kalman flow).
    """
    x0 = jnp.asarray(samples, jnp.float64)
    if x0.ndim != 2 or x0.shape[0] < 2:
        raise ValueError(f"samples must have shape (n >= 2, d), got {x0.shape}")
    kalman = lam is not None
    x1, acc = _particle_flow(
        x0,
        jnp.asarray(a, jnp.float64),
        jnp.asarray(b, jnp.float64),
        jnp.asarray(0.0 if lam is None else lam, jnp.float64),
        kalman=kalman,
        steps=steps,
    )
    acc_np = np.asarray(acc)
    return ParticleFlowResult(
        value=float(acc_np.mean()),
        stderr=float(acc_np.std(ddof=1) / np.sqrt(len(acc_np))),
        final_mean=np.asarray(x1.mean(0)),
        final_cov=np.cov(np.asarray(x1).T),
    )


def kl_student_t_mc(
    mean1: Any, scatter1: Any, mean2: Any, scatter2: Any, dof: float, *, n: int, seed: int
) -> tuple[float, float]:
    """Monte-Carlo ``KL(t1 | t2)`` (same ``dof``) with SciPy densities: ``(estimate, stderr)``."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    p = stats.multivariate_t(np.asarray(mean1, float), np.asarray(scatter1, float), df=dof)
    q = stats.multivariate_t(np.asarray(mean2, float), np.asarray(scatter2, float), df=dof)
    x = p.rvs(size=n, random_state=rng)
    diff = p.logpdf(x) - q.logpdf(x)
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(n))
