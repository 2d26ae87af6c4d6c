"""The run's metric tree over replicates, against each split's null, and the README tables.

For every ``<metric>.<split>.<method>`` (the contract keys, now means over replicates):

* ``se.<metric>.<split>.<method>``: its standard error over replicates;
* ``chance.<metric>.<split>`` and ``null_sd.<metric>.<split>``: the mean and SD of the metric
  for random rankings of the same pairs (computed by permutation, never assumed);
* ``z.<metric>.<split>.<method>``: ``(mean - chance) / null_sd``;
* ``p.<metric>.<split>.<method>``: the one-sided permutation p-value of the mean against the
  pooled null draws, ``(1 + #{null >= mean}) / (1 + #null)``;
* ``gain.<metric>.<split>.<method>`` (ours, ``random`` and ``corpus_correlation``): the method
  minus the best baseline (for ``corpus_correlation``: the best other baseline), mean over
  replicates, with ``gain_se`` and ``gain_z`` (the gain in null SDs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.scfm_grn.config import BASELINES, CORPUS_BASELINES, METHODS, NULL_METHOD, OURS
from icml26.shared.stats import mean_se

__all__ = ["markdown_table", "readme_tables", "replicate_summary"]


def replicate_summary(replicates: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Means, SEs, chance levels, z-scores, p-values and gains over replicates.

    Args:
        replicates: :func:`icml26.scfm_grn.evaluate.score_replicate` outputs.

    Returns:
        Flat metrics (see the module docstring) and ``replicates``.
    """
    out: dict[str, float] = {"replicates": float(len(replicates))}
    out.update(replicates[0]["sizes"])
    for key in replicates[0]["metrics"]:
        values = [r["metrics"][key] for r in replicates]
        ms = mean_se(values)
        out[key], out[f"se.{key}"] = ms.mean, ms.se
    for mkey in replicates[0]["null"]:
        pooled = np.concatenate([np.asarray(r["null"][mkey]) for r in replicates])
        chance, sd = float(pooled.mean()), float(pooled.std(ddof=1))
        out[f"chance.{mkey}"], out[f"null_sd.{mkey}"] = chance, sd
        metric, split = mkey.split(".")
        for method in METHODS:
            value = out[f"{metric}.{split}.{method}"]
            out[f"z.{metric}.{split}.{method}"] = (value - chance) / sd if sd > 0 else 0.0
            out[f"p.{metric}.{split}.{method}"] = float(
                (1 + np.sum(pooled >= value)) / (1 + pooled.size)
            )
        for method in (*OURS, NULL_METHOD, *CORPUS_BASELINES):
            others = [b for b in BASELINES if b != method]
            gains = [
                r["metrics"][f"{metric}.{split}.{method}"]
                - max(r["metrics"][f"{metric}.{split}.{b}"] for b in others)
                for r in replicates
            ]
            ms = mean_se(gains)
            out[f"gain.{metric}.{split}.{method}"] = ms.mean
            out[f"gain_se.{metric}.{split}.{method}"] = ms.se
            out[f"gain_z.{metric}.{split}.{method}"] = ms.mean / sd if sd > 0 else 0.0
    return out


def _cell(m: Mapping[str, Any], key: str) -> str:
    value, se = m.get(key), m.get(f"se.{key}")
    if not isinstance(value, int | float):
        return "-"
    if isinstance(se, int | float) and not math.isnan(se):
        return f"{value:.3f} ± {se:.3f}"
    return f"{value:.3f}"


def markdown_table(metrics: Mapping[str, Any], metric: str = "balanced_auprc") -> str:
    """One metric, methods x splits, mean ± SE over replicates, with the chance row.

    Args:
        metrics: a run's flat metrics.
        metric: which (``balanced_auprc``, ``auprc_ratio``, ``epr``, ``auroc``, ...).

    Returns:
        Markdown.
    """
    splits = [
        s
        for s in ("seen", "unseen_genes", "unseen_dataset", "krumsiek11", "user")
        if f"chance.{metric}.{s}" in metrics
    ]
    lines = [f"| {metric} | " + " | ".join(splits) + " |", "|---|" + "---:|" * len(splits)]
    for method in METHODS:
        lines.append(
            f"| {method} | "
            + " | ".join(_cell(metrics, f"{metric}.{s}.{method}") for s in splits)
            + " |"
        )
    lines.append(
        "| chance (null SD) | "
        + " | ".join(
            f"{metrics[f'chance.{metric}.{s}']:.3f} ({metrics[f'null_sd.{metric}.{s}']:.3f})"
            for s in splits
        )
        + " |"
    )
    return "\n".join(lines)


