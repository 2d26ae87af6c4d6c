"""The benchmark, ``icml26 bench lean-slt``: the numerical kernels against plain baselines."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import integrate

from icml26.lean_slt.config import BenchConfig
from icml26.lean_slt.covering import greedy_net, sample_l1_ball, sample_sparse_sign_vectors
from icml26.lean_slt.entropy import DUDLEY_CONSTANT
from icml26.lean_slt.processes import L1BallProcess
from icml26.shared import RunDir, rng_for
from icml26.shared.stats import best_of

__all__ = ["bench", "python_greedy_net_size", "quad_dudley_bound"]


def python_greedy_net_size(points: np.ndarray, eps: float) -> int:
    """Size of the greedy ``eps``-net of ``points`` by a per-point scan (the baseline).

    Each point is compared with all current centres at once (NumPy over the centres, a Python
    loop over the points): the obvious implementation, not a strawman double loop.

    Args:
        points: ``(m, d)`` points, scanned in order.
        eps: the net's radius.

    Returns:
        The number of centres.
    """
    pts = np.asarray(points, dtype=float)
    centres = np.empty((len(pts), pts.shape[1]))
    count, e2 = 0, eps * eps
    for p in pts:
        if count == 0 or float(np.min(((centres[:count] - p) ** 2).sum(axis=1))) > e2:
            centres[count] = p
            count += 1
    return count


def quad_dudley_bound(process: L1BallProcess) -> float:
    """Dudley's bound of ``process`` by adaptive ``scipy.integrate.quad`` on dyadic pieces,
    split further at the covering bound's jumps (``process.breakpoints()``: Maurey's exponent
    ``ceil(R^2 / eps^2)`` steps at ``eps = R / sqrt(k)``), so ``quad`` integrates smooth pieces.

    Args:
        process: the ``l1``-ball process.

    Returns:
        ``12 sqrt(2) ∫_0^D sqrt(log N(eps)) deps``.
    """

    def f(e: float) -> float:
        return math.sqrt(max(0.0, float(process.log_covering(np.asarray([e]))[0])))

    dyadic = process.diameter * 2.0 ** -np.arange(40, -1, -1)
    jumps = np.asarray(process.breakpoints(), dtype=float)
    edges = np.unique(np.concatenate([dyadic, jumps[(jumps > 0) & (jumps < process.diameter)]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        total = sum(
            integrate.quad(f, a, b, limit=500, epsrel=1e-6)[0]
            for a, b in zip([0.0, *edges[:-1]], edges, strict=True)
            if b > a
        )
    return DUDLEY_CONSTANT * total


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Time the entropy integral (vs ``quad``) and the greedy net (vs a Python scan).

    Args:
        config: the benchmark's configuration.
        run_dir: the run folder (unused: the bench writes only its metrics).

    Returns:
        ``bench.*`` metrics: best-of times in ms, speed-ups, agreement.
    """
    p = L1BallProcess(config.dudley_size)
    ours, ref = p.dudley_bound(), quad_dudley_bound(p)
    t_ours = best_of(p.dudley_bound, repeats=config.rounds).best
    t_quad = best_of(lambda: quad_dudley_bound(p), repeats=1, warmup=0).best
    rng = rng_for(config.seed, "greedy")
    pts = np.concatenate(
        [
            sample_l1_ball(rng, config.greedy_points, config.greedy_dim),
            sample_sparse_sign_vectors(rng, config.greedy_points, config.greedy_dim, 1),
        ]
    )
    eps = 0.25
    n_ours, n_ref = len(greedy_net(pts, eps)), python_greedy_net_size(pts, eps)
    t_greedy = best_of(lambda: greedy_net(pts, eps), repeats=config.rounds).best
    t_ref = best_of(lambda: python_greedy_net_size(pts, eps), repeats=1, warmup=0).best
    return {
        "bench.entropy_integral_ms": 1e3 * t_ours,
        "bench.quad_ms": 1e3 * t_quad,
        "bench.integral_speedup": t_quad / t_ours,
        "bench.integral_rel_diff": abs(ours - ref) / ref,
        "bench.greedy_ms": 1e3 * t_greedy,
        "bench.greedy_python_ms": 1e3 * t_ref,
        "bench.greedy_speedup": t_ref / t_greedy,
        "bench.greedy_same_net": float(n_ours == n_ref),
    }
