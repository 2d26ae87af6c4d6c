"""The non-control studies of the main job: closed forms against the flow definition, the
degeneration sweep, and the ensemble-Kalman example. Each returns ``{"metrics", "curves"}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from icml26.transport_kl import elliptic, flow, gaussian, kalman
from icml26.transport_kl.linalg import random_rotation, random_spd

__all__ = ["DIVS", "ClosedFormSettings", "closed_form_study", "degeneration_study", "kalman_study"]

DIVS = ("kl", "wkl", "kwkl", "w2")


@dataclass(frozen=True)
class ClosedFormSettings:
    """Closed forms vs the dynamical definition on random pairs.

    Attributes:
        dim: dimension of the laws.
        pairs: random Gaussian pairs (and as many Student-t pairs when ``particles``).
        flow_steps: RK4 steps of the flows.
        lam: KWKL's regulariser for commuting pairs.
        dof: Student-t degrees of freedom.
        particles: particles of the Student-t flow (0: skip).
        w2_search: also check ``W2^2`` by a coupling search.
    """

    dim: int = 2
    pairs: int = 3
    flow_steps: int = 128
    lam: float = 1.0
    dof: float = 6.0
    particles: int = 4000
    w2_search: bool = True


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def _student_t_errors(
    s: ClosedFormSettings, seed: int, m1: np.ndarray, m2: np.ndarray, pairs: dict[str, tuple]
) -> dict[str, float]:
    """Student-t closed forms against a particle flow from ``N2``'s law to ``N1``'s.

    Not circular: the particles come from ``scipy.stats.multivariate_t`` (no moment
    matching) and the flow is shot between the two samples' empirical moments, so the closed
    form's ``kappa = dof / (dof - 2)`` is used on one side only; the error is Monte Carlo.
    """
    out = {}
    for div, (geometry, lam, a1, a2) in pairs.items():
        closed = (
            elliptic.wkl_student_t(m1, a1, m2, a2, s.dof)
            if lam is None
            else elliptic.kwkl_student_t(m1, a1, m2, a2, s.dof, lam)
        )
        start = stats.multivariate_t(loc=m2, shape=a2, df=s.dof).rvs(s.particles, random_state=seed)
        end = stats.multivariate_t(loc=m1, shape=a1, df=s.dof).rvs(
            s.particles, random_state=seed + 1
        )
        pot = flow.flow_divergence(
            end.mean(0),
            np.cov(end.T),
            start.mean(0),
            np.cov(start.T),
            geometry=geometry,
            lam=lam or 0.0,
            steps=s.flow_steps,
        )
        pf = elliptic.particle_flow_divergence(start, pot.A, pot.b, lam=lam, steps=s.flow_steps)
        out[div] = _rel(float(closed), pf.value)
    return out


def closed_form_study(s: ClosedFormSettings, rng: np.random.Generator) -> dict[str, Any]:
    """Largest relative error of each closed form against its flow definition.

    Args:
        s: the settings.
        rng: the stream for the pairs.

    Returns:
        ``{"metrics": {"closed_form_error.<div>": ..., "student_t_mc_error.<div>": ...},
        "curves": {}}``: the Gaussian closed forms against exact flow computations (errors of
        ~1e-10: a test of the implementation), and the Student-t ones against particles drawn
        by SciPy (Monte Carlo error, ``particles`` draws).
    """
    errors: dict[str, list[float]] = {k: [] for k in (*DIVS, "student_t_wkl", "student_t_kwkl")}
    for _ in range(s.pairs):
        m1, m2 = rng.normal(size=s.dim), rng.normal(size=s.dim)
        s1, s2 = random_spd(rng, s.dim), random_spd(rng, s.dim)
        q = random_rotation(rng, s.dim)
        c1 = q @ np.diag(rng.uniform(0.3, 2.0, s.dim)) @ q.T
        c2 = q @ np.diag(rng.uniform(0.3, 2.0, s.dim)) @ q.T
        errors["kl"].append(
            _rel(float(gaussian.kl(m1, s1, m2, s2)), flow.fisher_rao_divergence(m1, s1, m2, s2))
        )
        for geometry, lam, a1, a2 in (
            ("wasserstein", 0.0, s1, s2),
            ("kalman_wasserstein", 0.0, s1, s2),
            ("kalman_wasserstein", s.lam, c1, c2),
        ):
            res = flow.flow_divergence(
                m1, a1, m2, a2, geometry=geometry, lam=lam, steps=s.flow_steps
            )
            closed = (
                gaussian.wkl(m1, a1, m2, a2)
                if geometry == "wasserstein"
                else gaussian.kwkl(m1, a1, m2, a2, lam)
            )
            errors["wkl" if geometry == "wasserstein" else "kwkl"].append(
                _rel(float(closed), res.value)
            )
        if s.w2_search:
            search = flow.w2_by_coupling_search(m1, s1, m2, s2, seed=int(rng.integers(2**31)))
            errors["w2"].append(_rel(float(gaussian.w2(m1, s1, m2, s2, squared=True)), search))
        if s.particles:
            seed = int(rng.integers(2**31 - 2))
            pairs = {
                "wkl": ("wasserstein", None, s1, s2),
                "kwkl": ("kalman_wasserstein", s.lam, c1, c2),
            }
            for div, err in _student_t_errors(s, seed, m1, m2, pairs).items():
                errors[f"student_t_{div}"].append(err)
    metrics = {f"closed_form_error.{d}": max(e) for d, e in errors.items() if e and d in DIVS}
    metrics.update(
        {f"student_t_mc_error.{d[10:]}": max(e) for d, e in errors.items() if e and d not in DIVS}
    )
    return {"metrics": metrics, "curves": {}}


def degeneration_study(
    dim: int, eps_grid: tuple[float, ...], lam: float, dof: float, mc_samples: int, seed: int
) -> dict[str, Any]:
    """Every divergence between ``N(0, eps I)`` and ``N(1, eps I)`` (and Student-t) as ``eps -> 0``.

    Args:
        dim: dimension.
        eps_grid: the covariance scales.
        lam: KWKL's regulariser.
        dof: Student-t degrees of freedom.
        mc_samples: Monte-Carlo samples of the Student-t KL.
        seed: the Monte-Carlo seed.

    Returns:
        ``{"metrics": {"degeneration.<family>.<div>.growth": last / first}, "curves": ...}``.
    """
    m1, m2 = np.ones(dim), np.zeros(dim)
    curves: dict[str, list[float]] = {}
    for eps in eps_grid:
        s = eps * np.eye(dim)
        kl_t, _ = elliptic.kl_student_t_mc(m1, s, m2, s, dof, n=mc_samples, seed=seed)
        vals = {
            "kl": float(gaussian.kl(m1, s, m2, s)),
            "wkl": float(gaussian.wkl(m1, s, m2, s)),
            "kwkl": float(gaussian.kwkl(m1, s, m2, s, lam)),
            "w2": float(gaussian.w2(m1, s, m2, s)),
            "t_kl": kl_t,
            "t_wkl": float(elliptic.wkl_student_t(m1, s, m2, s, dof)),
            "t_kwkl": float(elliptic.kwkl_student_t(m1, s, m2, s, dof, lam)),
            "t_w2": float(elliptic.w2_student_t(m1, s, m2, s, dof)),
        }
        for k, v in vals.items():
            curves.setdefault(k, []).append(v)
    metrics = {}
    for k, c in curves.items():
        family, div = ("student_t", k[2:]) if k.startswith("t_") else ("gaussian", k)
        metrics[f"degeneration.{family}.{div}.growth"] = c[-1] / c[0]
    return {"metrics": metrics, "curves": {"eps": list(eps_grid), **curves}}


def kalman_study(
    dim: int, ensemble: int, lam: float, t_end: float, steps: int, rng: np.random.Generator
) -> dict[str, Any]:
    """A collapsed ensemble on a linear inverse problem, with and without ``lam`` (KWKL).

    Args:
        dim: parameter dimension.
        ensemble: ensemble size (< dim: the ensemble spans a subspace).
        lam: the covariance regulariser.
        t_end: flow time.
        steps: integration steps.
        rng: the stream for the problem and the ensemble.

    Returns:
        ``kalman.mean_error.<lam0|lam>``, ``kalman.span_gap.<...>``, ``kalman.prox_step_error``.
    """
    problem = kalman.make_inverse_problem(int(rng.integers(2**31)), dim=dim)
    ens0 = rng.normal(size=(ensemble, dim))
    target = problem.minimiser
    metrics: dict[str, float] = {}
    for tag, value in (("lam0", 0.0), ("lam", lam)):
        mean = kalman.ensemble_flow(problem, ens0, lam=value, t_end=t_end, steps=steps).mean(0)
        metrics[f"kalman.mean_error.{tag}"] = float(
            np.linalg.norm(mean - target) / np.linalg.norm(target)
        )
        metrics[f"kalman.span_gap.{tag}"] = kalman.span_gap(ens0, mean)
    m, c = ens0.mean(0), np.cov(ens0.T, bias=True)
    g = problem.H.T @ (problem.H @ m - problem.y) / problem.noise_var + m / problem.prior_var
    step = kalman.prox_step(m, c, g, lam=lam, h=0.1)
    ref = -0.1 * (c + lam * np.eye(dim)) @ g
    metrics["kalman.prox_step_error"] = float(np.linalg.norm(step - ref) / np.linalg.norm(ref))
    return {"metrics": metrics, "curves": {}}
