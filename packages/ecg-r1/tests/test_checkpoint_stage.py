"""ECG-R1 on a checkpoint (``llm_model``): the path ``full`` runs on SmolLM2-135M-Instruct,
exercised end to end on a small checkpoint folder, and its config checks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from icml26.ecg_r1.config import RunConfig
from icml26.ecg_r1.paper import PROFILES


def test_llm_config_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="llm_grpo_generations"):
        RunConfig(llm_model="x", llm_grpo_generations=1)
    with pytest.raises(ValueError, match="llm_test"):
        RunConfig(llm_model="x", n_test=10, llm_test=20)
    with pytest.raises(ValueError, match="llm_model adds"):
        RunConfig(lm="smollm2-135m-instruct-q4_1", llm_model="smollm2-135m-instruct-q4_1")
    with pytest.raises(ValueError, match="llm_sft_steps"):
        RunConfig(llm_sft_steps=-1)


def test_full_trains_ecg_r1_on_smollm2() -> None:
    full = PROFILES["full"]
    assert full.llm_model == "smollm2-135m-instruct-q4_1"
    assert full.lm == "tiny"  # the tiny-model study still decides the claims


@pytest.mark.slow
def test_checkpoint_stage_reports_ecg_r1_llm_keys(tmp_path: Path) -> None:
    from icml26.ecg_r1.experiment import run
    from icml26.ecg_r1.methods import SPECIAL
    from icml26.shared import RunDir
    from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm, save_tiny_lm

    texts = ["<think> rhythm sinus rate 70 bpm </think> <answer> normal </answer>"] * 4
    lm, tok = make_tiny_lm(
        texts,
        special_tokens=SPECIAL,
        vocab_size=320,
        seed=0,
        config=TinyModelConfig(
            hidden_size=32,
            intermediate_size=64,
            num_layers=1,
            num_heads=4,
            num_kv_heads=2,
            max_positions=512,
        ),
    )
    folder = save_tiny_lm(lm, tok, tmp_path / "lm")
    cfg = replace(
        PROFILES["smoke"],
        llm_model=str(folder),
        llm_sft_steps=2,
        llm_grpo_steps=1,
        llm_grpo_prompts=1,
        llm_grpo_generations=2,
        llm_test=3,
    )
    metrics = run(cfg, RunDir(tmp_path / "run"))
    for key in (
        "diagnosis_jaccard.both.ecg_r1_llm",
        "hallucination_rate.ecg_r1_llm",
        "cross_modal_consistency.ecg_r1_llm",
        "generation_cap.ecg_r1_llm",
        "truncation_rate.ecg_r1_llm",
        "truncation_rate.sft_llm",  # the same checkpoint before GRPO
        "format_rate.sft_llm",
    ):
        assert key in metrics
    assert "diagnosis_jaccard.both.ecg_r1" in metrics
    assert metrics["answer_tokens_p95.ecg_r1_llm"] > 24
    assert metrics["generation_cap.ecg_r1_llm"] == 24  # smoke lowers the measured cap
