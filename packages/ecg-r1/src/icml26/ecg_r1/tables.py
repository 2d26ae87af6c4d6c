"""The run's markdown table (``tables.md``): per method, the headline metrics."""

from __future__ import annotations

from typing import Any

from icml26.shared import RunDir

__all__ = ["METHODS", "readme_tables", "tables_markdown", "write_tables"]

#: The table's rows, in order; ``sft_llm`` and ``ecg_r1_llm`` (the SmolLM2 stage before and
#: after GRPO) only where that stage ran.
METHODS = (
    "ecg_r1",
    "sft_only",
    "no_dropout",
    "free_text",
    "no_readout",
    "signal_cnn",
    "rules",
    "sft_llm",
    "ecg_r1_llm",
)
_COLUMNS = (
    ("Jaccard both", "diagnosis_jaccard.both.{}"),
    ("Jaccard signal", "diagnosis_jaccard.signal_only.{}"),
    ("Jaccard image", "diagnosis_jaccard.image_only.{}"),
    ("evidence", "evidence_accuracy.{}"),
    ("hallucination", "hallucination_rate.{}"),
    ("format", "format_rate.{}"),
    ("truncated", "truncation_rate.{}"),
    ("consistency", "cross_modal_consistency.{}"),
)


def tables_markdown(metrics: dict[str, Any]) -> str:
    """One row per method the run measured (:data:`METHODS`), one column per headline metric
    (blank where not measured).

    Args:
        metrics: the run's flat metrics.

    Returns:
        The markdown table.
    """
    head = "| method | " + " | ".join(c for c, _ in _COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(_COLUMNS) + 1)]
    for m in METHODS:
        values = [metrics.get(key.format(m)) for _, key in _COLUMNS]
        if all(v is None for v in values):
            continue
        cells = ["" if v is None else f"{v:.3f}" for v in values]
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def write_tables(run_dir: RunDir, metrics: dict[str, Any]) -> None:
    """Write ``tables.md`` in the run folder."""
    (run_dir.path / "tables.md").write_text(tables_markdown(metrics), encoding="utf-8")


def _fmt(metrics: dict[str, Any], *keys: str) -> str:
    return " / ".join(f"{metrics[k]:.4g}" if k in metrics else "-" for k in keys)


def readme_tables(results: dict[str, Any]) -> str:
    """The README's tables from a run's ``results.json``: per method, then hallucination,
    GRPO, the read-out ablation and the generation caps."""
    m = results.get("metrics", {})
    if "hallucination_rate.ecg_r1" not in m:
        return ""
    h = "hallucination_gap{}.sft_only_minus_ecg_r1"
    rows = [
        "| figure | value |",
        "|---|---|",
        "| hallucination ecg_r1 / sft_only (pooled over seeds) / seed SE of each | "
        + _fmt(
            m,
            "hallucination_rate.ecg_r1",
            "hallucination_rate.sft_only",
            "hallucination_rate_se.ecg_r1",
            "hallucination_rate_se.sft_only",
        )
        + " |",
        "| gap sft_only - ecg_r1 / record-bootstrap SE / z / SE of per-seed gaps | "
        + _fmt(
            m,
            h.format(""),
            h.format("_se"),
            "z.hallucination_sft_only_minus_ecg_r1",
            h.format("_seed_se"),
        )
        + " |",
        "| GRPO reward first / last 2 steps, KL at the last (seed 0) | "
        + _fmt(m, "grpo_reward_first.ecg_r1", "grpo_reward_last.ecg_r1", "grpo_kl_last.ecg_r1")
        + " |",
        "| Jaccard lost without the read-out token | "
        + _fmt(m, "readout_ablation.jaccard_drop")
        + " |",
        "| answer tokens p95 / generation cap / truncation rate: tiny LM; SmolLM2 | "
        + _fmt(m, "answer_tokens_p95.ecg_r1", "generation_cap.ecg_r1", "truncation_rate.ecg_r1")
        + "; "
        + _fmt(
            m,
            "answer_tokens_p95.ecg_r1_llm",
            "generation_cap.ecg_r1_llm",
            "truncation_rate.ecg_r1_llm",
        )
        + " |",
    ]
    return tables_markdown(m) + "\n" + "\n".join(rows) + "\n"
