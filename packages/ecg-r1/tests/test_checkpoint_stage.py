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


def test_save_policy_merges_lora_into_a_folder_interpret_record_loads(tmp_path: Path) -> None:
    """On a checkpoint ``new_policy`` wraps the model in LoRA; peft's ``save_pretrained``
    writes the adapters alone (no config, no projectors). ``save_policy`` merges them into a
    copy: the folder reloads as the same model and interprets a record."""
    import numpy as np
    import torch
    import wfdb
    from transformers import AutoModelForCausalLM

    from icml26.ecg_r1.data import to_model_signal
    from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
    from icml26.ecg_r1.labels import LEADS
    from icml26.ecg_r1.methods import SPECIAL, PolicySettings, new_policy, save_policy
    from icml26.ecg_r1.model import ECGR1ForCausalLM, EncodedBank
    from icml26.ecg_r1.render import ImageRasteriser
    from icml26.ecg_r1.report import interpret_record
    from icml26.ecg_r1.wavemodel import sample_params, simulate
    from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm, save_tiny_lm

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    c = simulate(sample_params(rng, 2), rng)
    se, ie = SignalEncoder(width=16, n_tokens=4).eval(), ImageEncoder(width=16, n_tokens=4).eval()
    img = (ImageRasteriser(c.fs)(c.signals) * 255).astype(np.uint8)
    bank = EncodedBank.build(se, ie, to_model_signal(c.signals, c.fs), img)
    texts = ["<think> rhythm sinus rate 70 bpm </think> <answer> normal </answer>"] * 4
    config = TinyModelConfig(
        hidden_size=32, intermediate_size=64, num_layers=1, num_heads=4, num_kv_heads=2
    )
    lm, tok = make_tiny_lm(texts, special_tokens=SPECIAL, vocab_size=320, seed=0, config=config)
    folder = save_tiny_lm(lm, tok, tmp_path / "lm")
    model, tok = new_policy(PolicySettings(lm=str(folder)), texts, bank, seed=0)
    base = model.get_base_model()
    assert isinstance(base, ECGR1ForCausalLM)
    assert hasattr(model, "merge_and_unload")
    with torch.no_grad():  # as if trained: adapters and projectors away from their start
        for name, p in model.named_parameters():
            if "lora_B" in name or "sig_proj" in name:
                p.add_(0.05 * torch.randn_like(p))
    base.use_bank(bank)
    ids = torch.tensor([base.prompt_ids(tok, "signal+image", 1)])
    expected = model(input_ids=ids).logits

    model.save_pretrained(tmp_path / "adapters")  # peft's own save: adapters only
    with pytest.raises(FileNotFoundError, match=r"LoRA adapters only.*save_policy"):
        interpret_record(tmp_path / "adapters", tmp_path / "rec", (se, ie))

    out = save_policy(tmp_path / "policy", model, tok, encoders=(se, ie))
    assert hasattr(model, "merge_and_unload")  # the policy keeps its adapters
    assert base.bank is bank
    again = AutoModelForCausalLM.from_pretrained(out).use_bank(bank)
    assert isinstance(again, ECGR1ForCausalLM)
    torch.testing.assert_close(again(input_ids=ids).logits, expected, atol=1e-4, rtol=1e-4)
    x = c.signals[0].T.astype(float)
    wfdb.wrsamp(
        "rec",
        fs=c.fs,
        units=["mV"] * 12,
        sig_name=list(LEADS),
        p_signal=x,
        fmt=["16"] * 12,
        write_dir=str(tmp_path),
    )
    report = interpret_record(out, tmp_path / "rec", max_new_tokens=4)  # encoders from the folder
    assert set(report["interpretation"]) == {"both", "signal_only", "image_only"}
    with pytest.raises(TypeError, match="ECGR1ForCausalLM"):
        save_policy(tmp_path / "bad", lm, tok)
