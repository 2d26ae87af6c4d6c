"""The README's results table, rendered from a run's ``results.json``.

``python -m icml26.nppr.report runs/nppr/<run>/results.json`` prints the markdown tables
(headline metrics per model with 95% intervals, the eps sweep, the claims), so the README
shows exactly what a run measured.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["markdown_tables"]

_ROWS = [
    ("clean accuracy", "clean_acc.{m}"),
    ("AR, PGD", "ar.pgd.{m}"),
    ("AR, AutoAttack (APGD-CE, APGD-T, Square)", "ar.autoattack.{m}"),
    ("PR, uniform", "pr.uniform.{m}"),
    ("PR, Gaussian", "pr.gaussian.{m}"),
    ("PR, Laplace", "pr.laplace.{m}"),
    ("PR, tuned fixed noise", "pr.tuned.{m}"),
    ("NPPR, input-independent (none)", "nppr.none.{m}"),
    ("NPPR, conditioned on x", "nppr.x.{m}"),
    ("NPPR, conditioned on y", "nppr.y.{m}"),
    ("NPPR, conditioned on x and y", "nppr.xy.{m}"),
]


def _cell(metrics: dict[str, Any], key: str) -> str:
    if key not in metrics or metrics[key] is None:
        return "-"
    lo, hi = metrics.get(f"{key}.lo"), metrics.get(f"{key}.hi")
    if lo is None or hi is None:
        return f"{metrics[key]:.3f}"
    return f"{metrics[key]:.3f} [{lo:.3f}, {hi:.3f}]"


def _models(metrics: dict[str, Any]) -> list[str]:
    return sorted(
        {
            k.split(".", 1)[1]
            for k in metrics
            if k.startswith("clean_acc.") and "." not in k.split(".", 1)[1]
        }
    )


def markdown_tables(results: dict[str, Any]) -> str:
    m = results["metrics"]
    models = _models(m)
    eps = results["config"].get("eps")
    lines = [f"Headline: eps = {eps}, mean over test inputs [95% interval].", ""]
    lines.append("| metric | " + " | ".join(f"`{x}`" for x in models) + " |")
    lines.append("|---|" + "---|" * len(models))
    for label, pattern in _ROWS:
        lines.append(
            f"| {label} | " + " | ".join(_cell(m, pattern.format(m=x)) for x in models) + " |"
        )
    lines.append(
        "| NPPR / lowest fixed PR | "
        + " | ".join(f"{m.get(f'nppr_over_pr.{x}', float('nan')):.3f}" for x in models)
        + " |"
    )
    sweep = sorted(
        {
            k.rsplit(".", 1)[1]
            for k in m
            if k.startswith("nppr.none.") and ".eps" in k and not k.endswith((".lo", ".hi"))
        }
    )
    swept_models = [x for x in models if f"nppr.none.{x}.{sweep[0]}" in m] if sweep else []
    if swept_models:
        lines += ["", "Budget sweep (AR by PGD / NPPR none form / PR uniform / PR Gaussian):", ""]
        lines.append(
            "| model | " + " | ".join("eps " + s[3:].replace("p", ".") for s in sweep) + " |"
        )
        lines.append("|---|" + "---|" * len(sweep))
        for x in swept_models:
            cells = []
            for s in sweep:
                vals = [
                    m.get(f"{k}.{x}.{s}")
                    for k in ("ar.pgd", "nppr.none", "pr.uniform", "pr.gaussian")
                ]
                cells.append(" / ".join("-" if v is None else f"{v:.2f}" for v in vals))
            lines.append(f"| `{x}` | " + " | ".join(cells) + " |")
    lines += ["", "| claim | rule | holds |", "|---|---|---|"]
    for c in results.get("claims", []):
        lines.append(f"| `{c['id']}` | `{c['rule']}` | {c['holds']} |")
    secs, cpu = results.get("seconds"), results.get("cpu_seconds")
    lines += [
        "",
        f"Run: profile `{results.get('profile')}`, {secs:.0f} s wall, {cpu or 0:.0f} s CPU.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m icml26.nppr.report RESULTS_JSON", file=sys.stderr)
        return 2
    path = Path(args[0])
    if not path.is_file():
        print(f"{path} does not exist", file=sys.stderr)
        return 2
    print(markdown_tables(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
