"""The benchmark, ``icml26 bench transport-kl``: batched divergences against per-pair loops."""

from __future__ import annotations

import time
from typing import Any

import jax
import numpy as np

from icml26.shared import RunDir, rng_for
from icml26.shared.stats import best_of
from icml26.transport_kl import gaussian, reference
from icml26.transport_kl.config import BenchConfig
from icml26.transport_kl.linalg import random_spd

__all__ = ["bench"]


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Throughput of batched WKL / W2 (jit + vmap) vs per-pair NumPy/SciPy loops.

    Args:
        config: the benchmark's configuration.
        run_dir: the run folder.

    Returns:
        Speed-ups per batch size, the seconds of each side, and the largest relative difference.
    """
    rng = rng_for(config.seed, "pairs")
    d, metrics, max_rel = config.dim, {}, 0.0
    for n in config.batches:
        m1, m2 = rng.normal(size=(n, d)), rng.normal(size=(n, d))
        s1 = np.stack([random_spd(rng, d) for _ in range(n)])
        s2 = np.stack([random_spd(rng, d) for _ in range(n)])
        for name, fast, slow in (
            ("divergence_speedup", gaussian.wkl, reference.wkl_np),
            ("w2_speedup", gaussian.w2, reference.w2_np),
        ):
            args = (m1, s1, m2, s2)
            timing = best_of(
                lambda fast=fast, args=args: jax.block_until_ready(fast(*args, validate=False)),
                repeats=config.repeats,
            )
            vals = np.asarray(fast(m1, s1, m2, s2, validate=False))
            t0 = time.perf_counter()
            ref = np.array([slow(m1[i], s1[i], m2[i], s2[i]) for i in range(n)])
            t_slow = time.perf_counter() - t0
            max_rel = max(max_rel, float(np.max(np.abs(vals - ref) / np.abs(ref))))
            metrics[f"{name}.batch{n}"] = t_slow / timing.best
            metrics[f"seconds.{name}.jax.batch{n}"] = timing.best
            metrics[f"seconds.{name}.numpy.batch{n}"] = t_slow
    metrics["bench.max_rel_diff"] = max_rel
    run_dir.update_env(device=str(jax.devices()[0]))
    return metrics
