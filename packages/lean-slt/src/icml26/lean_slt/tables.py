"""Markdown tables of a run's metrics (written to ``tables.md`` in the run folder)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["markdown_tables"]


def _f(v: Any, digits: int = 3) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if v != 0 and (abs(v) >= 1e4 or abs(v) < 1e-3):
            return f"{v:.2e}"
        return f"{v:.{digits}g}" if abs(v) >= 1 else f"{v:.{digits}f}"
    return str(v)


def _names(metrics: Mapping[str, Any], prefix: str, suffix: str) -> list[str]:
    pat = re.compile(rf"^{re.escape(prefix)}\.([^.]+)\.{re.escape(suffix)}$")
    return [m.group(1) for k in metrics if (m := pat.match(k))]


def markdown_tables(m: Mapping[str, Any]) -> str:
    """Dudley, concentration, least-squares and Maurey tables of one run.

    Args:
        m: the run's flat metrics.

    Returns:
        Four markdown tables (those of the studies that ran), separated by blank lines.
    """
    out = []
    out.append(
        "| process | n | formal bound | MC E sup [99.9% CI] | exact E sup | bound / MC | "
        "bound / exact | slope bound | slope MC |\n|---|---|---|---|---|---|---|---|---|"
    )
    for p in _names(m, "dudley", "bound"):
        k = f"dudley.{p}"
        out.append(
            f"| {p} | {m[k + '.n']:.0f} | {_f(m[k + '.bound'])} | {_f(m[k + '.mc_sup'], 4)} "
            f"[{_f(m[k + '.lo'], 4)}, {_f(m[k + '.hi'], 4)}] | {_f(m[k + '.truth'], 4)} | "
            f"{_f(m[k + '.ratio'])} | {_f(m[k + '.looseness'])} | {_f(m[k + '.slope_bound'])} | "
            f"{_f(m[k + '.slope_mc'])} |"
        )
    out.append("")
    out.append(
        "| f (1-Lipschitz) | max excess (tail − bound) | MC error | variance-proxy ratio L²_eff/L² ± se |"
        "\n|---|---|---|---|"
    )
    for f in _names(m, "concentration", "max_excess"):
        k = f"concentration.{f}"
        out.append(
            f"| {f} | {_f(m[k + '.max_excess'])} | {_f(m[k + '.mc_error'])} | {_f(m[k + '.tightness'])} ± {_f(m[k + '.tightness_se'], 2)} |"
        )
    out.append("")
    out.append(
        "| setting | fitted exponent ± se (over repetitions) | theorem's exponent | master-bound coverage "
        "(guaranteed) | master bound / error | other |\n|---|---|---|---|---|---|"
    )
    for s in _names(m, "ls_rate", "exponent"):
        k = f"ls_rate.{s}"
        cov = (
            f"{_f(m[k + '.master_coverage'])} (≥ {_f(m[k + '.master_probability'])})"
            if k + ".master_coverage" in m
            else "—"
        )
        loose = _f(m.get(k + ".master_looseness"))
        other = ", ".join(
            f"{name} = {_f(m[k + '.' + name])}"
            for name in ("formal_looseness", "formal_exponent", "slow_rate_ratio", "rate_constant")
            if k + "." + name in m
        )
        out.append(
            f"| {s} | {_f(m[k + '.exponent'])} ± {_f(m[k + '.stderr'], 2)} | "
            f"{_f(m[k + '.theory_exponent'])} | {cov} | {loose} | {other or '—'} |"
        )
    out.append("")
    out.append(
        "| d | log Maurey bound | log packing (certified lower) | log greedy net of samples | "
        "bound / packing |\n|---|---|---|---|---|"
    )
    dims = sorted(int(d[1:]) for d in _names(m, "maurey", "log_bound"))
    for d in dims:
        k = f"maurey.d{d}"
        out.append(
            f"| {d} | {_f(m[k + '.log_bound'])} | {_f(m[k + '.log_packing'])} | "
            f"{_f(m[k + '.log_greedy'])} | {_f(m[k + '.squeeze'])} |"
        )
    return "\n".join(out)
