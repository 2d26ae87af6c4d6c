"""Plots of a run: loss curves, static and peak memory against validation loss, recovery per
workload and format, the learning-rate sweep and the ablations (``plots/*.png``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from icml26.eco.config import RunConfig
from icml26.eco.jobs import Job
from icml26.eco.schemes import parse_scheme
from icml26.eco.study import Records
from icml26.shared import PALETTE, figure
from icml26.shared.rundir import RunDir

__all__ = ["plot_figures", "scheme_style"]


def scheme_style(scheme: str) -> dict[str, Any]:
    """Colour by kind, line style by rounding, marker by format.

    Args:
        scheme: a scheme name.

    Returns:
        ``{"color", "linestyle", "marker"}``.
    """
    s = parse_scheme(scheme)
    colour = {"fp32": PALETTE[7], "master": PALETTE[0], "naive": PALETTE[1], "eco": PALETTE[2]}
    return {
        "color": colour[s.kind],
        "linestyle": "-" if s.rounding in (None, "rtn") else "--",
        "marker": {None: "*", "fp8": "o", "int4": "s"}[s.fmt],
    }


def _axes(axes: Any) -> list[Any]:
    return list(axes.flat) if hasattr(axes, "flat") else [axes]


def _nested(metrics: dict[str, Any], *path: str) -> dict[str, Any]:
    out: Any = metrics
    for part in path:
        out = out.get(part, {}) if isinstance(out, dict) else {}
    return out if isinstance(out, dict) else {}


def _loss_curves(cfg: RunConfig, rec: Records, run_dir: RunDir) -> None:
    n = len(cfg.workloads)
    schemes = [*cfg.schemes, *(s for s in cfg.extra_schemes if s not in cfg.schemes)]
    with figure(run_dir.plot_path("loss_curves"), 1, n, width=4.2 * n + 1.5, height=3.4) as (
        _fig,
        axes,
    ):
        for ax, w in zip(_axes(axes), cfg.workloads, strict=True):
            for s in schemes:
                r = rec.get(w, s, cfg.seeds[0])
                if r is None:
                    continue
                smooth, acc = [], r["losses"][0]
                for x in r["losses"]:
                    acc = 0.9 * acc + 0.1 * x
                    smooth.append(acc)
                st = scheme_style(s)
                ax.plot(smooth, color=st["color"], linestyle=st["linestyle"], lw=1.0, label=s)
            ax.set_title(f"{w}: training loss (EMA 0.9), seed {cfg.seeds[0]}")
            ax.set_xlabel("step")
            ax.set_ylabel("loss")
        _axes(axes)[-1].legend(loc="upper right", ncol=2, fontsize=6)


def _memory_vs_loss(metrics: dict[str, Any], run_dir: RunDir) -> None:
    """Static memory (filled) and peak memory (open) against the paired mean validation loss
    (± SE), one panel per workload."""
    losses, ses = _nested(metrics, "val_loss_mean"), _nested(metrics, "val_loss_se")
    workloads = list(losses)
    if not workloads:
        return
    n = len(workloads)
    with figure(run_dir.plot_path("pareto"), 1, n, width=4.2 * n + 0.5, height=3.6) as (_f, axes):
        for ax, w in zip(_axes(axes), workloads, strict=True):
            static = _nested(metrics, "static_memory_mb", w)
            peak = _nested(metrics, "peak_memory_mb", w)
            for s, loss in losses[w].items():
                st = scheme_style(s)
                se = ses.get(w, {}).get(s)
                err = None if se is None or math.isnan(se) else se
                if s in static:
                    ax.errorbar(
                        static[s],
                        loss,
                        yerr=err,
                        color=st["color"],
                        marker=st["marker"],
                        ls="none",
                        label=s,
                    )
                if s in peak:
                    ax.scatter(
                        peak[s],
                        loss,
                        facecolors="none",
                        edgecolors=st["color"],
                        marker=st["marker"],
                    )
            ax.set_title(f"{w}: memory vs validation loss", fontsize=9)
            ax.set_xlabel("MB: static (filled), peak of a step (open)")
            ax.set_ylabel("validation loss (mean ± SE)")
        _axes(axes)[0].legend(fontsize=6, ncol=2)


def _recovery(metrics: dict[str, Any], run_dir: RunDir) -> None:
    """ECO's share of naive removal's gap recovered, per workload and format (± SE)."""
    rec, se = _nested(metrics, "recovered"), _nested(metrics, "recovered_se")
    bars = [(w, s, v) for w, by in rec.items() for s, v in by.items() if s.startswith("eco_")]
    if not bars:
        return
    with figure(run_dir.plot_path("recovery"), width=6.5, height=3.2) as (_fig, ax):
        xs = range(len(bars))
        errs = [
            0.0 if math.isnan(e := se.get(w, {}).get(s, math.nan)) else 100 * e for w, s, _ in bars
        ]
        ax.bar(
            xs,
            [100 * v for _, _, v in bars],
            yerr=errs,
            color=[scheme_style(s)["color"] for _, s, _ in bars],
        )
        ax.axhline(50.0, color="grey", lw=0.8, ls="--")  # the claim's bar
        ax.axhline(100.0, color="grey", lw=0.8)
        ax.set_xticks(list(xs), [f"{w}\n{s}" for w, s, _ in bars], fontsize=6)
        ax.set_ylabel("naive removal's gap recovered (%)")


def _sweep(metrics: dict[str, Any], run_dir: RunDir) -> None:
    sweep = _nested(metrics, "lr_sweep")
    lrs = _nested(sweep, "lr")
    gaps, ses = _nested(sweep, "gap"), _nested(sweep, "gap_se")
    if not lrs or not gaps:
        return
    with figure(run_dir.plot_path("lr_sweep"), width=5.0, height=3.4) as (_fig, ax):
        for s, by in gaps.items():
            st = scheme_style(s)
            keys = sorted(by, key=lambda k: lrs[k])
            ys = [by[k] for k in keys]  # signed: ECO's gap may be below 0
            errs = [0.0 if math.isnan(e := ses.get(s, {}).get(k, math.nan)) else e for k in keys]
            ax.errorbar(
                [lrs[k] for k in keys],
                ys,
                yerr=errs,
                color=st["color"],
                marker=st["marker"],
                label=f"{s} − master",
            )
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1e-3)  # log above |gap| = 0.001, linear through 0
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xlabel("peak learning rate (equal lr·steps)")
        ax.set_ylabel("validation-loss gap to master weights")
        ax.legend(fontsize=6)


def _ablations(metrics: dict[str, Any], run_dir: RunDir) -> None:
    """ECO's gap to master weights per ablation (± 1 SE over the paired seeds)."""
    panels = [
        (w, s, per) for w, by in _nested(metrics, "ablation").items() for s, per in by.items()
    ]
    if not panels:
        return
    n = len(panels)
    with figure(run_dir.plot_path("ablations"), 1, n, width=4.0 * n + 0.5, height=3.6) as (
        _f,
        axes,
    ):
        for ax, (w, s, per) in zip(_axes(axes), panels, strict=True):
            names = list(per)
            gaps = [100 * per[a]["gap"] for a in names]
            errs = [0.0 if math.isnan(e := per[a]["gap_se"]) else 100 * e for a in names]
            colours = [PALETTE[0] if a == "default" else PALETTE[2] for a in names]
            ax.barh(range(len(names)), gaps, xerr=errs, color=colours)
            ax.axvline(0.0, color="grey", lw=0.8)
            ax.axvline(2.0, color="grey", lw=0.8, ls="--")  # near-lossless: 2%
            ax.set_yticks(range(len(names)), names, fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel("ECO validation-loss gap to master (%)")
            ax.set_title(f"{w}: {s}", fontsize=9)


def plot_figures(
    cfg: RunConfig,
    jobs: Sequence[Job],
    records: Sequence[dict[str, Any]],
    metrics: dict[str, Any],
    run_dir: RunDir,
) -> None:
    """Write every plot of the run.

    Args:
        cfg: the run's config.
        jobs: the planned jobs.
        records: their records.
        metrics: :func:`~icml26.eco.study.summarise`'s metrics.
        run_dir: the run folder.
    """
    _loss_curves(cfg, Records(jobs, records), run_dir)
    _memory_vs_loss(metrics, run_dir)
    _recovery(metrics, run_dir)
    _sweep(metrics, run_dir)
    _ablations(metrics, run_dir)
