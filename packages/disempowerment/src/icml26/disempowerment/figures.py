"""Figures of a run: rates with intervals against planted truth, domain rates, the trend."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.disempowerment.taxonomy import DOMAIN_LABELS, SEVERITIES, VARIABLES
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["plot_figures"]


def plot_figures(run_dir: RunDir, m: dict[str, float], monthly: dict[str, Any]) -> None:
    """``rates.png``, ``domains.png`` and ``trend.png`` (planted values drawn when known).

    Args:
        run_dir: the run folder.
        m: the run's metrics (``planted.*`` drawn beside the estimates when present).
        monthly: the monthly series of the trend (``any``: rows of point, low, high;
            ``any.months``: the month indices).
    """
    planted: dict[str, float] = {}
    for key, value in m.items():
        if key.startswith("planted."):  # planted.<var>.<severity> is a rate's planted value
            tail = key[len("planted.") :]
            planted[f"rate.{tail}" if tail.split(".")[0] in VARIABLES else tail] = value
    with figure(run_dir.plot_path("rates"), 1, 3, width=11, height=3.2) as (_, axes):
        for ax, sev in zip(axes, SEVERITIES[1:], strict=True):
            x = np.arange(len(VARIABLES))
            y = np.array([m[f"rate.{v}.{sev}"] for v in VARIABLES])
            lo = np.array([m[f"rate.{v}.{sev}.lo"] for v in VARIABLES])
            hi = np.array([m[f"rate.{v}.{sev}.hi"] for v in VARIABLES])
            ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o", color=PALETTE[0], label="estimate")
            if planted:
                ax.plot(
                    x,
                    [planted[f"rate.{v}.{sev}"] for v in VARIABLES],
                    "x",
                    color=PALETTE[1],
                    label="planted",
                )
            ax.set_xticks(x, VARIABLES)
            ax.set_title(f"{sev}")
            ax.set_ylabel("share of conversations")
        axes[0].legend()
    keys = [d for d in DOMAIN_LABELS if f"domain_rate.{d}.severe_or_moderate" in m]
    if keys:
        with figure(run_dir.plot_path("domains"), width=6, height=3.2) as (_, ax):
            x = np.arange(len(keys))
            y = np.array([m[f"domain_rate.{d}.severe_or_moderate"] for d in keys])
            lo = np.array([m[f"domain_rate.{d}.severe_or_moderate.lo"] for d in keys])
            hi = np.array([m[f"domain_rate.{d}.severe_or_moderate.hi"] for d in keys])
            ax.bar(x, y, color=PALETTE[0], yerr=[y - lo, hi - y], label="estimate")
            if planted:
                ax.plot(
                    x,
                    [planted.get(f"domain_rate.{d}.severe_or_moderate", np.nan) for d in keys],
                    "x",
                    color=PALETTE[1],
                    label="planted",
                )
            ax.set_xticks(x, keys, rotation=30)
            ax.set_ylabel("moderate or severe (any dimension)")
            ax.legend()
    if "any" in monthly:
        with figure(run_dir.plot_path("trend"), width=6, height=3.2) as (_, ax):
            est: Any = np.asarray(monthly["any"])
            months = np.asarray(monthly["any.months"])
            ax.fill_between(months, est[:, 1], est[:, 2], alpha=0.3, color=PALETTE[0])
            ax.plot(months, est[:, 0], "o-", color=PALETTE[0], label="estimate")
            if "trend_slope.any" in planted:
                ax.plot(
                    months,
                    est[:, 0].mean() + planted["trend_slope.any"] * (months - months.mean()),
                    "--",
                    color=PALETTE[1],
                    label="planted slope",
                )
            ax.set_xlabel("month")
            ax.set_ylabel("any dimension, mild or worse")
            ax.legend()
