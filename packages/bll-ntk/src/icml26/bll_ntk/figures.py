"""Figures: 1-D regression bands, reliability diagrams, regret curves, subsampling error."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from icml26.bll_ntk.metrics import reliability_curve
from icml26.shared import PALETTE, figure

__all__ = ["plot_regret", "plot_reliability", "plot_subsample", "plot_toy"]


def plot_regret(curves: dict[str, np.ndarray], path: Path, steps: int | None = None) -> None:
    """Mean cumulative regret per policy.

    Args:
        curves: policy -> mean regret curve (every pull, or thinned evenly).
        path: the PNG to write.
        steps: the pulls the curves span (default: one point per pull).
    """
    with figure(path, width=5.5, height=3.6, title="Wheel bandit: Thompson sampling") as (_fig, ax):
        for i, (m, c) in enumerate(curves.items()):
            n = steps or len(c)
            ax.plot(
                np.linspace(n / len(c), n, len(c)),
                c,
                label=m,
                color=PALETTE[i % len(PALETTE)],
                lw=2.2 if m == "ntk_bll" else 1.4,
            )
        ax.set_xlabel("pull")
        ax.set_ylabel("cumulative expected regret")
        ax.legend(ncol=2)


def plot_reliability(data: dict[str, dict[str, Any]], path: Path) -> None:
    """Reliability diagrams, one row per data set, one column per method.

    Args:
        data: data set -> method -> ``(probs (N, C), labels (N,))``.
        path: the PNG to write.
    """
    methods = list(next(iter(data.values())))
    with figure(
        path,
        nrows=len(data),
        ncols=len(methods),
        width=1.9 * len(methods),
        height=2.0 * len(data) + 0.4,
    ) as (_fig, axes):
        for i, (name, per) in enumerate(data.items()):
            for j, m in enumerate(methods):
                ax = np.asarray(axes).reshape(len(data), len(methods))[i][j]
                if m not in per:
                    ax.set_axis_off()
                    continue
                probs, labels = per[m]
                _c, a, _n = reliability_curve(probs, labels, 10)
                edges = np.linspace(0, 1, 11)
                ax.bar(
                    edges[:-1],
                    a,
                    width=0.1,
                    align="edge",
                    color=PALETTE[0],
                    alpha=0.7,
                    edgecolor="white",
                )
                ax.plot([0, 1], [0, 1], "k--", lw=0.8)
                ax.set_title(f"{name}: {m}", fontsize=7)
                ax.set_xlim(0, 1)
                ax.set_ylim(0, 1)
                if i == len(data) - 1:
                    ax.set_xlabel("confidence")
                if j == 0:
                    ax.set_ylabel("accuracy")


def plot_subsample(
    both: dict[str, dict[str, float]], proj: dict[str, dict[str, float]], path: Path
) -> None:
    """Relative variance error of subsampled NTK-BLL against the subsample size.

    Args:
        both: data set -> ``"s<m>"`` -> error with projection and posterior subsampled.
        proj: data set -> ``"s<m>"`` -> error with the projection subsampled only.
        path: the PNG to write.
    """
    with figure(path, width=5.0, height=3.4, title="Subsampled NTK-BLL vs exact") as (_fig, ax):
        for i, name in enumerate(both):
            ks = sorted((k for k in both[name] if k != "s0"), key=lambda s: int(s[1:]))
            xs = [int(k[1:]) for k in ks]
            ax.plot(
                xs,
                [both[name][k] for k in ks],
                "o-",
                color=PALETTE[i],
                label=f"{name}: proj + posterior",
            )
            if name in proj:
                ax.plot(
                    xs,
                    [proj[name][k] for k in ks],
                    "s--",
                    color=PALETTE[i],
                    label=f"{name}: proj only",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("subsample size m")
        ax.set_ylabel("mean relative error of variance")
        ax.legend(fontsize=6)


def plot_toy(
    x: np.ndarray,
    y: np.ndarray,
    grid: np.ndarray,
    bands: dict[str, tuple[np.ndarray, np.ndarray]],
    path: Path,
) -> None:
    """Bands (±2 std of the predictive) of each method on a 1-D regression with a gap.

    Args:
        x, y: the training points.
        grid: the inputs of the bands.
        bands: method -> (mean, std) on the grid.
        path: the PNG to write.
    """
    names = list(bands)
    ncols = 3
    nrows = math.ceil(len(names) / ncols)
    with figure(path, nrows=nrows, ncols=ncols, width=10, height=2.6 * nrows) as (
        _fig,
        axes,
    ):
        for i, m in enumerate(names):
            ax = np.asarray(axes).reshape(nrows, ncols)[i // ncols][i % ncols]
            mu, sd = bands[m]
            color = PALETTE[i % len(PALETTE)]
            ax.fill_between(grid, mu - 2 * sd, mu + 2 * sd, color=color, alpha=0.3)
            ax.plot(grid, mu, color=color)
            ax.scatter(x, y, s=4, color="k")
            ax.set_title(m)
            ax.set_ylim(-4, 4)
        for j in range(len(names), nrows * ncols):
            np.asarray(axes).reshape(nrows, ncols)[j // ncols][j % ncols].set_axis_off()
