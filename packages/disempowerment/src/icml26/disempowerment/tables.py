"""Markdown tables of a run's figures (``tables.md`` in the run folder).

``python -m icml26.disempowerment.tables runs/disempowerment/<run>/results.json`` prints them
for a finished run (with its claims).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from icml26.disempowerment.taxonomy import DOMAIN_LABELS, SEVERITIES, VARIABLES
from icml26.shared import RunDir, atomic_write_text, load_results

__all__ = ["markdown", "write_tables"]


def _f(x: Any, digits: int = 5) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _iv(m: Mapping[str, Any], key: str, digits: int = 5) -> str:
    if key not in m:
        return "(suppressed)"
    lo, hi = _f(m.get(key + ".lo"), digits), _f(m.get(key + ".hi"), digits)
    return f"{_f(m[key], digits)} [{lo}, {hi}]"


def _rates(m: Mapping[str, Any], prefix: str = "") -> list[str]:
    out = ["| rate | estimate [95% interval] | planted | uncorrected |", "|---|---|---|---|"]
    for v in VARIABLES:
        for s in SEVERITIES[1:]:
            tail = f"{v}.{s}"
            out.append(
                f"| `{prefix}rate.{tail}` | {_iv(m, prefix + 'rate.' + tail)} "
                f"| {_f(m.get('planted.' + tail))} | {_f(m.get(prefix + 'observed.' + tail))} |"
            )
    return out


def _figures(m: Mapping[str, Any]) -> list[str]:
    out = ["| figure | estimate [95%] | planted |", "|---|---|---|"]
    for d in DOMAIN_LABELS:
        key = f"domain_rate.{d}.severe_or_moderate"
        if key in m:
            out.append(f"| `{key}` | {_iv(m, key, 4)} | {_f(m.get('planted.' + key), 4)} |")
    for v in VARIABLES:
        key = f"trend_slope.{v}"
        out.append(f"| `{key}` (per month) | {_iv(m, key)} | {_f(m.get('planted.' + key))} |")
    for key in (
        "approval_association",
        "approval_association_raw",
        "approval_regression.level_coef",
    ):
        out.append(f"| `{key}` | {_iv(m, key, 3)} | {_f(m.get('planted.' + key), 3)} |")
    return out


def _prefixed(m: Mapping[str, Any], prefixes: tuple[str, ...]) -> list[str]:
    rows = [f"| `{k}` | {m[k]:.4g} |" for k in sorted(m) if k.startswith(prefixes)]
    return ["| measure | value |", "|---|---|", *rows] if rows else []


def tables(m: Mapping[str, Any]) -> str:
    """The run's tables: rates, domain / trend / approval figures, null worlds, scrubbing,
    privacy, classifiers, the judge."""
    parts = [
        _rates(m),
        _figures(m),
        _prefixed(m, ("null_fpr.", "null.n_seeds")),
        _prefixed(
            m, ("scrub.recall.all", "scrub.recall.dev", "scrub.recall.holdout", "scrub.precision")
        ),
        _prefixed(m, ("classifier.", "coverage.", "privacy.", "clusters.", "throughput")),
        _prefixed(m, ("judge.",)),
    ]
    if any(k.startswith("judge.rate.") for k in m):
        parts.append(_rates(m, "judge."))
    return "\n\n".join("\n".join(p) for p in parts if p) + "\n"


def write_tables(run_dir: RunDir, metrics: Mapping[str, Any]) -> Path:
    """Write ``tables.md`` into the run folder."""
    return atomic_write_text(run_dir.path / "tables.md", tables(metrics))


def markdown(results: Mapping[str, Any]) -> str:
    """:func:`tables` of a finished run's ``results.json`` followed by its claims."""
    out = [tables(results["metrics"]), "| claim | measured | holds |", "|---|---|---|"]
    for c in results["claims"]:
        meas = ", ".join(f"`{k}` = {v:.4g}" for k, v in c["measured"].items() if v is not None)
        out.append(f"| `{c['id']}` | {meas} | **{c['holds']}** |")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print(markdown(load_results(sys.argv[1])))