def readme_tables(results: Mapping[str, Any]) -> str:
    """The README's tables: balanced AUPRC and AUPRC ratio per method and split.

    Args:
        results: a results object (``results.json``).

    Returns:
        Markdown (empty without the figures).
    """
    m = results.get("metrics", results)
    if "memory.genes" in m:
        return bench_tables(m)
    if "chance.balanced_auprc.seen" not in m:
        return ""
    n = int(m.get("replicates", 0))
    head = (
        f"Mean ± SE over {n} replicates (gene split, translators, negatives); chance = a random "
        "ranking of the same pairs (permutations), with its SD."
    )
    extra = ""
    if "pretrain.variance_explained" in m:
        extra = "\n\n" + pretrain_line(m)
    ratios = "; ".join(
        f"{s} {m[f'auprc_ratio.{s}.ensemble']:.2f} (z {m[f'z.auprc_ratio.{s}.ensemble']:.1f})"
        for s in ("seen", "unseen_genes", "unseen_dataset", "krumsiek11", "user")
        if f"z.auprc_ratio.{s}.ensemble" in m
    )
    tail = f"Ensemble AUPRC ratio (z against a random ranking): {ratios}. Every key: the run's results.json."
    return "\n\n".join([head + extra, markdown_table(m, "balanced_auprc"), tail])


def pretrain_line(m: Mapping[str, Any]) -> str:
    """One sentence on the scFM: masked variance explained on held-out cells (checkpoint and
    validation figure), and per dataset ours beside the two linear references."""
    key = "pretrain.variance_explained"
    corpus, own = f"{key}_corpus_linear", f"{key}_in_dataset_linear"
    knn = f"{key}_in_dataset_knn"
    per = []
    for k, v in m.items():
        name = k.removeprefix(f"{key}.")
        if k.startswith(f"{key}.") and not name.startswith("val"):
            refs = "".join(
                f" / {m[f'{r}.{name}']:.2f}" for r in (corpus, own, knn) if f"{r}.{name}" in m
            )
            per.append(f"{name} {v:.2f}{refs}")
    chosen = ""
    if f"{key}_validation" in m:
        step = f" at step {m['pretrain.best_step']}" if "pretrain.best_step" in m else ""
        chosen = f" (checkpoint chosen on validation datasets: {m[f'{key}_validation']:.3f}{step})"
    refs = ""
    if corpus in m:
        refs = f"; a linear predictor from the pretraining corpus's covariances: {m[corpus]:.3f}"
    return (
        f"scFM: masked variance explained (half of each cell's genes hidden) {m[key]:.3f} on "
        f"the test datasets (no cell of them pretrained on){chosen}{refs}. Per dataset, ours / corpus linear / in-dataset "
        f"references out of an scFM's reach (linear on the dataset's own covariance; kNN "
        f"imputation, k = 10, from its other cells): {', '.join(per)}."
    )


def bench_tables(m: Mapping[str, Any]) -> str:
    """The bench's figures: memory of the restricted path at ``memory.genes`` genes, and
    microseconds per gene pair by method and gene count.

    Args:
        m: a bench run's metrics.

    Returns:
        Markdown.
    """
    memory = (
        f"Memory at {m['memory.genes']:,.0f} genes (sparse counts): {m['memory.selected_genes']:.0f} "
        f"variable genes kept ({m['memory.tfs']:.0f} TFs among them), "
        f"{m['memory.candidate_pairs']:,.0f} TF -> gene pairs; their VVP features take "
        f"{m['memory.features_mib']:.2f} MiB ({m['memory.vvp_cpu_seconds']:.1f} CPU-s) where "
        f"dense all-pairs features would take {m['memory.dense_features_gib']:.1f} GiB; peak "
        f"resident memory of the process {m['memory.peak_rss_mib']:,.0f} MiB"
    )
    extra = [
        f"{name} +{m[f'memory.{name}_extra_peak_mib']:.0f} MiB"
        for name in ("selection", "vvp")
        if f"memory.{name}_extra_peak_mib" in m
    ]
    memory += f" (above the process before each step: {', '.join(extra)})." if extra else "."
    methods = ("vvp", "gt_jvp", "gt_jacrev", "genie3")
    sizes = sorted({int(k.rsplit(".g", 1)[1]) for k in m if k.startswith("us_per_pair.")})
    lines = ["| G genes | " + " | ".join(f"{x} µs/pair" for x in methods) + " |"]
    lines.append("|---:|" + "---:|" * len(methods))
    for g in sizes:
        cells = [
            f"{m[f'us_per_pair.{x}.g{g}']:,.0f}" if f"us_per_pair.{x}.g{g}" in m else "-"
            for x in methods
        ]
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    return memory + "\n\n" + "\n".join(lines)
