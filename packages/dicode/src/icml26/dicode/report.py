"""The README's results tables, rendered from a run's ``results.json`` (never typed by hand).

``python -m icml26.dicode.report runs/dicode/<run>/results.json`` prints them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from icml26.dicode.config import METHODS
from icml26.dicode.tech import ACHIEVEMENTS
from icml26.shared.results import load_results

__all__ = ["markdown_tables"]


def _f(x: Any, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def markdown_tables(results: dict[str, Any]) -> str:
    """Returns, AUC and achievement success per method, the curriculum figures and claims."""
    m = results["metrics"]
    methods = [x for x in METHODS if f"return.{x}" in m]
    lines = [
        f"profile `{results['profile']}`, {results['seconds']:.0f} s wall, "
        f"{results.get('cpu_seconds', float('nan')):.0f} s CPU, "
        f"{m['env_steps_per_method']:.0f} env steps per method and seed",
        "",
        "| method | return (95% interval) | AUC | deepest success (iron, iron tools, diamond) |",
        "|---|---|---|---|",
    ]
    for x in methods:
        lo, hi = m.get(f"return.{x}.lo"), m.get(f"return.{x}.hi")
        ci = f" ({_f(lo)}, {_f(hi)})" if lo is not None else ""
        lines.append(
            f"| `{x}` | {_f(m[f'return.{x}'])}{ci} | {_f(m[f'auc.{x}'])} | "
            f"{_f(m[f'deep_success.{x}'], 3)} |"
        )
    lines += ["", "| achievement | " + " | ".join(f"`{x}`" for x in methods) + " |"]
    lines.append("|---" * (len(methods) + 1) + "|")
    for a in ACHIEVEMENTS:
        row = " | ".join(_f(m[f"achievement_success.{a}.{x}"], 3) for x in methods)
        lines.append(f"| {a} | {row} |")
    extra = [
        k
        for k in sorted(m)
        if k.startswith(("program_valid_rate", "craftax."))
        or k
        in (
            "archive_size",
            "frontier_fraction",
            "steps_per_second",
            "recompiles_after_warmup",
            "return_gain_over_strongest_baseline",
        )
    ]
    lines += ["", "| figure | value |", "|---|---|"]
    lines += [f"| `{k}` | {_f(m[k], 3)} |" for k in extra]
    lines += ["", "| claim | paper | holds |", "|---|---|---|"]
    for c in results["claims"]:
        lines.append(f"| `{c['id']}` | {c['paper_value']} | {c['holds']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m icml26.dicode.report RESULTS_JSON", file=sys.stderr)
        return 2
    print(markdown_tables(load_results(Path(args[0]))), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
