"""Figures of the main job: divergences as covariances degenerate, and the control fronts."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.shared import RunDir, figure

__all__ = ["plot_all"]

_LABELS = {"kl": "KL", "wkl": "WKL", "kwkl": "KWKL", "w2": "Bures-W2", "lqr": "LQR (R = beta I)"}


def _degeneration(curves: dict[str, Any], run_dir: RunDir) -> None:
    with figure(run_dir.plot_path("divergence_vs_eps")) as (_, ax):
        for i, div in enumerate(("kl", "wkl", "kwkl", "w2")):
            ax.loglog(curves["eps"], curves[div], "o-", color=f"C{i}", label=_LABELS[div])
            ax.loglog(curves["eps"], curves[f"t_{div}"], "x--", color=f"C{i}", alpha=0.7)
        ax.set_xlabel("eps  (both covariances eps * I)")
        ax.set_ylabel("divergence")
        ax.set_title("Equal degenerating covariances (-- Student-t)")
        ax.invert_xaxis()
        ax.legend()


def _fronts(curves: dict[str, Any], run_dir: RunDir) -> None:
    settings = list(curves)
    with figure(
        run_dir.plot_path("control_fronts"), 1, len(settings), width=4.5 * len(settings)
    ) as (_, axes):
        axes = np.atleast_1d(axes)
        for ax, setting in zip(axes, settings, strict=True):
            for i, (div, f) in enumerate(curves[setting].items()):
                style = ":" if div == "lqr" else "o-"
                ax.loglog(f["energy"], f["state"], style, ms=3, color=f"C{i}", label=_LABELS[div])
            ax.set_title(f"{setting} (first system)")
            ax.set_xlabel("control energy E sum g^t |u_t|^2")
        axes[0].set_ylabel("state cost E sum g^t |x_t|^2")
        axes[0].legend()


def plot_all(curves: dict[str, Any], run_dir: RunDir) -> None:
    """The figures of the stages that produced curves, in ``run_dir/plots``.

    Args:
        curves: each stage's ``curves``, by stage name.
        run_dir: the run folder.
    """
    if curves.get("degeneration"):
        _degeneration(curves["degeneration"], run_dir)
    if curves.get("fronts"):
        _fronts(curves["fronts"], run_dir)
