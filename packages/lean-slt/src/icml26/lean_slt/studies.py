"""The four studies of the main job: each formalised bound against simulation.

Each study is a frozen settings dataclass (built from a :class:`~icml26.lean_slt.config.RunConfig`
by ``from_config``) whose ``run(rng)`` returns a :class:`Study`: curves for the figures and
flat metrics (``dudley.<process>.*``, ``concentration.<f>.*``, ``ls_rate.<setting>.*``,
``maurey.d<d>.*``). ``checks.*`` count cases where a theorem's inequality was violated beyond
Monte Carlo error: tests of the implementation (a theorem cannot fail), not claims.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from icml26.lean_slt.concentration import LIPSCHITZ_FUNCTIONS, check_lipschitz, tail_check
from icml26.lean_slt.config import RunConfig
from icml26.lean_slt.covering import (
    euclidean_ball_log_covering_bound,
    greedy_net,
    l1_ball_log_packing_gv,
    l1_ball_log_volume_lower,
    maurey_log_covering_bound,
    sample_l1_ball,
    sample_sparse_sign_vectors,
)
from icml26.lean_slt.least_squares import (
    best_subset_ls,
    critical_radius,
    empirical_error,
    fit_exponent,
    formal_linear_rate_bound,
    l1_constrained_ls,
    l1_local_complexity_bound,
    linear_critical_radius,
    master_error_bound,
)
from icml26.lean_slt.processes import make_process, monte_carlo_sup
from icml26.shared import log

__all__ = [
    "THEORY_EXPONENT",
    "ConcentrationStudy",
    "DudleyStudy",
    "LeastSquaresStudy",
    "MaureyStudy",
    "Study",
    "hard_sparsity",
    "oracle_ls_error",
]

#: The theorem's exponent of each least-squares setting (error against n, or d).
#: The ``l1_dim_*`` settings fit the error against ``log d`` at fixed ``n``: the slow rate
#: ``sigma R sqrt(log d / n)`` has exponent 1/2 there; an oracle that knows the support pays
#: nothing for ``d`` (``sigma^2 s / n``), so its exponent is 0 at fixed ``s`` and -1/2 at the
#: hard points (where ``s ~ sqrt(n / log d)``).
THEORY_EXPONENT = {
    "linear": -1.0,
    "linear_dim": 1.0,
    "l1": -0.5,
    "l1_dim_hard": 0.5,
    "l1_dim_hard_oracle": -0.5,
    "l1_dim_sparse": 0.5,
    "l1_dim_sparse_oracle": 0.0,
    "l0": -1.0,
}


@dataclass
class Study:
    """What a study returns: curves for the figures and flat metrics for ``results.json``."""

    curves: dict = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


def _slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# -- Dudley -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DudleyStudy:
    """``dudley`` against simulated and exact suprema of Gaussian processes.

    Attributes:
        processes: process names (``processes.PROCESSES``).
        sizes: index-set sizes ``n``.
        draws: Monte Carlo draws of the supremum per size.
    """

    processes: tuple[str, ...]
    sizes: tuple[int, ...]
    draws: int

    @classmethod
    def from_config(cls, cfg: RunConfig) -> DudleyStudy:
        """The study of ``cfg``."""
        return cls(tuple(cfg.processes), tuple(sorted(set(cfg.dudley_sizes))), cfg.dudley_draws)

    def run(self, rng: np.random.Generator) -> Study:
        """Bound, Monte Carlo sup (99.9 % interval) and exact sup per process and size."""
        out, violations = Study(), 0
        for name in self.processes:
            cur: dict[str, list[float]] = {k: [] for k in ("n", "bound", "mc", "lo", "hi", "truth")}
            for n in self.sizes:
                p = make_process(name, n)
                bound, mc = p.dudley_bound(), monte_carlo_sup(p, rng, self.draws)
                for k, v in zip(
                    cur, (n, bound, mc.mean, mc.lo, mc.hi, p.expected_sup()), strict=True
                ):
                    cur[k].append(float(v))
                violations += int(bound < mc.lo)
            out.curves[name] = cur
            out.metrics.update(_dudley_metrics(f"dudley.{name}", cur))
            log(
                f"dudley {name}: looseness {cur['bound'][-1] / cur['truth'][-1]:.1f} at n={self.sizes[-1]}"
            )
        out.metrics["checks.dudley_violations"] = float(violations)
        return out


def _dudley_metrics(key: str, cur: dict[str, list[float]]) -> dict[str, float]:
    ratios = np.asarray(cur["bound"]) / np.asarray(cur["mc"])
    loose = np.asarray(cur["bound"]) / np.asarray(cur["truth"])
    slope_b, slope_mc = _slope(cur["n"], cur["bound"]), _slope(cur["n"], cur["mc"])
    last = {k: cur[k][-1] for k in ("n", "bound", "lo", "hi", "truth")}
    return {
        **{f"{key}.{k}": v for k, v in last.items()},
        f"{key}.mc_sup": cur["mc"][-1],
        f"{key}.ratio": float(ratios[-1]),
        f"{key}.min_ratio": float(ratios.min()),
        f"{key}.first_ratio": float(ratios[0]),
        f"{key}.looseness": float(loose[-1]),
        f"{key}.first_looseness": float(loose[0]),
        f"{key}.slope_bound": slope_b,
        f"{key}.slope_mc": slope_mc,
        f"{key}.slope_gap": abs(slope_b - slope_mc),
    }


# -- concentration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConcentrationStudy:
    """``gaussian_lipschitz_concentration`` for each function, by simulation in batches.

    Attributes:
        functions: names in ``concentration.LIPSCHITZ_FUNCTIONS``.
        dim: dimension of ``X ~ N(0, I_dim)``.
        draws: draws per batch.
        batches: independent batches; the variance-proxy ratio is reported as mean +- SE.
    """

    functions: tuple[str, ...]
    dim: int
    draws: int
    batches: int

    @classmethod
    def from_config(cls, cfg: RunConfig) -> ConcentrationStudy:
        """The study of ``cfg``."""
        return cls(
            tuple(cfg.functions),
            cfg.concentration_dim,
            cfg.concentration_draws,
            cfg.concentration_batches,
        )

    def run(self, rng: np.random.Generator) -> Study:
        """Tail against bound, its Monte Carlo error and the variance-proxy ratio per function."""
        out, violations = Study(), 0
        for name in self.functions:
            f = LIPSCHITZ_FUNCTIONS[name]
            est = check_lipschitz(f.fn, f.lipschitz, self.dim, rng)
            checks = [
                tail_check(f, self.dim, rng, self.draws, verify_lipschitz=False)
                for _ in range(self.batches)
            ]
            violations += sum(int(tc.max_excess > tc.mc_error) for tc in checks)
            ratios = np.asarray([tc.variance_ratio for tc in checks])
            key = f"concentration.{name}"
            out.metrics.update(
                {
                    f"{key}.max_excess": max(tc.max_excess for tc in checks),
                    f"{key}.mc_error": checks[0].mc_error,
                    f"{key}.tightness": float(ratios.mean()),
                    f"{key}.tightness_se": float(ratios.std(ddof=1) / math.sqrt(ratios.size)),
                    f"{key}.lipschitz_estimate": est,
                }
            )
            tc = checks[0]
            out.curves[name] = {
                "t": tc.t.tolist(),
                "tail": tc.tail.tolist(),
                "bound": tc.bound.tolist(),
            }
            log(f"concentration {name}: tightness {ratios.mean():.3f} ± {ratios.std(ddof=1):.3f}")
        out.metrics["checks.concentration_violations"] = float(violations)
        return out


# -- least squares ------------------------------------------------------------------------------


def _gaussian_design(
    rng: np.random.Generator, n: int, d: int, normalise: bool = False
) -> np.ndarray:
    X = rng.standard_normal((n, d))
    if normalise:  # columnNormBound: ||X_j||_2 <= sqrt(n), here with equality
        X *= math.sqrt(n) / np.linalg.norm(X, axis=0)
    return X


def _l1_theta(rng: np.random.Generator, s: int, d: int, radius: float) -> np.ndarray:
    """``s`` equal spikes with random signs on the sphere ``||theta||_1 = R``."""
    theta = np.zeros(d)
    idx = rng.choice(d, size=s, replace=False)
    theta[idx] = rng.choice([-1.0, 1.0], size=s) * radius / s
    return theta


def hard_sparsity(n: int, d: int, radius: float, sigma: float) -> int:
    """``s ~ R sqrt(n / log d) / sigma``: where the sparse rate ``sigma^2 s log(d/s) / n``
    meets the slow rate ``sigma R sqrt(log d / n)`` (the minimax lower bound's hard points)."""
    return int(min(d, max(1, math.ceil(radius * math.sqrt(n / math.log(d)) / sigma))))


@dataclass(frozen=True)
class LeastSquaresStudy:
    """Least-squares rates against the theorems' exponents; the master bound's coverage.

    Attributes:
        cfg: the run's configuration (grids, dimensions, repetitions, noise).
    """

    cfg: RunConfig

    @classmethod
    def from_config(cls, cfg: RunConfig) -> LeastSquaresStudy:
        """The study of ``cfg``."""
        return cls(cfg)

    def run(self, rng: np.random.Generator) -> Study:
        """Per setting: errors per repetition on the grid; the exponent of the mean curve."""
        out = Study()
        for setting in self.cfg.ls_settings:
            xs, errs, extra = _SETTINGS[setting](self.cfg, rng)  # errs: (grid, reps)
            out.metrics.update(_rate_metrics(setting, xs, errs, extra))
            out.curves[setting] = {"x": xs, "err": errs.mean(axis=1).tolist()}
            m = out.metrics
            log(
                f"least squares {setting}: exponent {m[f'ls_rate.{setting}.exponent']:.3f} ± {m[f'ls_rate.{setting}.stderr']:.3f}"
            )
        viol = sum(
            int(out.metrics[k] < out.metrics[k.replace("coverage", "probability")] - 0.05)
            for k in out.metrics
            if k.endswith("master_coverage")
        )
        out.metrics["checks.master_violations"] = float(viol)
        return out


def _rate_metrics(
    setting: str, xs: list[float], errs: np.ndarray, extra: dict[str, float]
) -> dict[str, float]:
    """Exponent of the mean-error curve, with its jackknife SE over repetitions.

    Fitting each repetition's curve on the log scale would be biased (``E log err < log E err``
    by about ``1/d`` for an OLS error ``~ chi^2_d``); the jackknife leaves one repetition out
    at a time and refits the mean curve.
    """
    x, reps = np.asarray(xs), errs.shape[1]
    pooled = fit_exponent(x, errs.mean(axis=1))
    loo = np.asarray(
        [fit_exponent(x, np.delete(errs, r, axis=1).mean(axis=1)).exponent for r in range(reps)]
    )
    key = f"ls_rate.{setting}"
    return {
        f"{key}.exponent": pooled.exponent,
        f"{key}.stderr": float(math.sqrt((reps - 1) / reps * ((loo - loo.mean()) ** 2).sum())),
        f"{key}.fit_stderr": pooled.stderr,
        f"{key}.theory_exponent": THEORY_EXPONENT[setting],
        **{f"{key}.{k}": v for k, v in extra.items()},
    }


def _master(errs: np.ndarray, radii: list[float], probs: list[float]) -> dict[str, float]:
    """Coverage of the master bound's radius over repetitions, its probability, looseness."""
    return {
        "master_coverage": float(np.mean(errs <= np.asarray(radii)[:, None])),
        "master_probability": float(min(probs)),
        "master_looseness": float(np.mean(np.asarray(radii) / errs.mean(axis=1))),
    }


def _linear(
    cfg: RunConfig, rng: np.random.Generator, by_dim: bool
) -> tuple[list[float], np.ndarray, dict[str, float]]:
    grid = sorted(set(cfg.linear_dims if by_dim else cfg.linear_sizes))
    errs, radii, probs, formal = np.zeros((len(grid), cfg.ls_reps)), [], [], []
    for i, v in enumerate(grid):
        n, d = (cfg.linear_dim_n, v) if by_dim else (v, cfg.linear_dim)
        for r in range(cfg.ls_reps):
            X, theta = _gaussian_design(rng, n, d), rng.standard_normal(d)
            y = X @ theta + cfg.sigma * rng.standard_normal(n)
            theta_hat, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
            errs[i, r] = empirical_error(X, theta_hat, theta)
        ds = linear_critical_radius(cfg.sigma, rank, n)
        radius, prob = master_error_bound(ds, ds, n, cfg.sigma)
        radii.append(radius)
        probs.append(prob)
        formal.append(formal_linear_rate_bound(cfg.sigma, d, n)[0] / errs[i].mean())
    extra = {"formal_looseness": float(np.mean(formal)), **_master(errs, radii, probs)}
    return [float(v) for v in grid], errs, extra


def _l1(
    cfg: RunConfig, rng: np.random.Generator
) -> tuple[list[float], np.ndarray, dict[str, float]]:
    """Error against ``n`` at the hard points of the ball (reported; an oracle at the same
    points has the same exponent -1/2, so this is not a claim)."""
    d, R, sig = cfg.l1_dim, cfg.l1_radius, cfg.sigma
    grid = sorted(set(cfg.l1_sizes))
    errs, radii, probs = np.zeros((len(grid), cfg.l1_reps)), [], []
    for i, n in enumerate(grid):
        s = hard_sparsity(n, d, R, sig)
        for r in range(cfg.l1_reps):
            X, theta = _gaussian_design(rng, n, d, normalise=True), _l1_theta(rng, s, d, R)
            y = X @ theta + sig * rng.standard_normal(n)
            errs[i, r] = empirical_error(X, l1_constrained_ls(X, y, R, tol=1e-7), theta)
        ds = critical_radius(lambda de, n=n: l1_local_complexity_bound(de, R, d, n), sig)
        radius, prob = master_error_bound(ds, ds, n, sig)
        radii.append(radius)
        probs.append(prob)
    slow = sig * R * np.sqrt(math.log(d) / np.asarray(grid, float))
    extra = {
        "formal_exponent": fit_exponent(np.asarray(grid, float), np.asarray(radii)).exponent,
        "slow_rate_ratio": float(np.mean(errs.mean(axis=1) / slow)),
        **_master(errs, radii, probs),
    }
    return [float(n) for n in grid], errs, extra


def oracle_ls_error(X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> float:
    """Error of least squares on the true support of ``theta`` (an oracle that knows it)."""
    support = np.flatnonzero(theta)
    sub = X[:, support]
    return empirical_error(sub, np.linalg.lstsq(sub, y, rcond=None)[0], theta[support])


def _l1_dims(
    cfg: RunConfig, rng: np.random.Generator, hard: bool, oracle: bool
) -> tuple[list[float], np.ndarray, dict[str, float]]:
    """Error against ``log d`` at fixed ``n = l1_dim_n``: at the hard points of each ``d``
    (``hard``) or at ``l1_sparsity`` spikes; the l1-constrained LS or the support oracle."""
    n, R, sig = cfg.l1_dim_n, cfg.l1_radius, cfg.sigma
    grid = sorted(set(cfg.l1_dims))
    errs = np.zeros((len(grid), cfg.l1_reps))
    for i, d in enumerate(grid):
        s = hard_sparsity(n, d, R, sig) if hard else cfg.l1_sparsity
        for r in range(cfg.l1_reps):
            X, theta = _gaussian_design(rng, n, d, normalise=True), _l1_theta(rng, s, d, R)
            y = X @ theta + sig * rng.standard_normal(n)
            errs[i, r] = (
                oracle_ls_error(X, y, theta)
                if oracle
                else empirical_error(X, l1_constrained_ls(X, y, R, tol=1e-7), theta)
            )
    slow = sig * R * np.sqrt(np.log(np.asarray(grid, float)) / n)
    extra = {"slow_rate_ratio": float(np.mean(errs.mean(axis=1) / slow))}
    return [math.log(d) for d in grid], errs, extra


def _l0(
    cfg: RunConfig, rng: np.random.Generator
) -> tuple[list[float], np.ndarray, dict[str, float]]:
    d, s = cfg.l0_dim, cfg.l0_sparsity
    grid = sorted(set(cfg.l0_sizes))
    errs = np.zeros((len(grid), cfg.ls_reps))
    for i, n in enumerate(grid):
        for r in range(cfg.ls_reps):
            X, theta = _gaussian_design(rng, n, d), _l1_theta(rng, s, d, float(s))
            y = X @ theta + cfg.sigma * rng.standard_normal(n)
            errs[i, r] = empirical_error(X, best_subset_ls(X, y, s), theta)
    rate = cfg.sigma**2 * s * math.log(math.e * d / s) / np.asarray(grid, float)
    return (
        [float(n) for n in grid],
        errs,
        {"rate_constant": float(np.mean(errs.mean(axis=1) / rate))},
    )


_Setting = Callable[
    [RunConfig, np.random.Generator], tuple[list[float], np.ndarray, dict[str, float]]
]
_SETTINGS: dict[str, _Setting] = {
    "linear": partial(_linear, by_dim=False),
    "linear_dim": partial(_linear, by_dim=True),
    "l1": _l1,
    "l1_dim_hard": partial(_l1_dims, hard=True, oracle=False),
    "l1_dim_hard_oracle": partial(_l1_dims, hard=True, oracle=True),
    "l1_dim_sparse": partial(_l1_dims, hard=False, oracle=False),
    "l1_dim_sparse_oracle": partial(_l1_dims, hard=False, oracle=True),
    "l0": _l0,
}


# -- Maurey -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaureyStudy:
    """``coveringNumber_l1Ball_le`` squeezed between a certified packing and greedy covers.

    Attributes:
        dims: dimensions ``d``.
        radius, eps: ``R`` and ``eps``.
        samples: sampled points of the ball per dimension (greedy nets).
    """

    dims: tuple[int, ...]
    radius: float
    eps: float
    samples: int

    @classmethod
    def from_config(cls, cfg: RunConfig) -> MaureyStudy:
        """The study of ``cfg``."""
        return cls(
            tuple(sorted(set(cfg.maurey_dims))),
            cfg.maurey_radius,
            cfg.maurey_eps,
            cfg.maurey_samples,
        )

    def run(self, rng: np.random.Generator) -> Study:
        """Per dimension: Maurey's log bound, certified packing, greedy net, l2 volume bound."""
        R, eps = self.radius, self.eps
        out = Study(
            curves={k: [] for k in ("d", "log_bound", "log_packing", "log_greedy", "log_volume_l2")}
        )
        violations, high = 0, []
        for d in self.dims:
            log_bound = float(maurey_log_covering_bound(R, eps, d))
            pts = [sample_l1_ball(rng, self.samples // 2, d, R)]
            pts += [
                sample_sparse_sign_vectors(rng, max(1, self.samples // 6), d, k, R)
                for k in (1, 2, 3)
                if k <= d
            ]
            sample = np.concatenate(pts)
            log_greedy = math.log(len(greedy_net(sample, eps)))
            log_sample_packing = math.log(len(greedy_net(sample, 2 * eps * (1 + 1e-9))))
            gv, vol = l1_ball_log_packing_gv(R, eps, d), float(l1_ball_log_volume_lower(R, eps, d))
            log_packing = max(gv, vol, log_sample_packing)
            violations += int(log_packing > log_bound + 1e-9)
            squeeze = log_bound / log_packing if log_packing > 0 else float("inf")
            key = f"maurey.d{d}"
            for k, v in (
                ("log_bound", log_bound),
                ("log_greedy", log_greedy),
                ("log_packing", log_packing),
                ("log_packing_gv", gv),
                ("log_packing_sample", log_sample_packing),
                ("log_packing_volume", vol),
                ("squeeze", squeeze),
            ):
                out.metrics[f"{key}.{k}"] = v
            if d >= 100:
                high.append(squeeze)
            row = (
                d,
                log_bound,
                log_packing,
                log_greedy,
                float(euclidean_ball_log_covering_bound(R, eps, d)),
            )
            for name, value in zip(out.curves, row, strict=True):
                out.curves[name].append(float(value))
            log(f"maurey d={d}: log bound {log_bound:.1f}, packing {log_packing:.2f}")
        out.metrics["maurey.squeeze_high_dim"] = max(high) if high else float("nan")
        out.metrics["checks.maurey_violations"] = float(violations)
        return out
