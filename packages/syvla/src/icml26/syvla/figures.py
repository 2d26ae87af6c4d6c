"""The run's figures (``<run>/plots/*.png``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.shared import PALETTE, figure
from icml26.syvla.config import SPLIT_NAMES, RunConfig

__all__ = ["plot_run"]


def plot_run(
    cfg: RunConfig,
    run_dir: Any,
    metrics: dict[str, float],
    rl: dict[str, list[dict[str, Any]]],
    strip: list[tuple[np.ndarray, str]],
) -> None:
    """The run's figures: success per split, VQA after RL, return curves, a rollout strip.

    Args:
        cfg: the run's config.
        run_dir: the run folder (``plot_path``).
        metrics: the run's flat metrics.
        rl: the RL records of every method and seed.
        strip: (frame, mission) pairs of one syvla episode.
    """
    methods = [m for m in cfg.methods if f"success.train.{m}" in metrics]
    with figure(run_dir.plot_path("success_per_split"), width=7.5, height=3.0) as (fig, ax):
        width = 0.8 / len(methods)
        x = np.arange(len(SPLIT_NAMES))
        for j, m in enumerate(methods):
            vals = [metrics[f"success.{s}.{m}"] for s in SPLIT_NAMES]
            errs = [metrics[f"success_se.{s}.{m}"] for s in SPLIT_NAMES]
            ax.bar(x + j * width, vals, width, yerr=errs, label=m, color=PALETTE[j % len(PALETTE)])
        ax.set_xticks(x + 0.4 - width / 2, SPLIT_NAMES)
        ax.set_ylabel("success rate")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, ncols=3)
    with figure(run_dir.plot_path("vqa_before_after_rl"), width=5.0, height=3.0) as (fig, ax):
        vals = [metrics[f"vqa_accuracy.{m}"] for m in methods]
        errs = [metrics[f"vqa_accuracy_se.{m}"] for m in methods]
        colors = [PALETTE[j % len(PALETTE)] for j in range(len(methods))]
        ax.bar(methods, vals, yerr=errs, color=colors)
        ax.axhline(metrics["vqa_pretrained"], color="k", ls="--", lw=1, label="pretrained")
        ax.set_ylabel("VQA accuracy")
        ax.tick_params(axis="x", labelrotation=30)
        ax.legend(fontsize=7)
    if rl:
        with figure(run_dir.plot_path("return_curve"), width=5.0, height=3.0) as (fig, ax):
            for j, (m, infos) in enumerate(rl.items()):
                curves = np.array([i["returns"] for i in infos])
                ax.plot(curves.mean(0), label=m, color=PALETTE[j % len(PALETTE)])
            ax.set_xlabel("PPO update")
            ax.set_ylabel("mean episode return")
            ax.legend(fontsize=7)
    if strip:
        frames = strip[:: max(1, len(strip) // 6)][:6]
        with figure(
            run_dir.plot_path("rollout_strip"), 1, len(frames), width=2.0 * len(frames), height=2.4
        ) as (
            fig,
            axes,
        ):
            for k, ax in enumerate(np.atleast_1d(axes)):
                frame, _mission = frames[k]
                ax.imshow(frame)
                ax.set_axis_off()
                ax.set_title(f"t={k * max(1, len(strip) // 6)}", fontsize=7)
            fig.suptitle(f'syvla: "{frames[0][1]}"', fontsize=9)
