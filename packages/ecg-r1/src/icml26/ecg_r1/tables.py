"""The run's markdown table (``tables.md``): per method, the headline metrics."""

from __future__ import annotations

from typing import Any

from icml26.shared import RunDir

__all__ = ["METHODS", "tables_markdown", "write_tables"]

METHODS = ("ecg_r1", "sft_only", "no_dropout", "free_text", "no_readout", "signal_cnn", "rules")
_COLUMNS = (
    ("Jaccard both", "diagnosis_jaccard.both.{}"),
    ("Jaccard signal", "diagnosis_jaccard.signal_only.{}"),
    ("Jaccard image", "diagnosis_jaccard.image_only.{}"),
    ("evidence", "evidence_accuracy.{}"),
    ("hallucination", "hallucination_rate.{}"),
    ("format", "format_rate.{}"),
    ("consistency", "cross_modal_consistency.{}"),
)


def tables_markdown(metrics: dict[str, Any]) -> str:
    """One row per method, one column per headline metric (blank where not measured)."""
    head = "| method | " + " | ".join(c for c, _ in _COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(_COLUMNS) + 1)]
    for m in METHODS:
        cells = []
        for _, key in _COLUMNS:
            v = metrics.get(key.format(m))
            cells.append("" if v is None else f"{v:.3f}")
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def write_tables(run_dir: RunDir, metrics: dict[str, Any]) -> None:
    """Write ``tables.md`` in the run folder."""
    (run_dir.path / "tables.md").write_text(tables_markdown(metrics), encoding="utf-8")
