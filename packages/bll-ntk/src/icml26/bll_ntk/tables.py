"""Result tables of a finished run, as Markdown (``tables.md`` in the run folder)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["diagnostics_table", "gains_table", "metric_table", "tables_markdown"]

#: Column order of the methods.
METHOD_ORDER = (
    "map",
    "bll",
    "ntk_bll",
    "ntk_bll_shared",
    "ntk_bll_sub",
    "ll_laplace",
    "lla",
    "ensemble",
    "mc_dropout",
)


def _fmt(value: float | None, se: float | None = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value:.3f}" if abs(value) >= 0.01 or value == 0 else f"{value:.4f}"
    if se is not None and not math.isnan(se):
        text += f" ± {se:.3f}" if abs(se) >= 0.001 else f" ± {se:.1e}"
    return text


def metric_table(
    metrics: Mapping[str, float],
    rows: Sequence[tuple[str, str]],
    methods: Sequence[str],
) -> str:
    """A Markdown table: one row per (metric, data set), one column per method, mean ± SE.

    Args:
        metrics: the run's flat metrics.
        rows: ``(metric, data set)`` pairs.
        methods: column order.

    Returns:
        The table.
    """
    lines = ["| metric | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for metric, where in rows:
        cells = [
            _fmt(metrics.get(f"{metric}.{where}.{m}"), metrics.get(f"{metric}_se.{where}.{m}"))
            for m in methods
        ]
        if any(c != "–" for c in cells):
            lines.append(f"| {metric} {where} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gains_table(
    metrics: Mapping[str, float], rows: Sequence[tuple[str, str]], methods: Sequence[str]
) -> str:
    """Paired gains over BLL (> 0: better), ``gain ± SE``, one column per method.

    Args:
        metrics: the run's flat metrics.
        rows: ``(metric, data set or group)`` pairs.
        methods: column order.

    Returns:
        The table.
    """
    lines = ["| gain over bll | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for metric, where in rows:
        cells = [
            _fmt(
                metrics.get(f"gain.{metric}.{where}.{m}"),
                metrics.get(f"gain_se.{metric}.{where}.{m}"),
            )
            for m in methods
        ]
        if any(c != "–" for c in cells):
            lines.append(f"| {metric} {where} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def diagnostics_table(metrics: Mapping[str, float], sets: Sequence[str]) -> str:
    """Per data set: ``tr M / D``, the median NTK-BLL / BLL variance ratio (test inputs for
    regression, each OOD set for classification), the variance-guarantee fraction and the
    chosen prior precisions of BLL and NTK-BLL.

    Args:
        metrics: the run's flat metrics.
        sets: data sets.

    Returns:
        The table.
    """
    lines = [
        "| set | tr M / D | var ratio (median, ntk / bll) | var >= bll | alpha bll | alpha ntk_bll |",
        "|---|---|---|---|---|---|",
    ]
    for s in sets:
        ratios = {k.split(".", 1)[1]: v for k, v in metrics.items() if k.startswith("var_ratio.")}
        mine = [f"{w} {v:.3f}" for w, v in ratios.items() if w == s or w.startswith(s + "_")]
        lines.append(
            f"| {s} | {_fmt(metrics.get(f'trace_ratio.{s}'))} | {', '.join(mine) or '–'} | "
            f"{_fmt(metrics.get(f'var_ge_bll_fraction.{s}'))} | "
            f"{_fmt(metrics.get(f'alpha.{s}.bll'))} | {_fmt(metrics.get(f'alpha.{s}.ntk_bll'))} |"
        )
    return "\n".join(lines)


def _bandit_table(metrics: Mapping[str, float]) -> str:
    policies = [k.split(".", 1)[1] for k in metrics if k.startswith("bandit_regret.")]
    if not policies:
        return ""
    lines = [
        "| policy | regret ± SE | ratio to bll | paired gain over bll ± SE | outer ring found | "
        "tr M / D | posterior var ratio to bll | prior share of precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in policies:
        lines.append(
            f"| {p} | {_fmt(metrics[f'bandit_regret.{p}'], metrics.get(f'bandit_regret_se.{p}'))} | "
            f"{_fmt(metrics.get(f'bandit_regret_ratio.{p}'))} | "
            f"{_fmt(metrics.get(f'bandit_regret_gain.{p}'), metrics.get(f'bandit_regret_gain_se.{p}'))} | "
            f"{_fmt(metrics.get(f'bandit_outer_found.{p}'))} | "
            f"{_fmt(metrics.get(f'bandit_trace_ratio.{p}'))} | "
            f"{_fmt(metrics.get(f'bandit_var_ratio.{p}'))} | "
            f"{_fmt(metrics.get(f'bandit_prior_share.{p}'))} |"
        )
    return "\n".join(lines)


def _cost_table(metrics: Mapping[str, float], sets: Sequence[str]) -> str:
    rows = [s for s in sets if f"cost_seconds.{s}.ntk_bll" in metrics]
    if not rows:
        return ""
    lines = [
        "| set | ntk_bll s (median) | lla s (median) | ratio | training steps (validation) |",
        "|---|---|---|---|---|",
    ]
    for s in rows:
        lines.append(
            f"| {s} | {_fmt(metrics.get(f'cost_seconds.{s}.ntk_bll'))} | "
            f"{_fmt(metrics.get(f'cost_seconds.{s}.lla'))} | "
            f"{_fmt(metrics.get(f'cost_ratio.{s}.ntk_bll'))} | "
            f"{_fmt(metrics.get(f'train_steps.{s}'))} |"
        )
    return "\n".join(lines)


def tables_markdown(metrics: Mapping[str, float], sets: Sequence[str]) -> str:
    """Every table of a run (``tables.md``): metrics, paired gains, diagnostics, bandit.

    Args:
        metrics: the run's flat metrics.
        sets: the data sets (regression, then classification).

    Returns:
        Markdown.
    """
    methods = [m for m in METHOD_ORDER if any(k.endswith("." + m) for k in metrics)]
    groups = [*sets, "regression", "classification", "all"]
    rows = [(k, s) for s in [*sets, "regression"] for k in ("nll", "rmse", "accuracy", "ece")]
    gain_rows = [(k, g) for g in groups for k in ("nll", "ece", "ood_auroc", "ood_auroc_var")]
    ood = sorted({k.split(".")[1] for k in metrics if k.startswith("ood_auroc.")})
    ood_rows = [(k, o) for o in ood for k in ("ood_auroc", "ood_auroc_var")]
    parts = [
        "## Test metrics (mean ± SE over splits / seeds)",
        metric_table(metrics, rows, methods),
        "## OOD AUROC (entropy; epistemic variance)",
        metric_table(metrics, ood_rows, methods),
        "## Paired gains over BLL (> 0: better; SE over splits / seeds)",
        gains_table(metrics, gain_rows, methods),
        "## The projection: size of the correction",
        diagnostics_table(metrics, sets),
        "## Wheel bandit (NeuralLinear, Thompson sampling)",
        _bandit_table(metrics),
        "## Cost: fit + predict seconds on the first split / seed (medians of repeats)",
        _cost_table(metrics, sets),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"
