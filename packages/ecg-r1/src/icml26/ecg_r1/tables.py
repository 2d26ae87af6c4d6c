"""The run's markdown table (``tables.md``): per method, the headline metrics."""

from __future__ import annotations

from typing import Any

from icml26.shared import RunDir

__all__ = ["METHODS", "readme_tables", "tables_markdown", "write_tables"]

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


_EXTRA = (
    ("hallucination, ecg_r1 (pooled over seeds)", "hallucination_rate.ecg_r1"),
    ("hallucination, sft_only (pooled over seeds)", "hallucination_rate.sft_only"),
    ("seed SE of ecg_r1's rate", "hallucination_rate_se.ecg_r1"),
    ("gap sft_only - ecg_r1", "hallucination_gap.sft_only_minus_ecg_r1"),
    ("its paired record-bootstrap SE", "hallucination_gap_se.sft_only_minus_ecg_r1"),
    ("its z", "z.hallucination_sft_only_minus_ecg_r1"),
    ("SE of the per-seed gaps", "hallucination_gap_seed_se.sft_only_minus_ecg_r1"),
    ("GRPO reward, first 2 steps (seed 0)", "grpo_reward_first.ecg_r1"),
    ("GRPO reward, last 2 steps (seed 0)", "grpo_reward_last.ecg_r1"),
    ("KL to SFT at the last step (seed 0)", "grpo_kl_last.ecg_r1"),
    ("read-out ablation: Jaccard lost without it", "readout_ablation.jaccard_drop"),
    ("SFT answer tokens, 95th percentile", "answer_tokens_p95.ecg_r1"),
    ("generation cap (tokens)", "generation_cap.ecg_r1"),
    ("SmolLM2 answer tokens, 95th percentile", "answer_tokens_p95.ecg_r1_llm"),
    ("SmolLM2 generation cap", "generation_cap.ecg_r1_llm"),
)


def readme_tables(results: dict[str, Any]) -> str:
    """The README's tables from a run's ``results.json``: per method, then hallucination,
    GRPO, the read-out ablation and the generation caps (rows without a figure left out)."""
    metrics = results.get("metrics", {})
    if "hallucination_rate.ecg_r1" not in metrics:
        return ""
    rows = ["| figure | value |", "|---|---|"]
    rows += [f"| {name} | {metrics[key]:.4g} |" for name, key in _EXTRA if key in metrics]
    return tables_markdown(metrics) + "\n" + "\n".join(rows) + "\n"
