"""Result tables of a finished run, as Markdown (``tables.md`` in the run folder)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["gains_table", "metric_table"]


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
