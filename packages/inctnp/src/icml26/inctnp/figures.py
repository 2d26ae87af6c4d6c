"""Figures of a run and of the bench (from finished records; nothing here trains)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.inctnp.data import TaskBatch
from icml26.inctnp.model import NeuralProcess
from icml26.shared import PALETTE, figure

__all__ = [
    "plot_bench",
    "plot_latency",
    "plot_nll_vs_context",
    "plot_streaming",
    "plot_training",
]

COLORS = {"tnp": PALETTE[1], "inctnp": PALETTE[0], "gp_oracle": PALETTE[7], "gp_prior": PALETTE[3]}


def plot_latency(
    sizes: Sequence[int], latency: Mapping[str, Mapping[str, Mapping[str, float]]], path: Path
) -> None:
    """Median update latency against N (log-log) with the quartiles as bars.

    Args:
        sizes: context sizes.
        latency: ``{model: {"n<N>": {"median", "q25", "q75"}}}``.
        path: the PNG.
    """
    with figure(path, title="Add one point to N, predict one target") as (_fig, ax):
        for name, per in latency.items():
            med = np.array([per[f"n{n}"]["median"] for n in sizes])
            lo = med - np.array([per[f"n{n}"]["q25"] for n in sizes])
            hi = np.array([per[f"n{n}"]["q75"] for n in sizes]) - med
            ax.errorbar(sizes, med, yerr=[lo, hi], fmt="o-", color=COLORS[name], label=name)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("context size N")
        ax.set_ylabel("milliseconds (median, quartiles)")
        ax.legend()


def plot_nll_vs_context(
    metrics: Mapping[str, float], tasks: Sequence[str], ctx_sizes: Sequence[int], path: Path
) -> None:
    """Test NLL per target point against the context size, converged models (mean over seeds).

    Args:
        metrics: the run's metrics (``nll_at.<task>.c<n>.converged.<model>``).
        tasks: evaluation tasks.
        ctx_sizes: context sizes.
        path: the PNG.
    """
    with figure(path, 1, len(tasks), title="Test NLL per target point") as (_fig, axes):
        for ax, task in zip(np.atleast_1d(axes), tasks, strict=True):
            for name, color in COLORS.items():
                ys = [metrics.get(f"nll_at.{task}.c{c}.converged.{name}") for c in ctx_sizes]
                if None not in ys:
                    ax.plot(ctx_sizes, ys, "o-", color=color, label=name)
            ax.set_title(task)
            ax.set_xlabel("context points")
        np.atleast_1d(axes)[0].set_ylabel("NLL")
        np.atleast_1d(axes)[0].legend(fontsize=7)


def plot_training(infos: Mapping[str, Sequence[Mapping[str, Any]]], path: Path) -> None:
    """Validation NLL against targets seen, every seed, both models (one panel per group).

    Args:
        infos: group -> per-seed ``{model: info}`` (``info["curve"]``).
        path: the PNG.
    """
    groups = list(infos)
    with figure(path, 1, len(groups), title="Validation NLL against targets seen") as (_f, axes):
        for ax, group in zip(np.atleast_1d(axes), groups, strict=True):
            for k, seed in enumerate(infos[group]):
                for name, info in seed.items():
                    curve = info["curve"]
                    if curve:
                        ax.plot(
                            [c["targets"] for c in curve],
                            [c["val_nll"] for c in curve],
                            color=COLORS[name],
                            alpha=0.8,
                            label=name if k == 0 else None,
                        )
            ax.set_xscale("log")
            ax.set_title(group)
            ax.set_xlabel("targets seen")
        np.atleast_1d(axes)[0].set_ylabel("validation NLL")
        np.atleast_1d(axes)[0].legend()


def plot_streaming(examples: Mapping[str, tuple[TaskBatch, NeuralProcess]], path: Path) -> None:
    """incTNP's predictions after a few and after half the points of one task (cached updates).

    Args:
        examples: task -> (a test batch, the trained incTNP); 1-D tasks only.
        path: the PNG.
    """
    tasks = list(examples)
    title = "incTNP streaming: predictions after k points (cached updates)"
    with figure(path, 1, len(tasks), title=title) as (_fig, axes):
        for ax, task in zip(np.atleast_1d(axes), tasks, strict=True):
            tb, model = examples[task]
            x, y = tb.x[:1], tb.y[:1]
            order = torch.argsort(x[0, :, 0])
            grid = torch.linspace(float(x.min()), float(x.max()), 200).view(1, -1, 1)
            stream = model.stream()
            k_small = min(8, x.shape[1] - 1)
            stream.condition(x[:, :k_small], y[:, :k_small])
            for k, color in ((k_small, PALETTE[4]), (x.shape[1] // 2, PALETTE[0])):
                if k > stream.size:
                    stream.update(x[:, stream.size : k], y[:, stream.size : k])
                mean, std = stream.predict(grid)
                m, s = mean[0, :, 0].numpy(), std[0, :, 0].numpy()
                ax.plot(grid[0, :, 0], m, color=color, label=f"after {k} points")
                ax.fill_between(grid[0, :, 0].numpy(), m - 2 * s, m + 2 * s, color=color, alpha=0.2)
            ax.plot(x[0, order, 0], y[0, order, 0], "k.", ms=3, label="all points")
            ax.set_title(task)
        np.atleast_1d(axes)[0].legend()


def plot_bench(
    sizes: Sequence[int],
    latency: Mapping[str, Sequence[float]],
    peaks: Mapping[str, Sequence[int]],
    cache_bytes: Sequence[int],
    path: Path,
) -> None:
    """Bench latency (left) and memory (right) against N.

    Args:
        sizes: context sizes.
        latency: model -> median ms per size.
        peaks: model -> the update's peak bytes per size.
        cache_bytes: incTNP's allocated cache bytes per size.
        path: the PNG.
    """
    with figure(path, 1, 2) as (_fig, (ax1, ax2)):
        for name in ("tnp", "inctnp"):
            ax1.loglog(sizes, latency[name], "o-", color=COLORS[name], label=name)
            mib = np.asarray(peaks[name]) / 2**20
            ax2.loglog(sizes, mib, "o-", color=COLORS[name], label=f"{name}: update peak")
        ax1.set_xlabel("context size N")
        ax1.set_ylabel("ms per update + prediction (median)")
        ax1.legend()
        mib = np.asarray(cache_bytes) / 2**20
        ax2.loglog(sizes, mib, "s--", color=PALETTE[0], label="incTNP cache (allocated)")
        ax2.set_xlabel("context size N")
        ax2.set_ylabel("MiB")
        ax2.legend(fontsize=7)
