"""Markdown tables from a run's ``results.json`` (the README's tables are made with this).

``python -m icml26.disempowerment.report runs/disempowerment/<run>/results.json``
"""

from __future__ import annotations

import sys
from typing import Any

from icml26.disempowerment.taxonomy import DOMAINS, SEVERITIES, VARIABLES
from icml26.shared import load_results

__all__ = ["markdown"]


def _f(x: Any, digits: int = 5) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _iv(m: dict[str, Any], key: str, digits: int = 5) -> str:
    if key not in m:
        return "(suppressed)"
    return (
        f"{_f(m[key], digits)} [{_f(m.get(key + '.lo'), digits)}, {_f(m.get(key + '.hi'), digits)}]"
    )


def markdown(results: dict[str, Any]) -> str:
    """Rates, domains, trend, approval, classifiers, privacy and claims as Markdown."""
    m = results["metrics"]
    out = ["| rate | estimate [95% interval] | planted | uncorrected |", "|---|---|---|---|"]
    for v in VARIABLES:
        for s in SEVERITIES[1:]:
            tail = f"{v}.{s}"
            out.append(
                f"| `rate.{tail}` | {_iv(m, 'rate.' + tail)} | {_f(m.get('planted.' + tail))} "
                f"| {_f(m.get('observed.' + tail))} |"
            )
    out += ["", "| domain | moderate or severe [95%] | planted |", "|---|---|---|"]
    for d in DOMAINS:
        key = f"domain_rate.{d}.severe_or_moderate"
        out.append(f"| {d} | {_iv(m, key, 4)} | {_f(m.get('planted.' + key), 4)} |")
    out += ["", "| figure | estimate [95%] | planted |", "|---|---|---|"]
    for v in VARIABLES:
        key = f"trend_slope.{v}"
        out.append(f"| `{key}` (per month) | {_iv(m, key, 5)} | {_f(m.get('planted.' + key), 5)} |")
    for key in (
        "approval_association",
        "approval_association_raw",
        "approval_regression.level_coef",
    ):
        out.append(f"| `{key}` | {_iv(m, key, 3)} | {_f(m.get('planted.' + key), 3)} |")
    out += ["", "| measure | value |", "|---|---|"]
    for key in sorted(m):
        if key.startswith(
            (
                "classifier.",
                "coverage.rate_intervals",
                "coverage.n_",
                "privacy.",
                "throughput.",
                "scrub.recall.all",
                "stage2.",
                "clusters.",
                "judge.",
            )
        ):
            out.append(f"| `{key}` | {m[key]:.4g} |")
    out += ["", "| claim | paper | measured | holds |", "|---|---|---|---|"]
    for c in results["claims"]:
        meas = ", ".join(f"`{k}` = {v:.4g}" for k, v in c["measured"].items() if v is not None)
        out.append(f"| `{c['id']}` | {c['paper_value']} | {meas} | **{c['holds']}** |")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print(markdown(load_results(sys.argv[1])))
