"""The run's plots: precision-recall curves per split, VVP and GT trajectories of true edges
against non-edges, krumsiek11's truth beside the ensemble's top edges, and pretraining."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26.shared import PALETTE, figure

__all__ = ["plot_losses", "plot_network", "plot_pr", "plot_trajectories"]


def plot_pr(run_dir: Any, curves: Mapping[str, Mapping[str, Any]]) -> None:
    """``pr_curves.png``: one panel per split (first replicate, first dataset).

    Args:
        run_dir: the run folder.
        curves: ``score_replicate``'s ``curves``.
    """
    from sklearn.metrics import precision_recall_curve

    with figure(
        run_dir.plot_path("pr_curves"), ncols=len(curves), width=3.6 * len(curves), height=3.4
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        for ax, (split, c) in zip(axes, curves.items(), strict=True):
            labels = np.asarray(c["labels"])
            for k, (name, scores) in enumerate(c["scores"].items()):
                p, r, _ = precision_recall_curve(labels, scores)
                lw = 2 if name == "ensemble" else 1
                ax.plot(r, p, color=PALETTE[k % len(PALETTE)], lw=lw, label=name)
            ax.axhline(labels.mean(), color="grey", ls=":", lw=1)
            ax.set(title=split, xlabel="recall", ylabel="precision", ylim=(0, 1.02))
        axes[0].legend(fontsize=7)


def plot_trajectories(
    run_dir: Any,
    labels: NDArray[np.int64],
    vvp: NDArray[np.float32],
    gt: NDArray[np.float32],
    vvp_levels: Sequence[float],
    gt_levels: Sequence[float],
) -> None:
    """``trajectories.png``: mean |VVP| and |GT| of true edges against non-edges.

    Args:
        run_dir: the run folder.
        labels: the training dataset's adjacency ``[G, G]``.
        vvp, gt: its features ``[G, G, F]``.
        vvp_levels, gt_levels: the x axes.
    """
    off = ~np.eye(labels.shape[0], dtype=bool)
    edge, non = (labels == 1) & off, (labels == 0) & off
    panels = (
        ("VVP response", vvp, vvp_levels, "value of gene i"),
        ("Gradient Trajectory", gt, gt_levels, "baseline level"),
    )
    with figure(run_dir.plot_path("trajectories"), ncols=2, width=8, height=3.4) as (_fig, axes):
        for ax, (title, f, xs, xlabel) in zip(axes, panels, strict=True):
            for k, (name, sel) in enumerate((("true edges", edge), ("non-edges", non))):
                mag = np.abs(f[sel])
                mean, sd = mag.mean(axis=0), mag.std(axis=0)
                ax.plot(xs, mean, color=PALETTE[k], label=f"{name} (mean |feature|)")
                ax.fill_between(xs, mean - sd / 2, mean + sd / 2, color=PALETTE[k], alpha=0.2)
            ax.set(title=title, xlabel=xlabel, ylabel="|out_j response|")
        axes[0].legend(fontsize=7)


def plot_network(run_dir: Any, genes: Sequence[str], curve: Mapping[str, Any]) -> None:
    """``network_krumsiek11.png``: the truth beside the ensemble's top-k edges (k = #edges).

    Args:
        run_dir: the run folder.
        genes: krumsiek11's genes.
        curve: the krumsiek11 split's ``curves`` entry (all pairs).
    """
    import networkx as nx

    pairs, labels = np.asarray(curve["pairs"]), np.asarray(curve["labels"])
    p = np.asarray(curve["scores"]["ensemble"])
    k = int(labels.sum())
    truth = nx.DiGraph([(genes[i], genes[j]) for i, j in pairs[labels == 1]])
    pred = nx.DiGraph([(genes[i], genes[j]) for i, j in pairs[np.argsort(-p)[:k]]])
    pos = nx.circular_layout(sorted(genes))
    style = {"node_color": "#dddddd", "node_size": 700, "font_size": 7, "arrowsize": 10}
    with figure(run_dir.plot_path("network_krumsiek11"), ncols=2, width=9, height=4.4) as (
        _fig,
        axes,
    ):
        nx.draw_networkx(truth, pos, ax=axes[0], edge_color="#444444", **style)
        axes[0].set_title(f"krumsiek11 truth ({k} edges)")
        colours = ["#2a9d8f" if truth.has_edge(u, v) else "#e76f51" for u, v in pred.edges]
        nx.draw_networkx(pred, pos, ax=axes[1], edge_color=colours, **style)
        axes[1].set_title(f"ensemble top {k} (green = true)")
        for ax in axes:
            ax.axis("off")


def plot_losses(run_dir: Any, losses: Sequence[float]) -> None:
    """``pretrain_loss.png``: the smoothed masked MSE per step.

    Args:
        run_dir: the run folder.
        losses: one per step.
    """
    if not losses:
        return
    with figure(run_dir.plot_path("pretrain_loss"), width=4.5, height=3.2) as (_fig, ax):
        w = max(1, len(losses) // 50)
        ax.plot(np.convolve(losses, np.ones(w) / w, mode="valid"), color=PALETTE[0])
        ax.set(xlabel="step", ylabel="masked MSE", title="scFM pretraining")
