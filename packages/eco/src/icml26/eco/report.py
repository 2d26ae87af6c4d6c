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
    out.extend(_ablation_tables(m))
    claims = ["| claim | rule | holds |", "|---|---|---|"]
    for c in results["claims"]:
        claims.append(f"| `{c['id']}` | `{c['rule']}` | **{c['holds']}** |")
    out.append("\n".join(claims))
    return "\n\n".join(out)


def _ablation_tables(m: dict[str, Any]) -> list[str]:
    """One table per (workload, ECO scheme) of the ablation stage: ECO's and master's mean
    final loss, ECO's paired relative gap to master (± SE), the change against the default
    (± SE) and the share of the default gap closed."""
    keys = [k.split(".") for k in m if k.startswith("ablation.")]
    pairs = sorted({(k[1], k[2]) for k in keys if len(k) >= 5}, key=lambda p: (p[0], p[1]))
    tables = []
    for w, s in pairs:
        prefix = f"ablation.{w}.{s}."
        names = sorted({k[3] for k in keys if k[1] == w and k[2] == s}, key=_ablation_order)
        rows = [
            f"`{s}` on `{w}` (final loss, mean over paired seeds):",
            "",
            "| ablation | ECO | master | gap to master | Δ vs default | gap closed |",
            "|---|---|---|---|---|---|",
        ]
        for a in names:
            g = {f: m.get(f"{prefix}{a}.{f}") for f in ("eco", "master", "gap", "gap_se")}
            d = {f: m.get(f"{prefix}{a}.{f}") for f in ("delta", "delta_se", "closes")}
            gap = _pm(g["gap"], g["gap_se"], 100, "%")
            delta = "-" if a == "default" else _pm(d["delta"], d["delta_se"], 1, "")
            closes = _closed(d["closes"])
            rows.append(
                f"| `{a}` | {_fmt(g['eco'], '.4f')} | {_fmt(g['master'], '.4f')} | {gap} | "
                f"{delta} | {closes} |"
            )
        tables.append("\n".join(rows))
    return tables


def _closed(share: float | None) -> str:
    if share is None:
        return "-"
    return "widens > 10x" if share < -9 else f"{100 * share:+.0f}%"


def _ablation_order(name: str) -> tuple[int, str]:
    return (0 if name == "default" else 1, name)


def _pm(value: float | None, se: float | None, scale: float, unit: str) -> str:
    if value is None:
        return "-"
    text = f"{scale * value:+.{1 if unit else 4}f}{unit}"
    return text if se is None else f"{text} ± {scale * se:.{1 if unit else 4}f}{unit}"


if __name__ == "__main__":  # pragma: no cover
    print(markdown_tables(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))))
