"""Result tables of a finished run, as Markdown (``tables.md`` in the run folder)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["tables_markdown"]

_MODELS = ("tnp", "inctnp", "gp_oracle", "gp_prior")


def _fmt(value: float | None, se: float | None = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value:.3f}"
    if se is not None and not math.isnan(se) and se > 0:
        text += f" ± {se:.3f}"
    return text


def _predictive(metrics: Mapping[str, float], tasks: Sequence[str]) -> str:
    lines = ["| task | regime | " + " | ".join(_MODELS) + " |", "|---" * (len(_MODELS) + 2) + "|"]
    for task in [*tasks, None]:
        for regime in ("targets", "converged"):
            where = f"{task}.{regime}" if task else regime
            cells = [
                _fmt(metrics.get(f"nll.{where}.{m}"), metrics.get(f"nll_se.{where}.{m}"))
                for m in _MODELS
            ]
            lines.append(f"| {task or 'mean'} | {regime} | " + " | ".join(cells) + " |")
    for regime in ("targets", "converged"):
        cells = [
            _fmt(metrics.get(f"gap.nll.{regime}.{m}"), metrics.get(f"gap_se.nll.{regime}.{m}"))
            for m in _MODELS
        ]
        lines.append(f"| gap to TNP-D | {regime} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _bayes(metrics: Mapping[str, float], tasks: Sequence[str]) -> str:
    lines = [
        "| task | measure | " + " | ".join(_MODELS) + " |",
        "|---" * (len(_MODELS) + 2) + "|",
    ]
    for task in [*tasks, "all"]:
        for measure in ("exchangeability_kl", "implicit_bayes_gap"):
            cells = [
                _fmt(metrics.get(f"{measure}.{task}.{m}"), metrics.get(f"{measure}_se.{task}.{m}"))
                for m in _MODELS
            ]
            lines.append(f"| {task} | {measure} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _training(metrics: Mapping[str, float], groups: Sequence[str]) -> str:
    lines = [
        "| group | model | steps | targets seen | converged (share of seeds) | budget step |",
        "|---|---|---|---|---|---|",
    ]
    for g in groups:
        for m in ("tnp", "inctnp"):
            lines.append(
                f"| {g} | {m} | {_fmt(metrics.get(f'steps.{g}.{m}'))} | "
                f"{metrics.get(f'targets_seen.{g}.{m}', float('nan')):.0f} | "
                f"{_fmt(metrics.get(f'converged.{g}.{m}'))} | "
                f"{_fmt(metrics.get(f'budget_step.{g}.{m}'))} |"
            )
    return "\n".join(lines)


def _latency(metrics: Mapping[str, float]) -> str:
    sizes = sorted({int(k.rsplit(".n", 1)[1]) for k in metrics if k.startswith("update_ms.tnp.n")})
    lines = [
        "| N | TNP-D ms (q25–q75) | incTNP ms (q25–q75) | speedup (medians) | speedup (q25/q75) |",
        "|---|---|---|---|---|",
    ]
    for n in sizes:
        t = [metrics.get(f"update_ms{s}.tnp.n{n}") for s in ("", "_q25", "_q75")]
        i = [metrics.get(f"update_ms{s}.inctnp.n{n}") for s in ("", "_q25", "_q75")]
        lines.append(
            f"| {n} | {_fmt(t[0])} ({_fmt(t[1])}–{_fmt(t[2])}) | {_fmt(i[0])} "
            f"({_fmt(i[1])}–{_fmt(i[2])}) | {_fmt(metrics.get(f'speedup.n{n}'))} | "
            f"{_fmt(metrics.get(f'speedup_low.n{n}'))} |"
        )
    for m in ("tnp", "inctnp"):
        slope = _fmt(metrics.get(f"scaling_exponent.{m}"), metrics.get(f"scaling_exponent_se.{m}"))
        lines.append(f"\nLog-log slope {m}: {slope}")
    return "\n".join(lines)


def tables_markdown(
    metrics: Mapping[str, float], groups: Sequence[str], tasks: Sequence[str]
) -> str:
    """Every table of a run: predictive NLL ± SE per regime, the gaps to TNP-D, the
    implicit-Bayes measures, training (steps, targets, convergence) and update latency.

    Args:
        metrics: the run's flat metrics.
        groups: the task groups trained.
        tasks: the evaluation tasks.

    Returns:
        Markdown.
    """
    parts = [
        "## Test NLL per target point (mean ± SE over seeds)",
        _predictive(metrics, tasks),
        "## Implicit Bayesianness (converged models, one-at-a-time streaming)",
        _bayes(metrics, tasks),
        "## Training",
        _training(metrics, groups),
        "## Update latency (medians and quartiles over repeats in one run)",
        _latency(metrics),
    ]
    return "\n\n".join(parts) + "\n"
