"""RMFT's LLM fine-tuning on the shared path: the tiny policy model, transcripts as chat
conversations, the assistant-only loss on the replies (offline)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("peft")

from icml26.rmft.envs import parse_env
from icml26.rmft.llm_model import as_conversations, make_tiny_policy_lm
from icml26.rmft.llm_policy import SCENARIOS, build_messages
from icml26.shared.llm import load_causal_lm
from icml26.shared.llm.sft import SFTSettings, add_lora, completion_nll, encode_chats, sft


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_policy_lm(tmp_path_factory.mktemp("tiny") / "lm", warm_start_steps=5)


def _pairs(n: int = 6) -> list:
    spec = parse_env("bernoulli_k3_t5")
    return [
        (
            build_messages(SCENARIOS["buttons"], spec, t, np.array([t, 0, 1]), np.array([0, 0, 1])),
            f"Button {t % 3 + 1}. Action: {t % 3 + 1}",
        )
        for t in range(n)
    ]


def test_only_the_reply_and_its_end_token_are_trained(tiny: Path) -> None:
    _, tok = load_causal_lm(tiny, device="cpu")
    pairs = _pairs(2)
    [example, _] = encode_chats(tok, as_conversations(pairs))
    trained = [i for i, m in zip(example.input_ids, example.loss_mask, strict=True) if m]
    assert trained[-1] == tok.eos_token_id
    assert tok.decode(trained[:-1]) == pairs[0][1]
    with pytest.raises(ValueError, match="empty assistant reply"):
        encode_chats(tok, as_conversations([(pairs[0][0], "  ")]))
    with pytest.raises(ValueError, match="no transcripts"):
        as_conversations([])


def test_lora_sft_lowers_reply_nll_and_trains_only_adapters(tiny: Path) -> None:
    import torch

    model, tok = load_causal_lm(tiny, device="cpu")
    model = add_lora(model, rank=4, alpha=8)
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    conversations = as_conversations(_pairs())
    examples = encode_chats(tok, conversations)
    before = completion_nll(model, tok, examples)
    sft(
        model,
        tok,
        conversations,
        SFTSettings(steps=8, lr=5e-3, batch_size=6, engine="loop"),
        rng=np.random.default_rng(0),
    )
    assert completion_nll(model, tok, examples) < before
    for n, p in model.named_parameters():
        if n in frozen:
            torch.testing.assert_close(p, frozen[n])


def test_lora_needs_adapters(tiny: Path) -> None:
    model, tok = load_causal_lm(tiny, device="cpu")
    for p in model.parameters():
        p.requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        sft(model, tok, as_conversations(_pairs(1)), SFTSettings(steps=1, batch_size=1))
    with pytest.raises(ValueError, match="rank"):
        add_lora(model, rank=0)
