"""The run's plots: EM by hops per method, reward components during RL, context vs EM."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.decor.data.types import HOPS
from icml26.decor.study import METHODS
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["plot_results"]


def plot_results(
    run_dir: RunDir, metrics: Mapping[str, float], seeds: Sequence[Mapping[str, Any]]
) -> None:
    """Write ``em_by_hops``, ``reward_components`` and ``context_tokens_vs_em``."""
    methods = [m for m in METHODS if f"em.all.{m}" in metrics]
    labels = [*HOPS, "all"]
    with figure(
        run_dir.plot_path("em_by_hops"), width=7.5, title="EM by hops (mean over seeds)"
    ) as (_, ax):
        width = 0.8 / max(len(methods), 1)
        for j, m in enumerate(methods):
            ax.bar(
                np.arange(len(labels)) + j * width,
                [metrics.get(f"em.{h}.{m}", 0.0) for h in labels],
                width,
                label=m,
                color=PALETTE[j % len(PALETTE)],
            )
        ax.set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels)
        ax.set_ylabel("exact match")
        ax.legend(fontsize=7, ncol=2)
    history = seeds[0]["history"] if seeds else {}
    with figure(
        run_dir.plot_path("reward_components"), 1, 2, width=8, title="Training rewards (seed 1)"
    ) as (_, axes):
        for ax, tag in zip(axes, ("decor", "outcome_only"), strict=True):
            hist = history.get(tag, [])
            for j, key in enumerate(("em", "f1", "planner_intrinsic", "filter_intrinsic")):
                ax.plot([h[key] for h in hist], label=key, color=PALETTE[j % len(PALETTE)])
            ax.set_title(tag)
            ax.set_xlabel("RL step")
        axes[0].legend(fontsize=7)
    with figure(run_dir.plot_path("context_tokens_vs_em"), title="Context tokens vs EM") as (_, ax):
        for j, m in enumerate(methods):
            ax.scatter(
                metrics[f"context_tokens.{m}"],
                metrics[f"em.all.{m}"],
                color=PALETTE[j % len(PALETTE)],
                label=m,
            )
        ax.set_xlabel("tokens the answering policy reads")
        ax.set_ylabel("EM (all hops)")
        ax.legend(fontsize=7)
