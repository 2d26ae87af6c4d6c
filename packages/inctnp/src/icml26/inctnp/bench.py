"""``icml26 bench inctnp``: update latency and memory against N on the paper's model size.

Per N: the median and quartiles of ``repeats`` timed updates in this one process (one point
added to a context of N, one target predicted), the allocator's peak during one update, and
incTNP's cache bytes (allocated: its capacity, which doubles; used: the N tokens; peak: old
and doubled buffers together). The weights are untrained: they do not change the cost.
"""

from __future__ import annotations

from typing import Any

import torch

from icml26.inctnp.config import BenchConfig
from icml26.inctnp.evaluation import scaling_exponent, update_latency, update_memory
from icml26.inctnp.figures import plot_bench
from icml26.inctnp.model import ModelConfig, build_model
from icml26.inctnp.protocol import MODELS
from icml26.inctnp.summary import latency_metrics
from icml26.shared import RunDir, log, seed_for

__all__ = ["bench"]


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Time and measure one streaming update per model and N.

    Args:
        cfg: the bench config.
        run_dir: the run folder.

    Returns:
        The latency keys of :func:`icml26.inctnp.summary.latency_metrics`, plus
        ``update_peak_mb.<model>.n<N>``, ``cache_mb.n<N>`` / ``cache_used_mb.n<N>`` /
        ``cache_peak_mb.n<N>`` and the slopes ``update_peak_scaling_exponent.<model>`` (± SE)
        and ``cache_scaling_exponent``.
    """
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    models = {}
    for name in MODELS:
        torch.manual_seed(seed_for(cfg.seed, "bench-model"))
        config = ModelConfig(
            width=cfg.width, layers=cfg.layers, heads=cfg.heads, causal=name == "inctnp"
        )
        models[name] = build_model(config)
    latency: dict[str, dict[str, dict[str, float]]] = {m: {} for m in MODELS}
    peaks: dict[str, list[int]] = {m: [] for m in MODELS}
    cache: list[int] = []
    metrics: dict[str, Any] = {}
    for n in cfg.sizes:
        for name in MODELS:
            lat = update_latency(models[name], n, cfg.repeats, device=cfg.device, seed=cfg.seed)
            latency[name][f"n{n}"] = {"median": lat.median, "q25": lat.q25, "q75": lat.q75}
            mem = update_memory(models[name], n, device=cfg.device, seed=cfg.seed)
            metrics[f"update_peak_mb.{name}.n{n}"] = mem.peak / 2**20
            peaks[name].append(max(mem.peak, 1))
            if name == "inctnp":
                metrics[f"cache_mb.n{n}"] = lat.cache_allocated / 2**20
                metrics[f"cache_used_mb.n{n}"] = mem.cache_used / 2**20
                metrics[f"cache_peak_mb.n{n}"] = mem.cache_peak / 2**20
                cache.append(lat.cache_allocated)
        log(
            f"N={n}: tnp {latency['tnp'][f'n{n}']['median']:.2f} ms, "
            f"inctnp {latency['inctnp'][f'n{n}']['median']:.2f} ms"
        )
    metrics |= latency_metrics(latency)
    for name in MODELS:
        slope = scaling_exponent(cfg.sizes, peaks[name])
        metrics[f"update_peak_scaling_exponent.{name}"] = slope.slope
        metrics[f"update_peak_scaling_exponent_se.{name}"] = slope.se
    metrics["cache_scaling_exponent"] = scaling_exponent(cfg.sizes, cache).slope
    if cfg.device.startswith("cuda"):
        metrics["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
    medians = {m: [latency[m][f"n{n}"]["median"] for n in cfg.sizes] for m in MODELS}
    plot_bench(cfg.sizes, medians, peaks, cache, run_dir.plot_path("bench_latency"))
    return metrics
