"""The README's results tables, rendered from a run's ``results.json``.

``python -m icml26.syvla.report runs/syvla/<run>/results.json`` prints them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from icml26.syvla.paper import METHODS, SPLIT_NAMES

__all__ = ["markdown_tables"]


def _cell(m: dict[str, float], key: str, sem: str | None = None) -> str:
    if key not in m:
        return "-"
    text = f"{m[key]:.3f}"
    if sem is not None and sem in m:
        text += f" ± {m[sem]:.3f}"
    return text


def markdown_tables(results: dict[str, Any]) -> str:
    """Success per split and method, VQA accuracy and update statistics, and the claims."""
    m = results["metrics"]
    methods = [k for k in METHODS if f"success.train.{k}" in m]
    head = "| method | " + " | ".join(SPLIT_NAMES) + " | VQA acc. | update KL | KL std |"
    lines = [head, "|---" * (len(SPLIT_NAMES) + 4) + "|"]
    for k in methods:
        cells = [_cell(m, f"success.{s}.{k}", f"success_sem.{s}.{k}") for s in SPLIT_NAMES]
        cells += [
            _cell(m, f"vqa_accuracy.{k}"),
            _cell(m, f"update_kl.{k}"),
            _cell(m, f"update_variance.{k}"),
        ]
        lines.append(f"| `{k}` | " + " | ".join(cells) + " |")
    lines += ["", "| claim | paper | measured | holds |", "|---|---|---|---|"]
    for c in results.get("claims", []):
        measured = ", ".join(f"{k} = {v:.3f}" for k, v in c.get("measured", {}).items())
        lines.append(f"| `{c['id']}` | {c['paper_value']} | {measured} | {c['holds']} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(markdown_tables(json.loads(Path(sys.argv[1]).read_text())))
