r"""The Kalman-ensemble reading of KWKL: covariance regularisation as a transport geometry.

Ensemble Kalman methods move particles along ``theta_j' = -C(Theta) grad Phi(theta_j)`` with
the ensemble covariance ``C`` as preconditioner: the Kalman-Wasserstein gradient flow. With
fewer particles than dimensions ``C`` is singular, so (i) the ensemble can never leave the
affine span of its initial members (the "subspace property") and (ii) between two such
degenerate laws the classical KL, and KWKL with ``lam = 0``, are infinite. The usual fix is
additive covariance inflation ``C + lam I``. This module shows numerically that the fix *is*
the KWKL geometry with parameter ``lam``:

* :func:`prox_step` — the steepest-descent step measured by KWKL,
  ``argmin_delta  <g, delta> + KWKL_lam(N(m, C) | N(m + delta, C)) / h``, computed with
  ``optax.lbfgs`` on our closed form, equals the inflated Kalman step ``-h (C + lam I) g``;
* :func:`ensemble_flow` — a linear-Gaussian inverse problem solved by the deterministic
  ensemble Kalman flow with ``J < d`` particles: with ``lam = 0`` the ensemble mean is stuck in
  the initial span, with ``lam > 0`` it reaches the minimiser.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from icml26.transport_kl import gaussian
from icml26.transport_kl._x64 import x64
from icml26.transport_kl.ode import rk4_step

__all__ = ["InverseProblem", "ensemble_flow", "make_inverse_problem", "prox_step", "span_gap"]


@x64
def prox_step(
    mean: Any, cov: Any, grad: Any, *, lam: float, h: float, iters: int = 200
) -> np.ndarray:
    """``argmin_delta <grad, delta> + KWKL_lam(N(mean, cov) | N(mean + delta, cov)) / h``.

    Solved numerically (``optax.lbfgs``) with :func:`gaussian.kwkl`; compare with
    ``-h (cov + lam I) grad``.
    """
    if lam <= 0 or h <= 0:
        raise ValueError(f"need lam > 0 and h > 0, got lam={lam}, h={h}")
    m = jnp.asarray(mean, jnp.float64)
    c = jnp.asarray(cov, jnp.float64)
    g = jnp.asarray(grad, jnp.float64)
    lam_a = jnp.asarray(lam, jnp.float64)

    def objective(delta: Array) -> Array:
        return g @ delta + gaussian.kwkl(m, c, m + delta, c, lam_a, validate=False) / h

    opt = optax.lbfgs()
    vg = optax.value_and_grad_from_state(objective)

    @jax.jit
    def run(x0: Array) -> Array:
        def body(carry: tuple[Array, Any], _: Any) -> tuple[tuple[Array, Any], None]:
            x, st = carry
            val, gr = vg(x, state=st)
            upd, st = opt.update(gr, st, x, value=val, grad=gr, value_fn=objective)
            return (optax.apply_updates(x, upd), st), None

        (x, _), _ = jax.lax.scan(body, (x0, opt.init(x0)), None, length=iters)
        return x

    return np.asarray(run(jnp.zeros_like(m)))


@dataclass(frozen=True)
class InverseProblem:
    """``y = H theta + noise``, Gaussian prior ``N(0, prior_var I)``; potential ``Phi``."""

    H: np.ndarray
    y: np.ndarray
    noise_var: float
    prior_var: float

    @property
    def minimiser(self) -> np.ndarray:
        """``argmin Phi`` (the posterior mean)."""
        d = self.H.shape[1]
        hess = self.H.T @ self.H / self.noise_var + np.eye(d) / self.prior_var
        return np.linalg.solve(hess, self.H.T @ self.y / self.noise_var)


def make_inverse_problem(
    seed: int, *, dim: int = 8, n_obs: int = 6, noise_var: float = 0.25, prior_var: float = 1.0
) -> InverseProblem:
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n_obs, dim)) / np.sqrt(dim)
    theta = rng.normal(size=dim)
    y = h @ theta + np.sqrt(noise_var) * rng.normal(size=n_obs)
    return InverseProblem(h, y, noise_var, prior_var)


@partial(jax.jit, static_argnames=("steps",))
def _flow(
    ens: Array, h: Array, y: Array, nv: Array, pv: Array, lam: Array, t_end: Array, *, steps: int
) -> Array:
    dt = t_end / steps
    d = ens.shape[1]

    def rhs(x: Array) -> Array:
        grad = (x @ h.T - y) @ h / nv + x / pv
        xc = x - x.mean(0)
        c = xc.T @ xc / x.shape[0] + lam * jnp.eye(d, dtype=x.dtype)
        return -grad @ c

    def step(x: Array, _: Any) -> tuple[Array, None]:
        return rk4_step(lambda _t, xx: rhs(xx), 0.0, x, dt), None

    out, _ = jax.lax.scan(step, ens, None, length=steps)
    return out


@x64
def ensemble_flow(
    problem: InverseProblem, ensemble: Any, *, lam: float, t_end: float, steps: int
) -> np.ndarray:
    """Deterministic ensemble Kalman flow ``theta_j' = -(C + lam I) grad Phi(theta_j)`` (RK4)."""
    ens = jnp.asarray(ensemble, jnp.float64)
    if ens.ndim != 2 or ens.shape[1] != problem.H.shape[1]:
        raise ValueError(f"ensemble must be (J, {problem.H.shape[1]}), got {ens.shape}")
    out = _flow(
        ens,
        jnp.asarray(problem.H),
        jnp.asarray(problem.y),
        jnp.asarray(problem.noise_var),
        jnp.asarray(problem.prior_var),
        jnp.asarray(lam, jnp.float64),
        jnp.asarray(t_end, jnp.float64),
        steps=steps,
    )
    return np.asarray(out)


def span_gap(initial: np.ndarray, point: np.ndarray) -> float:
    """Distance of ``point`` from the affine span of the rows of ``initial``."""
    base = initial.mean(0)
    basis, _ = np.linalg.qr((initial - base).T)
    v = point - base
    return float(np.linalg.norm(v - basis @ (basis.T @ v)))
