"""LoRA fine-tuning on transcripts with a tiny random model (offline)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("peft")

from icml26.rmft.envs import parse_env
from icml26.rmft.llm_policy import SCENARIOS, build_messages
from icml26.rmft.llm_train import add_lora, completion_nll, encode_examples, lora_sft
from icml26.rmft.tiny_lm import make_tiny_lm
from icml26.shared.llm import format_chat, load_causal_lm


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm", warm_start_steps=5)


def _pairs(n: int = 6) -> list:
    spec = parse_env("bernoulli_k3_t5")
    return [
        (
            build_messages(SCENARIOS["buttons"], spec, t, np.array([t, 0, 1]), np.array([0, 0, 1])),
            f"Button {t % 3 + 1}. Action: {t % 3 + 1}",
        )
        for t in range(n)
    ]


def test_examples_mask_the_prompt_and_end_in_eos(tiny: Path) -> None:
    _, tok = load_causal_lm(tiny, device="cpu")
    pairs = _pairs(2)
    examples = encode_examples(tok, pairs)
    prompt_text = format_chat(tok, pairs[0][0])
    assert tok.decode(examples[0].prompt) == prompt_text
    assert examples[0].completion[-1] == tok.eos_token_id
    assert tok.decode(examples[0].completion[:-1]) == pairs[0][1]
    with pytest.raises(ValueError, match="empty reply"):
        encode_examples(tok, [(pairs[0][0], "  ")])
    with pytest.raises(ValueError, match="no transcripts"):
        encode_examples(tok, [])


def test_lora_sft_lowers_completion_nll_and_trains_only_adapters(tiny: Path) -> None:
    import torch

    model, tok = load_causal_lm(tiny, device="cpu")
    model = add_lora(model, rank=4, alpha=8)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    examples = encode_examples(tok, _pairs())
    before = completion_nll(model, tok, examples)
    lora_sft(model, tok, examples, steps=8, lr=5e-3, batch_size=6, rng=np.random.default_rng(0))
    after = completion_nll(model, tok, examples)
    assert after < before
    for n, p in model.named_parameters():
        if n in frozen:
            torch.testing.assert_close(p, frozen[n])


def test_lora_needs_adapters(tiny: Path) -> None:
    model, tok = load_causal_lm(tiny, device="cpu")
    for p in model.parameters():
        p.requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        lora_sft(
            model,
            tok,
            encode_examples(tok, _pairs(1)),
            steps=1,
            lr=1e-3,
            batch_size=1,
            rng=np.random.default_rng(0),
        )
    with pytest.raises(ValueError, match="rank"):
        add_lora(model, rank=0)
