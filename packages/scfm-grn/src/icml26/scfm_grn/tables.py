"""Markdown tables of a run's metrics (``python -m icml26.scfm_grn.table runs/.../results.json``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from icml26.scfm_grn.paper import METHODS, SPLITS

__all__ = ["markdown_table"]


def markdown_table(metrics: Mapping[str, Any], metric: str = "balanced_auprc") -> str:
    """One row per method, one column per split, for ``metric``."""
    splits = [s for s in (*SPLITS, "user") if f"{metric}.{s}.ensemble" in metrics]
    lines = [
        f"| {metric} | " + " | ".join(splits) + " |",
        "|---|" + "---:|" * len(splits),
    ]
    for method in METHODS:
        cells = [f"{metrics[f'{metric}.{s}.{method}']:.3f}" for s in splits]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m icml26.scfm_grn.table results.json [metric ...]", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        metrics = json.load(fh)["metrics"]
    for metric in args[1:] or ["balanced_auprc", "auprc_ratio", "epr", "auroc"]:
        print(markdown_table(metrics, metric) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
