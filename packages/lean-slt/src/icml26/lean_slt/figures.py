"""Figures of the main job: bound vs Monte Carlo, tails, rates, Maurey's squeeze."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.lean_slt.studies import THEORY_EXPONENT
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["plot_all"]


def _plain_ticks(ax: Any) -> None:
    """Plain-text tick labels on log axes (no mathtext: several times faster to lay out)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
        if scale == "log":
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())


def _dudley(curves: dict[str, dict[str, list[float]]], run_dir: RunDir) -> None:
    names = list(curves)
    with figure(
        run_dir.plot_path("dudley_bound_vs_mc"),
        1,
        len(names),
        squeeze=False,
        title="Dudley's bound (12 sqrt2 * entropy integral) vs Monte Carlo E sup",
    ) as (_, axes):
        for ax, name in zip(axes[0], names, strict=True):
            c = curves[name]
            n = np.asarray(c["n"])
            ax.loglog(n, c["bound"], "o-", color=PALETTE[1], label="formal bound")
            ax.loglog(n, c["mc"], "s-", color=PALETTE[0], label="Monte Carlo E sup")
            ax.fill_between(n, c["lo"], c["hi"], color=PALETTE[0], alpha=0.3)
            ax.loglog(n, c["truth"], ":", color="k", label="exact E sup")
            ax.set_title(name)
            ax.set_xlabel("n (index set size / dimension)")
            _plain_ticks(ax)
        axes[0][0].set_ylabel("E sup X_t")
        axes[0][0].legend()


def _concentration(curves: dict[str, dict[str, list[float]]], run_dir: RunDir) -> None:
    names = list(curves)
    with figure(
        run_dir.plot_path("concentration_tails"),
        1,
        len(names),
        squeeze=False,
        title="P(|f - Ef| >= t) vs the bound 2 exp(-t^2 / 2L^2)",
    ) as (_, axes):
        for ax, name in zip(axes[0], names, strict=True):
            c = curves[name]
            t, tail = np.asarray(c["t"]), np.asarray(c["tail"])
            keep = tail > 0
            ax.semilogy(t[keep], tail[keep], color=PALETTE[0], label="empirical tail")
            ax.semilogy(t, c["bound"], "--", color=PALETTE[1], label="theorem bound")
            ax.set_ylim(1e-6, 2)
            ax.set_title(name)
            ax.set_xlabel("t")
            _plain_ticks(ax)
        axes[0][0].legend()


def _rates(curves: dict[str, dict[str, list[float]]], run_dir: RunDir) -> None:
    names = list(curves)
    with figure(
        run_dir.plot_path("ls_rates"),
        1,
        len(names),
        squeeze=False,
        title="least-squares error ||f_hat - f*||_n^2 (log-log)",
    ) as (_, axes):
        for ax, name in zip(axes[0], names, strict=True):
            c = curves[name]
            x, err = np.asarray(c["x"]), np.asarray(c["err"])
            ax.loglog(x, err, "o", color=PALETTE[0], label="simulated (mean)")
            slope, intercept = np.polyfit(np.log(x), np.log(err), 1)
            ax.loglog(
                x, np.exp(intercept) * x**slope, "-", color=PALETTE[0], label=f"fit {slope:.2f}"
            )
            th = THEORY_EXPONENT[name]
            ax.loglog(x, err[0] * (x / x[0]) ** th, "--", color=PALETTE[1], label=f"theory {th:g}")
            ax.set_title(name)
            ax.set_xlabel(
                {"linear_dim": "d"}.get(name, "log d" if name.startswith("l1_dim") else "n")
            )
            ax.legend()
            _plain_ticks(ax)


def _maurey(curves: dict[str, list[float]], run_dir: RunDir) -> None:
    with figure(
        run_dir.plot_path("maurey"), title="log N(eps, l1 ball in R^d): bounds from both sides"
    ) as (_, ax):
        d = np.asarray(curves["d"])
        ax.semilogx(
            d, curves["log_bound"], "o-", color=PALETTE[1], label="Maurey (2d+1)^ceil(R^2/eps^2)"
        )
        ax.semilogx(d, curves["log_volume_l2"], ":", color=PALETTE[3], label="l2-ball volume bound")
        ax.semilogx(
            d, curves["log_packing"], "s-", color=PALETTE[2], label="certified packing (lower)"
        )
        ax.semilogx(d, curves["log_greedy"], "^-", color=PALETTE[0], label="greedy net of samples")
        ax.set_yscale("log")
        ax.set_xlabel("d")
        ax.set_ylabel("log N")
        ax.legend()
        _plain_ticks(ax)


def plot_all(curves: dict[str, Any], run_dir: RunDir) -> None:
    """One figure per study that ran, in ``run_dir/plots``.

    Args:
        curves: each study's ``curves``, by part name.
        run_dir: the run folder.
    """
    if "dudley" in curves:
        _dudley(curves["dudley"], run_dir)
    if "concentration" in curves:
        _concentration(curves["concentration"], run_dir)
    if "least_squares" in curves:
        _rates(curves["least_squares"], run_dir)
    if "maurey" in curves:
        _maurey(curves["maurey"], run_dir)
