"""The run's figures: return curves, achievement bars, the archive's lineage and learnability."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.dicode.tech import ACHIEVEMENTS
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["plot_craftax", "plot_results"]


def _curves(ax: Any, units: dict[str, list[dict[str, Any]]]) -> None:
    for i, (method, us) in enumerate(units.items()):
        steps = np.asarray(us[0]["curve_steps"]) / 1e6
        ret = np.mean([u["curve_return"] for u in us], axis=0)
        ax.plot(steps, ret, color=PALETTE[i % len(PALETTE)], label=method)
    ax.set_xlabel("environment steps (millions)")
    ax.set_ylabel("return on held-out target worlds")
    ax.legend()


def plot_craftax(run_dir: RunDir, units: dict[str, list[dict[str, Any]]]) -> None:
    """Write ``craftax_return_curves``: the Craftax units' target return over training.

    Args:
        run_dir: the run folder (plots go to ``<run>/plots/``).
        units: per method, one Craftax unit dict per seed.
    """
    with figure(
        run_dir.plot_path("craftax_return_curves"),
        title="Craftax-Classic, 400-step episodes (mean over seeds)",
    ) as (_f, ax):
        _curves(ax, units)


def plot_results(run_dir: RunDir, units: dict[str, list[dict[str, Any]]]) -> None:
    """Write ``return_curves``, ``achievement_success``, ``lineage_tree`` and ``learnability``.

    Args:
        run_dir: the run folder (plots go to ``<run>/plots/``).
        units: per method, one unit dict per seed.
    """
    with figure(
        run_dir.plot_path("return_curves"),
        title="Target-world return vs environment steps (mean over seeds)",
    ) as (_f, ax):
        _curves(ax, units)
    with figure(
        run_dir.plot_path("achievement_success"),
        title="Achievement success on the target (final policy)",
        width=11,
        height=4,
    ) as (_f, ax):
        width = 0.8 / max(1, len(units))
        x = np.arange(len(ACHIEVEMENTS))
        for i, (method, us) in enumerate(units.items()):
            rates = [np.mean([u["achievement_success"][a] for u in us]) for a in ACHIEVEMENTS]
            ax.bar(x + i * width, rates, width, color=PALETTE[i % len(PALETTE)], label=method)
        ax.set_xticks(x + 0.4 - width / 2)
        ax.set_xticklabels(ACHIEVEMENTS, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("success rate")
        ax.legend(fontsize=7)
    dicode = units.get("dicode")
    if not dicode:
        return
    archive = dicode[0]["archive"]
    with figure(
        run_dir.plot_path("lineage_tree"),
        title="DiCode archive lineage, seed 0 (colour: learnability)",
    ) as (fig, ax):
        for e in archive:
            if e["parent"] is not None:
                p = archive[e["parent"]]
                ax.plot(
                    [p["born"], e["born"]], [p["generation"], e["generation"]], color="0.75", lw=0.6
                )
        sc = ax.scatter(
            [e["born"] for e in archive],
            [e["generation"] + 0.15 * ((e["id"] % 5) - 2) / 2 for e in archive],
            c=[e["learnability"] if e["learnability"] is not None else -0.02 for e in archive],
            cmap="viridis",
            vmin=-0.02,
            vmax=0.25,
            s=14,
        )
        fig.colorbar(sc, ax=ax, label="p(1-p) (unevaluated: below 0)")
        ax.set_xlabel("round born")
        ax.set_ylabel("generation (edits from the target world)")
    with figure(
        run_dir.plot_path("learnability"), title="DiCode archive over training (mean over seeds)"
    ) as (_f, ax):
        hist = [u["history"] for u in dicode]
        n = min(len(h) for h in hist)
        rounds = [hist[0][i]["round"] for i in range(n)]
        for key, color in (("mean_learnability", PALETTE[0]), ("max_learnability", PALETTE[1])):
            ax.plot(
                rounds,
                [np.mean([h[i][key] for h in hist]) for i in range(n)],
                color=color,
                label=key,
            )
        ax.set_xlabel("round")
        ax.set_ylabel("learnability p(1-p)")
        ax2 = ax.twinx()
        ax2.plot(
            rounds,
            [
                np.mean(
                    [
                        h[i]["frontier_size"]
                        / max(1.0, h[i].get("evaluated", h[i]["archive_size"]))
                        for h in hist
                    ]
                )
                for i in range(n)
            ],
            color=PALETTE[2],
            ls="--",
            label="frontier fraction",
        )
        ax2.set_ylabel("frontier fraction")
        ax.legend(loc="upper left")
        ax2.legend(loc="upper right")
