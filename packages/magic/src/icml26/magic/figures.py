"""The run's figures: MAGIC per round (every seed), every defender per evaluation set (means
and standard errors over seeds), and the compositions each attacker succeeds with."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.magic.config import DEFENDERS, EVALS
from icml26.shared import RunDir, figure

__all__ = ["make_plots"]


def _rounds(run_dir: RunDir, rounds: Sequence[Sequence[Mapping[str, Any]]]) -> None:
    with figure(run_dir.plot_path("rounds"), 1, 2, title="MAGIC per round (tiny)") as (_, axes):
        for k, rs in enumerate(rounds):
            x = [r["round"] for r in rs]
            lab = k == 0
            axes[0].plot(
                x,
                [r["asr_curve"] for r in rs],
                "o-",
                color="C0",
                alpha=0.6,
                label="defender: ASR (probe)" if lab else None,
            )
            axes[0].plot(
                x,
                [r["attacker_asr_curve"] for r in rs],
                "s--",
                color="C1",
                alpha=0.6,
                label="attacker: live ASR" if lab else None,
            )
            axes[1].plot(x, [r["benign_curve"] for r in rs], "o-", color="C2", alpha=0.6)
        axes[0].set_xlabel("round (one line per seed)")
        axes[0].set_ylabel("attack success")
        axes[0].legend(fontsize=7)
        axes[1].set_xlabel("round")
        axes[1].set_ylabel("benign compliance (probe)")
        axes[1].set_ylim(-0.05, 1.05)


def _defenders(run_dir: RunDir, metrics: Mapping[str, Any]) -> None:
    defenders = [d for d in DEFENDERS if f"asr.unseen_ops.{d}" in metrics]
    evals = [*EVALS, "adaptive"]
    with figure(run_dir.plot_path("defenders"), 1, 2, width=9) as (_, axes):
        w = 0.8 / max(len(defenders), 1)
        for i, d in enumerate(defenders):
            for ax, metric, sets in (
                (axes[0], "asr", evals),
                (axes[1], "benign_compliance", EVALS),
            ):
                keys = [f"{metric}.{e}.{d}" for e in sets]
                ax.bar(
                    np.arange(len(sets)) + i * w,
                    [metrics.get(k) or np.nan for k in keys],
                    w,
                    yerr=[metrics.get(f"se.{k}") or 0.0 for k in keys],
                    label=d,
                )
        axes[0].set_xticks(np.arange(len(evals)) + 0.4 - w / 2, evals, rotation=20, fontsize=7)
        axes[1].set_xticks(np.arange(len(EVALS)) + 0.4 - w / 2, EVALS, rotation=20, fontsize=7)
        axes[0].set_ylabel("attack success rate (mean, SE over seeds)")
        axes[1].set_ylabel("benign compliance")
        axes[0].legend(fontsize=7)


def _compositions(run_dir: RunDir, found: Mapping[str, Counter[str]]) -> None:
    with figure(run_dir.plot_path("compositions"), 1, 2, width=10, height=3.6) as (_, axes):
        for ax, name in zip(axes, ("attacker", "attacker_sft"), strict=True):
            top = found.get(name, Counter()).most_common(8)
            ax.barh([k for k, _ in top][::-1], [v for _, v in top][::-1], color="C1")
            ax.set_title(f"{name} vs MAGIC's defender: successes (all seeds)", fontsize=8)
            ax.tick_params(axis="y", labelsize=6)


def make_plots(
    run_dir: RunDir, replicates: Sequence[Mapping[str, Any]], metrics: Mapping[str, Any]
) -> None:
    """``plots/rounds.png``, ``plots/defenders.png``, ``plots/compositions.png``.

    Args:
        run_dir: the run folder.
        replicates: each seed's replicate (``rounds``, ``found``).
        metrics: the pooled metrics.
    """
    _rounds(run_dir, [r["rounds"] for r in replicates])
    _defenders(run_dir, metrics)
    found: dict[str, Counter[str]] = {}
    for r in replicates:
        for name, counts in r["found"].items():
            found.setdefault(name, Counter()).update(counts)
    _compositions(run_dir, found)
