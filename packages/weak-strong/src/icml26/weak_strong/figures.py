"""Figures of the main job: running error rates against their targets, strong-call frequency
over time, thresholds over time, the two-threshold policy on the score axis, reliability
diagrams, and the value of sharpness."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from icml26.shared import PALETTE, RunDir, figure
from icml26.weak_strong.config import RunConfig
from icml26.weak_strong.keys import akey
from icml26.weak_strong.metrics import reliability_curve
from icml26.weak_strong.population import ScoreLaw, optimal_policy, policy_risks

__all__ = ["make_plots"]

_COLOURS = {
    "online": PALETTE[0],
    "fixed_calibrated": PALETTE[1],
    "oracle": PALETTE[2],
    "always_strong": PALETTE[7],
    "weak_only": PALETTE[3],
    "label_free": PALETTE[4],
}


def _streams(plot_data: dict[str, Any]) -> list[str]:
    return [s for s in plot_data if s != "population" and plot_data[s]]


def make_plots(
    config: RunConfig,
    run_dir: RunDir,
    plot_data: dict[str, Any],
    laws: dict[str, ScoreLaw],
) -> None:
    """Write every figure into ``run_dir/plots``."""
    streams = _streams(plot_data)
    alpha = config.alphas[len(config.alphas) // 2]
    if streams:
        _running(run_dir, plot_data, streams, alpha)
        _strong_calls(run_dir, plot_data, streams)
        _thresholds(run_dir, plot_data, streams, alpha)
        _reliability(run_dir, plot_data, streams)
    for s in streams:
        if "length_study" in plot_data[s]:
            _error_vs_length(run_dir, s, plot_data[s]["length_study"], config.alphas)
    _two_threshold(run_dir, laws, alpha, plot_data)
    _sharpness(run_dir, laws, config.alphas)


def _running(run_dir: RunDir, data: dict[str, Any], streams: list[str], alpha: float) -> None:
    n = len(streams)
    rows, cols = n, 2
    with figure(
        run_dir.plot_path("running_errors"),
        n,
        2,
        width=8.0,
        height=1.9 * n + 0.6,
        title=f"Running error rates, target alpha = beta = {alpha:g}",
    ) as (_fig, axes):
        axes = np.asarray(axes, dtype=object).reshape(rows, cols)
        for row, s in enumerate(streams):
            for col, (key, label) in enumerate(
                (
                    ("incorrect_accept", "incorrect acceptance"),
                    ("incorrect_reject", "incorrect rejection"),
                )
            ):
                ax = axes[row, col]
                for p in ("online", "fixed_calibrated", "oracle"):
                    if p in data[s]:
                        c = data[s][p]
                        ax.plot(c["t"], c[key], color=_COLOURS[p], label=p, lw=1.2)
                ax.axhline(alpha, color="k", ls="--", lw=0.8, label="target")
                ax.set_ylim(0, min(1.0, max(0.5, 3 * alpha)))
                ax.set_title(f"{s}: {label}")
                if row == n - 1:
                    ax.set_xlabel("items")
        axes[0, 0].legend(loc="upper right")


def _strong_calls(run_dir: RunDir, data: dict[str, Any], streams: list[str]) -> None:
    cols = min(4, len(streams))
    rows = int(np.ceil(len(streams) / cols))
    with figure(
        run_dir.plot_path("strong_calls"),
        rows,
        cols,
        title="Strong-verification frequency over the stream",
    ) as (_fig, axes):
        axes = np.asarray(axes, dtype=object).reshape(rows, cols)
        for i, s in enumerate(streams):
            ax = axes[i // cols, i % cols]
            for p, c in data[s].items():
                if p in _COLOURS:
                    ax.plot(c["t"], c["strong_freq"], color=_COLOURS[p], label=p, lw=1.2)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(s)
            ax.set_xlabel("items")
        for j in range(len(streams), rows * cols):
            axes[j // cols, j % cols].set_visible(False)
        axes[0, 0].legend(loc="lower left", fontsize=6)


def _thresholds(run_dir: RunDir, data: dict[str, Any], streams: list[str], alpha: float) -> None:
    cols = min(4, len(streams))
    rows = int(np.ceil(len(streams) / cols))
    with figure(
        run_dir.plot_path("online_thresholds"),
        rows,
        cols,
        title=f"Online thresholds over time (alpha = beta = {alpha:g})",
    ) as (_fig, axes):
        axes = np.asarray(axes, dtype=object).reshape(rows, cols)
        for i, s in enumerate(streams):
            ax = axes[i // cols, i % cols]
            if "online" in data[s]:
                c = data[s]["online"]
                ax.plot(c["t"], c["tau_a"], color=PALETTE[0], label="tau_a (accept above)")
                ax.plot(c["t"], c["tau_r"], color=PALETTE[1], label="tau_r (reject below)")
            ax.set_title(s)
            ax.set_xlabel("items")
        for j in range(len(streams), rows * cols):
            axes[j // cols, j % cols].set_visible(False)
        axes[0, 0].legend(loc="lower left", fontsize=6)


def _error_vs_length(
    run_dir: RunDir, stream: str, study: dict[str, Any], alphas: tuple[float, ...]
) -> None:
    """Mean error rate (10-90% band over orders) and the mean finite-sample bound against the
    stream length, one colour per target; beyond the dotted line items repeat."""
    lengths = np.asarray(study["lengths"], dtype=float)
    with figure(
        run_dir.plot_path(f"{stream}_error_vs_length"),
        1,
        2,
        width=8.0,
        height=3.2,
        title=f"{stream}: online policy's errors (solid) and finite-sample bound (dashed) "
        "against stream length",
    ) as (_fig, axes):
        for ax, side, label in zip(
            axes, ("accept", "reject"), ("incorrect acceptance", "incorrect rejection"), strict=True
        ):
            for i, alpha in enumerate(alphas):
                c = study.get(akey(alpha))
                if c is None:
                    continue
                colour = PALETTE[i % len(PALETTE)]
                rate = c[f"incorrect_{side}"]
                ax.plot(lengths, rate["mean"], color=colour, lw=1.4, label=f"target {alpha:g}")
                ax.fill_between(lengths, rate["lo"], rate["hi"], color=colour, alpha=0.15, lw=0)
                ax.plot(
                    lengths,
                    np.minimum(c[f"bound_{side}"]["mean"], 1.5),
                    color=colour,
                    ls="--",
                    lw=1.0,
                )
                ax.axhline(alpha, color=colour, ls=":", lw=0.8)
            if study["stream_length"] < lengths[-1]:
                ax.axvline(study["stream_length"], color="k", ls=":", lw=0.8)
            ax.set_xscale("log")
            ax.set_ylim(0, 1.0)
            ax.set_xlabel("stream length (items)")
            ax.set_title(label)
        axes[0].legend(loc="upper right", fontsize=6)


def _reliability(run_dir: RunDir, data: dict[str, Any], streams: list[str]) -> None:
    with figure(run_dir.plot_path("reliability"), title="Calibration of the weak verifiers") as (
        _fig,
        ax,
    ):
        ax.plot([0, 1], [0, 1], color="k", ls="--", lw=0.8)
        for i, s in enumerate(streams):
            if "reliability" not in data[s]:
                continue
            scores, labels = data[s]["reliability"]
            conf, acc, _ = reliability_curve(np.asarray(scores), np.asarray(labels), bins=10)
            ax.plot(conf, acc, marker="o", ms=3, color=PALETTE[i % len(PALETTE)], label=s)
        ax.set_xlabel("weak score")
        ax.set_ylabel("share correct")
        ax.legend(fontsize=6)


def _two_threshold(
    run_dir: RunDir, laws: dict[str, ScoreLaw], alpha: float, data: dict[str, Any]
) -> None:
    panels = [
        ("medium", "calibrated verifier"),
        ("nonmonotone", "confident mistakes on (0.8, 0.9]"),
    ]
    with figure(
        run_dir.plot_path("two_threshold_policy"),
        1,
        2,
        width=8.0,
        title=f"Population-optimal policy on the score axis (alpha = beta = {alpha:g})",
    ) as (_fig, axes):
        for ax, (name, label) in zip(axes, panels, strict=True):
            law = laws[name]
            pol = optimal_policy(law, alpha, alpha, order="eta")
            s = law.atoms
            ax.fill_between(
                s, 0, pol.reject, color=PALETTE[1], alpha=0.35, step="mid", label="reject"
            )
            ax.fill_between(
                s,
                pol.reject,
                pol.reject + pol.defer,
                color=PALETTE[7],
                alpha=0.15,
                step="mid",
                label="defer (strong)",
            )
            ax.fill_between(
                s, 1 - pol.accept, 1, color=PALETTE[2], alpha=0.35, step="mid", label="accept"
            )
            ax.plot(s, law.eta, color="k", lw=1.2, label="P(correct | score)")
            density = law.mass / law.mass.max()
            ax.plot(s, density, color=PALETTE[5], lw=0.8, ls=":", label="score density (scaled)")
            risks = policy_risks(pol)
            ax.set_title(f"{label}: strong {risks['strong_freq']:.2f}")
            ax.set_xlabel("weak score")
            ax.set_ylim(0, 1.02)
        calib = data.get("calibrated", {}).get("online")
        if calib:
            axes[0].axvline(
                calib["tau_a"][-1], color=PALETTE[0], ls="--", lw=1, label="online tau_a (end)"
            )
            axes[0].axvline(
                calib["tau_r"][-1], color=PALETTE[0], ls="-.", lw=1, label="online tau_r (end)"
            )
        axes[0].legend(fontsize=6, loc="center left")


def _sharpness(run_dir: RunDir, laws: dict[str, ScoreLaw], alphas: tuple[float, ...]) -> None:
    grid = np.linspace(0.02, 0.4, 20)
    with figure(
        run_dir.plot_path("sharpness_value"),
        1,
        2,
        width=8.0,
        title="What a weak verifier is worth: sharpness and calibration",
    ) as (_fig, axes):
        for i, name in enumerate(("sharp", "medium", "blunt", "nonmonotone")):
            law = laws[name]
            orders: tuple[tuple[Literal["eta", "score"], str], ...] = (
                ("eta", "-"),
                ("score", "--"),
            )
            for order, ls in orders:
                if name != "nonmonotone" and order == "score":
                    continue
                sf = [
                    policy_risks(optimal_policy(law, a, a, order=order))["strong_freq"]
                    for a in grid
                ]
                lab = f"{name}" + (f" ({order} thresholds)" if name == "nonmonotone" else "")
                axes[0].plot(grid, sf, color=PALETTE[i], ls=ls, label=lab)
        axes[0].set_xlabel("alpha = beta")
        axes[0].set_ylabel("optimal strong-verification frequency")
        axes[0].legend(fontsize=6)
        for i, name in enumerate(("sharp", "medium", "blunt")):
            law = laws[name]
            axes[1].plot(law.atoms, law.mass / law.mass.max(), color=PALETTE[i], label=name)
        axes[1].set_xlabel("calibrated score")
        axes[1].set_ylabel("density (scaled)")
        axes[1].set_title("score laws (calibrated, mean 0.6)")
        axes[1].legend(fontsize=6)
