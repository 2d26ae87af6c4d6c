"""Figures of the run and the bench."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.shared import PALETTE, RunDir, figure

__all__ = ["plot_all", "plot_rollout_cost"]


def plot_all(per_system: dict[str, dict[str, list[dict[str, Any]]]], run_dir: RunDir) -> None:
    """Error growth, true energy, latent trajectories and training loss, one panel per system.

    Args:
        per_system: ``units[system][model]`` = one metrics dict per seed (with curves).
        run_dir: the run folder.
    """
    names = list(per_system)
    cols = len(names)
    with figure(
        run_dir.plot_path("error_growth"),
        1,
        cols,
        title="Rollout error vs time (median over test ICs, mean over seeds)",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            for i, (kind, units) in enumerate(per_system[name].items()):
                curve = np.mean([np.asarray(u["error_curve"], dtype=float) for u in units], axis=0)
                ax.semilogy(
                    np.arange(curve.size), curve, color=PALETTE[i % len(PALETTE)], label=kind
                )
            for k in (1, 5):
                ax.axvline(k * (curve.size - 1) / 10, color="grey", lw=0.8, ls=":")
            ax.set_title(name)
            ax.set_xlabel("step (dotted: 1x, 5x training horizon)")
        axes[0].set_ylabel("relative error")
        axes[0].legend()
    with figure(
        run_dir.plot_path("energy"),
        1,
        cols,
        title="True energy on decoded rollouts (test IC 0, first seed)",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            by_model = per_system[name]
            first = next(iter(by_model.values()))[0]
            if "energy_reference" in first:
                ax.plot(
                    np.asarray(first["energy_reference"]), color="black", lw=2.2, label="reference"
                )
                for i, (kind, us) in enumerate(by_model.items()):
                    ax.plot(
                        np.asarray(us[0]["energy_curve"], dtype=float),
                        color=PALETTE[i % len(PALETTE)],
                        label=kind,
                    )
            ax.set_title(name)
            ax.set_xlabel("step")
        axes[0].set_ylabel("H(x)")
        axes[0].legend()
    with figure(
        run_dir.plot_path("latent_trajectories"),
        1,
        cols,
        title="RO-HNN latent coordinates (test IC 0): rollout vs encoded truth",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            units = per_system[name].get("rohnn") or next(iter(per_system[name].values()))
            pred = np.asarray(units[0]["latent_pred"], dtype=float)
            true = np.asarray(units[0]["latent_true"], dtype=float)
            for j in range(pred.shape[1]):
                ax.plot(true[:, j], color=PALETTE[j], lw=2.2, alpha=0.5, label=f"E(x)_q{j}")
                ax.plot(pred[:, j], color=PALETTE[j], ls="--", label=f"rollout q{j}")
            ax.set_title(name)
            ax.set_xlabel("step")
        axes[0].legend()
    with figure(
        run_dir.plot_path("training_loss"), 1, cols, title="Training loss (first seed)"
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, name in zip(axes, names, strict=True):
            for i, (kind, units) in enumerate(per_system[name].items()):
                ax.semilogy(
                    np.asarray(units[0]["loss_curve"], dtype=float),
                    color=PALETTE[i % len(PALETTE)],
                    label=kind,
                )
            ax.set_title(name)
            ax.set_xlabel("optimiser step")
        axes[0].legend()


def plot_rollout_cost(rows: list[tuple[Any, ...]], run_dir: RunDir) -> None:
    """Rollout seconds against the full dimension (the bench).

    Args:
        rows: ``(n, reference, reduced, equal-accuracy reference, full HNN)`` seconds per size.
        run_dir: the run folder.
    """
    with figure(
        run_dir.plot_path("rollout_cost"), title="Rollout cost vs full dimension (FPUT)"
    ) as (_fig, ax):
        sizes = [r[0] for r in rows]
        ax.loglog(sizes, [r[1] for r in rows], "o-", label="reference (leapfrog, fine steps)")
        ax.loglog(sizes, [r[3] for r in rows], "^-", label="reference, as accurate as RO-HNN")
        ax.loglog(sizes, [r[4] for r in rows], "d-", label="full-order HNN rollout")
        ax.loglog(sizes, [r[2] for r in rows], "s-", label="RO-HNN (latent rollout + decode)")
        ax.set_xlabel("masses n (phase space 2n)")
        ax.set_ylabel("seconds")
        ax.legend()
