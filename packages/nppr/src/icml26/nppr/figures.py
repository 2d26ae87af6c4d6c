"""The run's plots: robustness against the budget, learned perturbations beside fixed and
universal ones, and the learned mixture weights (first replicate)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from icml26.nppr.baselines.noise import FixedNoise
from icml26.nppr.config import RunConfig, eps_tag
from icml26.nppr.gmm import PerturbationGMM
from icml26.shared import PALETTE, figure

__all__ = ["plot_mixtures", "plot_sweep"]

_SERIES = (
    ("ar.pgd", "AR (PGD)", PALETTE[1]),
    ("nppr.none", "NPPR (none form)", PALETTE[0]),
    ("pr.uniform", "PR uniform (ours)", PALETTE[2]),
    ("pr.gaussian", "PR Gaussian (ours)", PALETTE[3]),
    ("pr.gaussian_official", "PR randn clipped (official)", PALETTE[4]),
)


def plot_sweep(
    run_dir: Any, metrics: Mapping[str, float], tags: Sequence[str], eps: Sequence[float]
) -> None:
    """``metrics_vs_eps.png``: AR, NPPR and PR with their intervals against the budget.

    Args:
        run_dir: the run folder (``plot_path``).
        metrics: the run's metrics (sweep keys ``<metric>.<tag>.eps<...>``).
        tags: the models, one panel each.
        eps: the budgets.
    """
    if not tags:
        return
    eps_list = sorted(eps)
    with figure(
        run_dir.plot_path("metrics_vs_eps"), 1, len(tags), title="Robustness against the budget"
    ) as (_f, axes):
        axes = np.atleast_1d(axes)
        for ax, tag in zip(axes, tags, strict=True):
            for key, label, color in _SERIES:
                keys = [f"{key}.{tag}.{eps_tag(e)}" for e in eps_list]
                ys = [metrics.get(k, float("nan")) for k in keys]
                lo = [metrics.get(f"{k}.lo", float("nan")) for k in keys]
                hi = [metrics.get(f"{k}.hi", float("nan")) for k in keys]
                ax.plot(eps_list, ys, "o-", color=color, label=label)
                ax.fill_between(eps_list, lo, hi, color=color, alpha=0.2)
            ax.set_title(tag)
            ax.set_xlabel("eps")
            ax.set_ylim(-0.02, 1.02)
        axes[0].set_ylabel("rate")
        axes[0].legend(fontsize=7)


def plot_mixtures(
    run_dir: Any,
    cfg: RunConfig,
    tag: str,
    gmms: Mapping[str, PerturbationGMM],
    uaps: Mapping[str, torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
) -> None:
    """``perturbation_samples.png`` (four draws for one test input from each fixed
    distribution, each fitted mixture, and the universal / per-class perturbations) and
    ``mixture_weights.png`` (mean π over ``x``, per form).

    Args:
        run_dir: the run folder.
        cfg: the run's config.
        tag: the model the mixtures were fitted to.
        gmms: fitted mixtures by form.
        uaps: the fitted universal perturbations by kind (``[1 or C, *shape]``).
        x, y: test inputs (the first one is drawn for).
    """
    g = torch.Generator(device=x.device).manual_seed(cfg.seed)
    x0, y0 = x[:1], y[:1]
    rows = [
        (f"{d}", FixedNoise(d, cfg.eps)(x0, y0, 4, g)) for d in ("uniform", "gaussian_official")
    ]
    rows += [(f"NPPR {f}", gmm.sampler(x0, y0, 4, g)) for f, gmm in gmms.items()]
    for kind, delta in uaps.items():
        d = delta[int(y0) if delta.shape[0] > 1 else 0].to(x.device)
        rows.append((f"UAP {kind}", d.expand(4, 1, *d.shape)))
    if x.ndim == 4:
        with figure(
            run_dir.plot_path("perturbation_samples"),
            len(rows),
            4,
            title=f"Perturbations of one test input ({tag}, eps {cfg.eps})",
        ) as (_f, axes):
            for r, (label, d) in enumerate(rows):
                for c in range(4):
                    axes[r, c].imshow(
                        d[c, 0, 0].cpu().numpy(), cmap="RdBu", vmin=-cfg.eps, vmax=cfg.eps
                    )
                    axes[r, c].set_xticks([])
                    axes[r, c].set_yticks([])
                axes[r, 0].set_ylabel(label, fontsize=7)
    with figure(
        run_dir.plot_path("mixture_weights"),
        1,
        len(gmms),
        title=f"Learned mixture weights π ({tag}, floor {cfg.weight_floor}/K)",
    ) as (_f, axes):
        axes = np.atleast_1d(axes)
        for ax, (form, gmm) in zip(axes, gmms.items(), strict=True):
            with torch.no_grad():
                w = gmm(x, y).weights.cpu().numpy()
            ax.bar(range(cfg.k), w.mean(0), yerr=w.std(0), color=PALETTE[0])
            ax.set_title(f"form {form}")
            ax.set_xlabel("component k")
            ax.set_ylim(0, 1)
        axes[0].set_ylabel("mean π_k over test inputs (± sd)")
