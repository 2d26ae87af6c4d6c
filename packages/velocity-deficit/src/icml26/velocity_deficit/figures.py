"""The run's figures, drawn from finished metrics (nothing here trains or samples).

* ``velocity_ratio_vs_t``: ``R(t)`` of the exact field and of each regime's models, per dataset;
* ``ssc_gain_vs_deficit``: SSC's FD gain at the selection budget against the model's
  learned-vs-exact start ratio, one point per (dataset, regime, seed), calibrated SSC beside
  the paper's ``1 / R(0)`` sizing;
* ``quality_vs_nfe_<data>``: FD against NFE per regime, with the held-out floor;
* ``samples_<data>``: samples at the selection budget (image grids, or a 2-D projection).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.shared import RunDir, figure
from icml26.shared.keys import metric_key
from icml26.velocity_deficit.config import RunConfig
from icml26.velocity_deficit.evaluate import VARIANTS, t_part

__all__ = ["plot_figures"]

_MARKERS = {"fit": "o", "short": "s"}


def _datasets(metrics: Mapping[str, Any]) -> list[str]:
    return sorted({k.split(".")[1] for k in metrics if k.startswith("fd_floor.")})


def _ratio_plot(metrics: Mapping[str, Any], config: RunConfig, run_dir: RunDir) -> None:
    names = _datasets(metrics)
    with figure(
        run_dir.plot_path("velocity_ratio_vs_t"),
        1,
        len(names),
        width=3.4 * len(names) + 0.6,
        squeeze=False,
        title="R(t) = E|v(x_t, t)| / E|x1 - x0|: exact field (black) and learned models",
    ) as (_fig, axes):
        for ax, name in zip(axes[0], names, strict=True):
            exact = [
                (t, metrics[k])
                for t in config.ratio_times
                if (k := metric_key("velocity_ratio_exact", name, t_part(t))) in metrics
            ]
            ax.plot(*zip(*exact, strict=True), "k:", lw=1.5, label="exact field")
            for regime in config.regimes:
                for method, ls in (("baseline", "-"), ("mafm", "--")):
                    keys = [
                        metric_key("velocity_ratio", name, regime, method, t_part(t))
                        for t in config.ratio_times
                    ]
                    if keys[0] in metrics:
                        ax.plot(
                            config.ratio_times,
                            [metrics[k] for k in keys],
                            ls,
                            marker=_MARKERS[regime],
                            ms=3,
                            label=f"{regime} {method}",
                        )
            ax.set(title=name, xlabel="t (0 noise, 1 data)", ylabel="R(t)")
            ax.legend(fontsize=7)


def _gain_plot(
    per_seed: Mapping[str, Sequence[Mapping[str, float]]], config: RunConfig, run_dir: RunDir
) -> None:
    k = config.select_nfe
    names = sorted({key.split(".")[0] for key in per_seed})
    with figure(
        run_dir.plot_path("ssc_gain_vs_deficit"),
        title=f"SSC's FD gain at {k} NFE against what the model lacks (one point per seed)",
        width=6.5,
        height=4.0,
    ) as (_fig, ax):
        for key, seeds in per_seed.items():
            name, regime = key.split(".")
            color = f"C{names.index(name) % 10}"
            for variant, filled in (("ssc", True), ("ssc_naive", False)):
                pts = [
                    (
                        m[metric_key("learned_vs_exact", name, regime, "baseline", "t0")],
                        m[metric_key("fd_gain", name, regime, variant, f"nfe{k}")],
                    )
                    for m in seeds
                ]
                pts = [p for p in pts if all(math.isfinite(v) for v in p)]
                if not pts:
                    continue
                xs, ys = zip(*pts, strict=True)
                ax.scatter(
                    xs,
                    np.clip(ys, -2, 1),
                    marker=_MARKERS[regime],
                    s=30,
                    facecolors=color if filled else "none",
                    edgecolors=color,
                    label=f"{name} {regime} {'calibrated' if filled else '1/R(0)'}",
                )
        ax.axhline(0, color="k", lw=0.8)
        ax.axvline(1, color="k", lw=0.8, ls=":")
        ax.set(
            xlabel="R_learned(0) / R_exact(0)  (1: lacks nothing)",
            ylabel="FD gain over the plain sampler (clipped at -2)",
        )
        ax.legend(fontsize=6, ncol=2)


def _quality_plot(
    name: str, metrics: Mapping[str, Any], config: RunConfig, run_dir: RunDir
) -> None:
    regimes = list(config.regimes)
    with figure(
        run_dir.plot_path(f"quality_vs_nfe_{name}"),
        1,
        len(regimes),
        width=4.2 * len(regimes),
        squeeze=False,
        title=f"{name}: test FD against NFE ({config.sampler}; mean over seeds)",
    ) as (_fig, axes):
        for ax, regime in zip(axes[0], regimes, strict=True):
            for v in VARIANTS:
                ks = [
                    k
                    for k in sorted({*config.nfe, config.reference_nfe})
                    if metric_key("fd", name, regime, v, f"nfe{k}") in metrics
                ]
                if ks:
                    ax.plot(
                        ks,
                        [metrics[metric_key("fd", name, regime, v, f"nfe{k}")] for k in ks],
                        "o-",
                        ms=3,
                        label=v,
                    )
            ax.axhline(
                metrics[metric_key("fd_floor", name)],
                color="k",
                ls=":",
                lw=0.8,
                label="held-out floor",
            )
            ax.set(xscale="log", yscale="log", xlabel="NFE", ylabel="FD", title=regime)
            ax.legend(fontsize=7)


def _samples_plot(
    name: str, panels: Mapping[str, Mapping[str, np.ndarray]], shape: Any, run_dir: RunDir
) -> None:
    rows = list(panels)
    cols = ["real", "baseline", "ssc"]
    with figure(
        run_dir.plot_path(f"samples_{name}"),
        len(rows),
        len(cols),
        width=2.4 * len(cols),
        height=2.4 * len(rows) + 0.3,
        squeeze=False,
        title=f"{name}: samples at the selection budget",
    ) as (_fig, axes):
        for i, regime in enumerate(rows):
            real = np.asarray(panels[regime]["real"])
            centre = real.mean(0)
            _, _, vt = np.linalg.svd(real - centre, full_matrices=False)
            for ax, col in zip(axes[i], cols, strict=True):
                x = np.asarray(panels[regime][col])
                ax.set_title(f"{regime}: {col}", fontsize=8)
                ax.axis("off")
                if shape is not None:
                    h, w = shape
                    k = min(6, int(math.sqrt(len(x))))
                    tiles = np.clip(x[: k * k], -1, 1).reshape(k, k, h, w).transpose(0, 2, 1, 3)
                    ax.imshow(tiles.reshape(k * h, k * w), cmap="gray", vmin=-1, vmax=1)
                else:
                    p = (x - centre) @ vt[:2].T
                    ax.scatter(p[:, 0], p[:, 1], s=2, alpha=0.5)


def plot_figures(
    metrics: Mapping[str, Any],
    per_seed: Mapping[str, Sequence[Mapping[str, float]]],
    samples: Mapping[str, Mapping[str, np.ndarray]],
    config: RunConfig,
    run_dir: RunDir,
    image_shapes: Mapping[str, Any] | None = None,
) -> None:
    """Every figure of the run (module docstring).

    Args:
        metrics: the run's merged metrics.
        per_seed: ``"<data>.<regime>"`` -> each seed's metrics.
        samples: ``"<data>.<regime>"`` -> variant -> samples (and ``real``), first seed.
        config: the run's config.
        run_dir: the run folder (figures go to ``plots/``).
        image_shapes: dataset -> ``(H, W)`` for image grids.
    """
    _ratio_plot(metrics, config, run_dir)
    _gain_plot(per_seed, config, run_dir)
    for name in _datasets(metrics):
        _quality_plot(name, metrics, config, run_dir)
        panels = {key.split(".")[1]: s for key, s in samples.items() if key.split(".")[0] == name}
        _samples_plot(name, panels, (image_shapes or {}).get(name), run_dir)
