"""The main job (``icml26 run lean-slt``) and the benchmark (``icml26 bench lean-slt``).

Four parts, each a stage with a typed result, run in order and checkpointed (a killed run
resumes after its last finished part)::

    dudley        dudley.<process>.{bound, mc_sup, lo, hi, ratio, truth, slope_bound, slope_mc,
                  slope_gap, min_ratio}
    concentration concentration.<f>.{max_excess, mc_error, tightness, lipschitz_estimate}
    least_squares ls_rate.<setting>.{exponent, theory_exponent, stderr, master_coverage,
                  master_probability, master_looseness, ...}
    maurey        maurey.d<d>.{log_bound, log_greedy, log_packing, squeeze}

``checks.*`` count the cases where a theorem's inequality was violated beyond Monte Carlo
error: those are tests of the implementation (a theorem cannot fail), not claims.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from icml26.lean_slt.concentration import LIPSCHITZ_FUNCTIONS, check_lipschitz, tail_check
from icml26.lean_slt.config import BenchConfig, LeanSLTConfig
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
from icml26.lean_slt.theorems import THEOREM_MAP
from icml26.shared import RunDir, log

__all__ = [
    "ConcentrationResult",
    "DudleyResult",
    "LeastSquaresResult",
    "MaureyResult",
    "bench",
    "run",
    "run_concentration",
    "run_dudley",
    "run_least_squares",
    "run_maurey",
]

_PART_INDEX = {"dudley": 1, "concentration": 2, "least_squares": 3, "maurey": 4}


def _rng(cfg: LeanSLTConfig, part: str) -> np.random.Generator:
    """One independent stream per part, so a resumed run draws exactly what it would have."""
    return np.random.default_rng([cfg.seed, _PART_INDEX[part]])


def _slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# -- Dudley -------------------------------------------------------------------------------------


@dataclass
class DudleyResult:
    """Per process: sizes, the formal bound, the Monte Carlo supremum (CI) and the truth."""

    curves: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


def run_dudley(cfg: LeanSLTConfig) -> DudleyResult:
    """``dudley`` against simulated suprema of Gaussian processes with known ``E sup``."""
    rng = _rng(cfg, "dudley")
    out = DudleyResult()
    violations = 0
    sizes = sorted(set(cfg.dudley_sizes))
    for name in cfg.processes:
        cur: dict[str, list[float]] = {k: [] for k in ("n", "bound", "mc", "lo", "hi", "truth")}
        for n in sizes:
            p = make_process(name, n)
            bound = p.dudley_bound()
            mc = monte_carlo_sup(p, rng, cfg.dudley_draws)
            for k, v in (("n", n), ("bound", bound), ("mc", mc.mean), ("lo", mc.lo), ("hi", mc.hi)):
                cur[k].append(float(v))
            cur["truth"].append(p.expected_sup())
            violations += int(bound < mc.lo)
        out.curves[name] = cur
        key = f"dudley.{name}"
        ratios = np.asarray(cur["bound"]) / np.asarray(cur["mc"])
        slope_b, slope_mc = _slope(cur["n"], cur["bound"]), _slope(cur["n"], cur["mc"])
        out.metrics.update(
            {
                f"{key}.n": cur["n"][-1],
                f"{key}.bound": cur["bound"][-1],
                f"{key}.mc_sup": cur["mc"][-1],
                f"{key}.lo": cur["lo"][-1],
                f"{key}.hi": cur["hi"][-1],
                f"{key}.truth": cur["truth"][-1],
                f"{key}.ratio": float(ratios[-1]),
                f"{key}.min_ratio": float(ratios.min()),
                f"{key}.first_ratio": float(ratios[0]),
                f"{key}.slope_bound": slope_b,
                f"{key}.slope_mc": slope_mc,
                f"{key}.slope_gap": abs(slope_b - slope_mc),
            }
        )
        log(
            f"dudley {name}: ratio {ratios[-1]:.1f} at n={cur['n'][-1]:g}, slope gap {abs(slope_b - slope_mc):.3f}"
        )
    out.metrics["checks.dudley_violations"] = float(violations)
    return out


# -- concentration ------------------------------------------------------------------------------


@dataclass
class ConcentrationResult:
    """Per function: the tail curve, the bound, excess and Monte Carlo error."""

    curves: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


def run_concentration(cfg: LeanSLTConfig) -> ConcentrationResult:
    """``gaussian_lipschitz_concentration`` for each function, by simulation."""
    rng = _rng(cfg, "concentration")
    out = ConcentrationResult()
    violations = 0
    for name in cfg.functions:
        f = LIPSCHITZ_FUNCTIONS[name]
        est = check_lipschitz(f.fn, f.lipschitz, cfg.concentration_dim, rng)
        tc = tail_check(f, cfg.concentration_dim, rng, cfg.concentration_draws)
        violations += int(tc.max_excess > tc.mc_error)
        key = f"concentration.{name}"
        out.metrics.update(
            {
                f"{key}.max_excess": tc.max_excess,
                f"{key}.mc_error": tc.mc_error,
                f"{key}.tightness": tc.variance_ratio,
                f"{key}.lipschitz_estimate": est,
            }
        )
        out.curves[name] = {
            "t": tc.t.tolist(),
            "tail": tc.tail.tolist(),
            "bound": tc.bound.tolist(),
        }
        log(
            f"concentration {name}: excess {tc.max_excess:.2e} (mc {tc.mc_error:.2e}), tightness {tc.variance_ratio:.3f}"
        )
    out.metrics["checks.concentration_violations"] = float(violations)
    return out


# -- least squares ------------------------------------------------------------------------------


@dataclass
class LeastSquaresResult:
    """Per setting: the grid, mean errors, the fitted and theoretical exponents."""

    curves: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


THEORY_EXPONENT = {"linear": -1.0, "linear_dim": 1.0, "l1": -0.5, "l0": -1.0}


def _gaussian_design(
    rng: np.random.Generator, n: int, d: int, normalise: bool = False
) -> np.ndarray:
    X = rng.standard_normal((n, d))
    if normalise:  # columnNormBound: ||X_j||_2 <= sqrt(n), here with equality
        X *= math.sqrt(n) / np.linalg.norm(X, axis=0)
    return X


def _linear_case(
    rng: np.random.Generator, n: int, d: int, sigma: float
) -> tuple[float, float, float]:
    """One OLS fit: (error, exact-critical-radius master radius, its probability)."""
    X = _gaussian_design(rng, n, d)
    theta = rng.standard_normal(d)
    y = X @ theta + sigma * rng.standard_normal(n)
    theta_hat, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)  # rank of the design, as computed
    err = empirical_error(X, theta_hat, theta)
    ds = linear_critical_radius(sigma, rank, n)
    radius, prob = master_error_bound(ds, ds, n, sigma)
    return err, radius, prob


def _l1_theta(rng: np.random.Generator, n: int, d: int, radius: float, sigma: float) -> np.ndarray:
    """A hard point of the l1 ball: ``s ~ R sqrt(n / log d) / sigma`` equal spikes on the sphere.

    The minimax lower bound for ``l1`` balls is attained near such points, where the sparse
    rate ``sigma^2 s log(d/s)/n`` equals the slow rate ``sigma R sqrt(log d / n)``.
    """
    s = int(min(d, max(1, math.ceil(radius * math.sqrt(n / math.log(d)) / sigma))))
    theta = np.zeros(d)
    idx = rng.choice(d, size=s, replace=False)
    theta[idx] = rng.choice([-1.0, 1.0], size=s) * radius / s
    return theta


def run_least_squares(cfg: LeanSLTConfig) -> LeastSquaresResult:
    """Rates of least squares against the theorems' exponents; the master bound's coverage."""
    rng = _rng(cfg, "least_squares")
    out = LeastSquaresResult()
    sig = cfg.sigma
    for setting in cfg.ls_settings:
        xs: list[float] = []
        errs: list[float] = []
        e: list[float] = []
        covered: list[bool] = []
        probs: list[float] = []
        radii: list[float] = []
        extra: dict[str, float] = {}
        if setting in ("linear", "linear_dim"):
            grid = cfg.linear_sizes if setting == "linear" else cfg.linear_dims
            formal_ratio = []
            for v in sorted(set(grid)):
                n, d = (v, cfg.linear_dim) if setting == "linear" else (cfg.linear_dim_n, v)
                cases = [_linear_case(rng, n, d, sig) for _ in range(cfg.ls_reps)]
                e_lin = np.asarray([c[0] for c in cases])
                xs.append(float(v))
                errs.append(float(e_lin.mean()))
                radii.append(cases[0][1])
                probs.append(cases[0][2])
                covered += [c[0] <= c[1] for c in cases]
                formal = formal_linear_rate_bound(sig, d, n)[0]
                formal_ratio.append(formal / float(e_lin.mean()))
            extra["formal_looseness"] = float(np.mean(formal_ratio))
        elif setting == "l1":
            d, R = cfg.l1_dim, cfg.l1_radius
            formal_radius = []
            for n in sorted(set(cfg.l1_sizes)):
                ds = critical_radius(
                    lambda de, n=n, d=d, R=R: l1_local_complexity_bound(de, R, d, n), sig
                )
                radius, prob = master_error_bound(ds, ds, n, sig)
                e = []
                for _ in range(cfg.l1_reps):
                    X = _gaussian_design(rng, n, d, normalise=True)
                    theta = _l1_theta(rng, n, d, R, sig)
                    y = X @ theta + sig * rng.standard_normal(n)
                    e.append(empirical_error(X, l1_constrained_ls(X, y, R, tol=1e-7), theta))
                xs.append(float(n))
                errs.append(float(np.mean(e)))
                radii.append(radius)
                probs.append(prob)
                covered += [err <= radius for err in e]
                formal_radius.append(radius)
            fit_formal = fit_exponent(np.asarray(xs), np.asarray(formal_radius))
            extra["formal_exponent"] = fit_formal.exponent
            extra["slow_rate_ratio"] = float(
                np.mean(
                    [
                        er / (sig * R * math.sqrt(math.log(d) / n))
                        for er, n in zip(errs, xs, strict=True)
                    ]
                )
            )
        elif setting == "l0":
            d, s = cfg.l0_dim, cfg.l0_sparsity
            ratio = []
            for n in sorted(set(cfg.l0_sizes)):
                e = []
                for _ in range(cfg.ls_reps):
                    X = _gaussian_design(rng, n, d)
                    theta = np.zeros(d)
                    theta[rng.choice(d, size=s, replace=False)] = rng.choice([-1.0, 1.0], size=s)
                    y = X @ theta + sig * rng.standard_normal(n)
                    e.append(empirical_error(X, best_subset_ls(X, y, s), theta))
                xs.append(float(n))
                errs.append(float(np.mean(e)))
                ratio.append(float(np.mean(e)) / (sig**2 * s * math.log(math.e * d / s) / n))
            extra["rate_constant"] = float(np.mean(ratio))
        fit = fit_exponent(np.asarray(xs), np.asarray(errs))
        key = f"ls_rate.{setting}"
        out.metrics.update(
            {
                f"{key}.exponent": fit.exponent,
                f"{key}.stderr": fit.stderr,
                f"{key}.theory_exponent": THEORY_EXPONENT[setting],
                **{f"{key}.{k}": v for k, v in extra.items()},
            }
        )
        if covered:
            out.metrics[f"{key}.master_coverage"] = float(np.mean(covered))
            out.metrics[f"{key}.master_probability"] = float(min(probs))
            out.metrics[f"{key}.master_looseness"] = float(
                np.mean(np.asarray(radii) / np.asarray(errs))
            )
        out.curves[setting] = {"x": xs, "err": errs, "intercept": [fit.intercept]}
        log(
            f"least squares {setting}: exponent {fit.exponent:.3f} ± {fit.stderr:.3f} (theory {THEORY_EXPONENT[setting]:g})"
        )
    viol = sum(
        int(out.metrics[k] < out.metrics[k.replace("coverage", "probability")] - 0.05)
        for k in out.metrics
        if k.endswith("master_coverage")
    )
    out.metrics["checks.master_violations"] = float(viol)
    return out


# -- Maurey -------------------------------------------------------------------------------------


@dataclass
class MaureyResult:
    """Per dimension: Maurey's log bound, the certified packing lower bound, greedy counts."""

    curves: dict[str, list[float]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


def run_maurey(cfg: LeanSLTConfig) -> MaureyResult:
    """``coveringNumber_l1Ball_le`` squeezed between a certified packing and greedy covers."""
    rng = _rng(cfg, "maurey")
    R, eps = cfg.maurey_radius, cfg.maurey_eps
    out = MaureyResult(
        curves={k: [] for k in ("d", "log_bound", "log_packing", "log_greedy", "log_volume_l2")}
    )
    violations = 0
    high: list[float] = []
    for d in sorted(set(cfg.maurey_dims)):
        log_bound = float(maurey_log_covering_bound(R, eps, d))
        m = cfg.maurey_samples
        pts = [sample_l1_ball(rng, m // 2, d, R)]
        for k in (1, 2, 3):
            if k <= d:
                pts.append(sample_sparse_sign_vectors(rng, max(1, m // 6), d, k, R))
        sample = np.concatenate(pts)
        log_greedy = math.log(len(greedy_net(sample, eps)))
        log_sample_packing = math.log(len(greedy_net(sample, 2 * eps * (1 + 1e-9))))
        gv = l1_ball_log_packing_gv(R, eps, d)
        vol = float(l1_ball_log_volume_lower(R, eps, d))
        log_packing = max(gv, vol, log_sample_packing)
        violations += int(log_packing > log_bound + 1e-9)
        key = f"maurey.d{d}"
        squeeze = log_bound / log_packing if log_packing > 0 else float("inf")
        out.metrics.update(
            {
                f"{key}.log_bound": log_bound,
                f"{key}.log_greedy": log_greedy,
                f"{key}.log_packing": log_packing,
                f"{key}.log_packing_gv": gv,
                f"{key}.log_packing_sample": log_sample_packing,
                f"{key}.log_packing_volume": vol,
                f"{key}.squeeze": squeeze,
            }
        )
        if d >= 100:
            high.append(squeeze)
        row: tuple[tuple[str, float], ...] = (
            ("d", d),
            ("log_bound", log_bound),
            ("log_packing", log_packing),
            ("log_greedy", log_greedy),
            ("log_volume_l2", float(euclidean_ball_log_covering_bound(R, eps, d))),
        )
        for name, value in row:
            out.curves[name].append(float(value))
        log(
            f"maurey d={d}: log bound {log_bound:.1f}, packing {log_packing:.2f}, greedy {log_greedy:.2f}"
        )
    out.metrics["maurey.squeeze_high_dim"] = max(high) if high else float("nan")
    out.metrics["checks.maurey_violations"] = float(violations)
    return out


# -- the job ------------------------------------------------------------------------------------

_STAGES: dict[str, Callable[[LeanSLTConfig], Any]] = {
    "dudley": run_dudley,
    "concentration": run_concentration,
    "least_squares": run_least_squares,
    "maurey": run_maurey,
}


def run(cfg: LeanSLTConfig, run_dir: RunDir) -> dict[str, Any]:
    """Run the parts of ``cfg`` (resuming finished ones from the checkpoint), plot, return metrics."""
    from icml26.lean_slt.plots import plot_all

    latest = run_dir.checkpoints.latest()
    done: dict[str, dict[str, Any]] = latest[1] if latest else {}
    for i, part in enumerate(cfg.parts):
        if part in done:
            log(f"{part}: resumed from checkpoint")
            continue
        start, cpu = time.perf_counter(), time.process_time()
        result = _STAGES[part](cfg)
        done[part] = asdict(result)
        done[part]["metrics"][f"seconds.{part}"] = time.perf_counter() - start
        done[part]["metrics"][f"cpu_seconds.{part}"] = time.process_time() - cpu
        run_dir.log_metrics(step=i, part=part, **done[part]["metrics"])
        run_dir.checkpoints.save(i, done)
    plot_all({p: done[p]["curves"] for p in cfg.parts}, run_dir)
    run_dir.write_json("theorem_map.json", {"rows": [asdict(r) for r in THEOREM_MAP]})
    metrics: dict[str, Any] = {}
    for part in cfg.parts:
        metrics.update(done[part]["metrics"])
    metrics["checks.failed"] = float(
        sum(v for k, v in metrics.items() if k.startswith("checks.") and k.endswith("violations"))
    )
    return metrics


# -- bench --------------------------------------------------------------------------------------


def _best_time(fn: Any, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _python_greedy(points: np.ndarray, eps: float) -> int:
    """Reference greedy net: a plain Python double loop (the baseline)."""
    centres: list[np.ndarray] = []
    e2 = eps * eps
    for p in points:
        if not any(float(((p - c) ** 2).sum()) <= e2 for c in centres):
            centres.append(p)
    return len(centres)


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Time the entropy integral (vs ``scipy.integrate.quad``) and greedy nets (vs Python)."""
    from scipy import integrate

    from icml26.lean_slt.processes import L1BallProcess

    p = L1BallProcess(cfg.dudley_size)
    ours = p.dudley_bound()
    t_ours = _best_time(p.dudley_bound, cfg.rounds)

    def quad_bound() -> float:
        def f(e: float) -> float:
            return math.sqrt(max(0.0, float(p.log_covering(np.asarray([e]))[0])))

        edges = [p.diameter * 2.0**-k for k in range(40, -1, -1)]
        tot = 0.0
        for a, b in zip([0.0, *edges[:-1]], edges, strict=True):
            tot += integrate.quad(f, a, b, limit=500, epsrel=1e-6)[0]
        return 12 * math.sqrt(2) * tot

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = quad_bound()
        t_quad = _best_time(quad_bound, 1)
    rng = np.random.default_rng(cfg.seed)
    pts = sample_l1_ball(rng, cfg.greedy_points, cfg.greedy_dim)
    pts = np.concatenate(
        [pts, sample_sparse_sign_vectors(rng, cfg.greedy_points, cfg.greedy_dim, 1)]
    )
    eps = 0.25
    n_ours = len(greedy_net(pts, eps))
    t_greedy = _best_time(lambda: greedy_net(pts, eps), cfg.rounds)
    n_ref = _python_greedy(pts, eps)
    t_greedy_ref = _best_time(lambda: _python_greedy(pts, eps), 1)
    return {
        "bench.entropy_integral_ms": 1e3 * t_ours,
        "bench.quad_ms": 1e3 * t_quad,
        "bench.integral_speedup": t_quad / t_ours,
        "bench.integral_rel_diff": abs(ours - ref) / ref,
        "bench.greedy_ms": 1e3 * t_greedy,
        "bench.greedy_python_ms": 1e3 * t_greedy_ref,
        "bench.greedy_speedup": t_greedy_ref / t_greedy,
        "bench.greedy_same_net": float(n_ours == n_ref),
    }
