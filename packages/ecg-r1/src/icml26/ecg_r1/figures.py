"""The run's figures: an ECG with ECG-R1's interpretation, Jaccard by condition, and the
hallucination rate per method (seed SE as error bars where there are seeds)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.ecg_r1.data import ECGDataset
from icml26.ecg_r1.render import render_ecg
from icml26.ecg_r1.tables import METHODS
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["write_figures"]


def write_figures(
    run_dir: RunDir, m: dict[str, Any], test: ECGDataset, interpretation: str
) -> None:
    """``ecg_interpretation``, ``jaccard_by_condition`` and ``hallucination_rate`` plots."""
    import matplotlib.image as mpimg

    fig = render_ecg(
        test.raw[0], test.fs, title="true: " + ", ".join(sorted(test.labels[0])), dpi=110
    )
    tmp = run_dir.plot_path("_ecg_tmp")
    fig.savefig(tmp)
    img = mpimg.imread(tmp)
    tmp.unlink()
    with figure(
        run_dir.plot_path("ecg_interpretation"),
        2,
        1,
        width=10,
        height=8.5,
        gridspec_kw={"height_ratios": [3, 2]},
    ) as (_, axes):
        axes[0].imshow(img)
        axes[0].set_axis_off()
        axes[1].set_axis_off()
        text = "ECG-R1 (tiny LM) interpretation:\n" + interpretation.replace(
            "</think>", "</think>\n"
        )
        axes[1].text(0, 1, text, va="top", ha="left", fontsize=7, family="monospace", wrap=True)
    conds = ("both", "signal_only", "image_only")
    methods = [x for x in METHODS if f"hallucination_rate.{x}" in m]  # the SmolLM2 rows if run
    with figure(run_dir.plot_path("jaccard_by_condition"), width=8, height=3.4) as (_, ax):
        w = 0.8 / len(methods)
        for j, meth in enumerate(methods):
            vals = [m.get(f"diagnosis_jaccard.{c}.{meth}", np.nan) for c in conds]
            ax.bar(np.arange(3) + j * w, vals, w, label=meth, color=PALETTE[j % len(PALETTE)])
        ax.set_xticks(np.arange(3) + 0.4 - w / 2, conds)
        ax.set_ylabel("diagnosis Jaccard")
        ax.legend(fontsize=7, ncol=3)
    with figure(run_dir.plot_path("hallucination_rate"), width=6, height=3.2) as (_, ax):
        vals = [m[f"hallucination_rate.{meth}"] for meth in methods]
        errs = [m.get(f"hallucination_rate_se.{meth}", 0.0) for meth in methods]
        ax.bar(
            methods, vals, yerr=errs, color=[PALETTE[j % len(PALETTE)] for j in range(len(methods))]
        )
        ax.set_ylabel("contradicting statements / statements")
        ax.tick_params(axis="x", labelsize=7)
