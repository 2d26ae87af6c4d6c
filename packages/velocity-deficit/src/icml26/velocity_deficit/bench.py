"""``icml26 bench velocity-deficit``: sampling throughput per sampler and NFE, SSC's overhead."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from icml26.shared import RunDir, figure
from icml26.velocity_deficit.config import BenchConfig
from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.samplers import VelocityFn, integrate, steps_for_nfe
from icml26.velocity_deficit.ssc import ScaleSchedule, corrected

__all__ = ["bench"]


def _timer(config: BenchConfig, x0: torch.Tensor) -> Any:
    def timed(vfn: VelocityFn, steps: int, method: str) -> float:
        times = []
        for _ in range(config.repeats):
            if config.device.startswith("cuda"):
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            integrate(vfn, x0, steps=steps, method=method)  # type: ignore[arg-type]
            if config.device.startswith("cuda"):
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    return timed


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Samples per second for each sampler and NFE, and SSC's overhead over plain Euler.

    Args:
        config: the :class:`BenchConfig`.
        run_dir: the run folder (the throughput plot goes to ``plots/``).

    Returns:
        ``throughput.<sampler>.nfe<k>``, ``throughput.euler_ssc.nfe<k>`` and
        ``ssc_overhead_ratio`` (median SSC time over median plain time, interleaved).

    Raises:
        RuntimeError: CUDA requested but not available.
    """
    device = config.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available")
    model = VelocityMLP(config.dim, config.width, config.depth).to(device).eval()
    x0 = torch.randn(config.batch, config.dim, device=device)
    timed = _timer(config, x0)
    metrics: dict[str, Any] = {}
    integrate(model, x0, steps=2)  # warm-up
    for sampler in config.samplers:
        for k in config.nfe:
            sec = timed(model, steps_for_nfe(k, sampler), sampler)
            metrics[f"throughput.{sampler}.nfe{k}"] = config.batch / sec
    k = max(config.nfe)
    ssc_fn = corrected(model, ScaleSchedule("power", alpha=0.1, beta=1.0))
    plain, ssc = [], []
    for _ in range(3):  # interleave to share any load drift
        plain.append(timed(model, k, "euler"))
        ssc.append(timed(ssc_fn, k, "euler"))
    metrics["ssc_overhead_ratio"] = float(np.median(ssc) / np.median(plain))
    metrics[f"throughput.euler_ssc.nfe{k}"] = config.batch / float(np.median(ssc))
    with figure(run_dir.plot_path("throughput")) as (_fig, ax):
        for sampler in config.samplers:
            ax.plot(
                config.nfe,
                [metrics[f"throughput.{sampler}.nfe{k}"] for k in config.nfe],
                "o-",
                label=sampler,
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="NFE",
            ylabel="samples / s",
            title=f"sampling throughput (d={config.dim}, batch {config.batch}, {device})",
        )
        ax.legend()
    return metrics
