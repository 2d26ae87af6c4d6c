"""Markdown tables from a run's ``results.json`` (what the README's measured table is made of).

``python -m icml26.eco.report runs/eco/<run>/results.json``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from icml26.eco.config import ALL_SCHEMES

__all__ = ["markdown_tables"]


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown_tables(results: dict[str, Any]) -> str:
    """The per-workload loss/memory table, the lr sweep and the claims, as markdown."""
    m = results["metrics"]
    workloads = [
        w
        for w in ("dense_lm", "moe_lm", "mlp")
        if f"val_loss.{w}.fp32" in m or any(k.startswith(f"val_loss.{w}.") for k in m)
    ]
    schemes = [s for s in ALL_SCHEMES if any(f"val_loss.{w}.{s}" in m for w in workloads)]
    head = "| scheme | bytes/param |" + "".join(f" {w} val loss (gap) |" for w in workloads)
    lines = [head, "|---|---|" + "---|" * len(workloads)]
    for s in schemes:
        row = f"| `{s}` | {_fmt(m.get(f'static_bytes_per_param.{s}'), '.2f')} |"
        for w in workloads:
            val, gap = m.get(f"val_loss.{w}.{s}"), m.get(f"loss_gap_vs_master.{w}.{s}")
            gap_text = "" if gap is None else f" ({100 * gap:+.1f}%)"
            row += f" {_fmt(val, '.4f')}{gap_text} |"
        lines.append(row)
    out = ["\n".join(lines)]
    lrs = sorted(
        (k for k in m if k.startswith("lr_sweep.lr.")), key=lambda k: int(k.rsplit("lr", 1)[1])
    )
    if lrs:
        sweep_schemes = sorted(
            {k.split(".")[2] for k in m if k.startswith("val_loss.lr_sweep.")},
            key=ALL_SCHEMES.index,
        )
        head = "| scheme |" + "".join(f" lr={m[k]:g} |" for k in lrs)
        rows = [head, "|---|" + "---|" * len(lrs)]
        for s in sweep_schemes:
            rows.append(
                f"| `{s}` |"
                + "".join(
                    f" {_fmt(m.get(f'val_loss.lr_sweep.{s}.' + k.rsplit('.', 1)[1]), '.4f')} |"
                    for k in lrs
                )
            )
        out.append("\n".join(rows))
    claims = ["| claim | rule | holds |", "|---|---|---|"]
    for c in results["claims"]:
        claims.append(f"| `{c['id']}` | `{c['rule']}` | **{c['holds']}** |")
    out.append("\n".join(claims))
    return "\n\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print(markdown_tables(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))))
