"""The run's figures: accuracy against tokens, think rates per split, GRPO reward curves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from icml26.adaptive_reasoning.methods import METHODS
from icml26.adaptive_reasoning.tasks import SPLITS
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["run_figures"]


def run_figures(
    run_dir: RunDir, m: Mapping[str, Any], histories: Mapping[str, list[dict[str, float]]]
) -> None:
    """``pareto``, ``think_rate`` and ``grpo_reward`` plots from the metrics and logs."""
    methods = [x for x in METHODS if f"accuracy.all.{x}" in m]
    with figure(run_dir.plot_path("pareto"), width=5.5, height=4) as (_fig, ax):
        for i, method in enumerate(methods):
            ax.errorbar(
                m[f"tokens.all.{method}"],
                m[f"accuracy.all.{method}"],
                yerr=m.get(f"accuracy_se.all.{method}", 0.0),
                fmt="o",
                color=PALETTE[i % len(PALETTE)],
                label=method,
            )
        ax.set_xlabel("mean generated tokens (all splits)")
        ax.set_ylabel("accuracy (all splits, mean over seeds)")
        ax.legend(fontsize=7)
    splits = [s for s in SPLITS if f"think_rate.{s}.ours" in m]
    with figure(run_dir.plot_path("think_rate"), width=7, height=4) as (_fig, ax):
        width = 0.8 / max(len(methods), 1)
        for i, method in enumerate(methods):
            ax.bar(
                np.arange(len(splits)) + i * width,
                [m.get(f"think_rate.{s}.{method}", np.nan) for s in splits],
                width,
                label=method,
                color=PALETTE[i % len(PALETTE)],
            )
        ax.set_xticks(np.arange(len(splits)) + 0.4 - width / 2, splits, rotation=20, fontsize=7)
        ax.set_ylabel("think rate")
        ax.legend(fontsize=6)
    with figure(run_dir.plot_path("grpo_reward"), width=5.5, height=4) as (_fig, ax):
        for name, history in sorted(histories.items()):
            method = name.split(".")[0]
            color = PALETTE[list(METHODS).index(method) % len(PALETTE)]
            ax.plot([h["reward"] for h in history], color=color, alpha=0.7, label=method)
        ax.set_xlabel("GRPO step")
        ax.set_ylabel("mean reward of the step's samples")
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles, strict=True))
        ax.legend(unique.values(), unique.keys(), fontsize=7)
