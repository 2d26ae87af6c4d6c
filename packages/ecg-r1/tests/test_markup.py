"""On a checkpoint the answer's markup and labels are tokenised by its own vocabulary
(``markup="text"``): no answer token is a new, untrained row; ``"special"`` keeps the old way
(new special tokens trained through peft's trainable tokens)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.ecg_r1.data import to_model_signal
from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
from icml26.ecg_r1.labels import LABELS
from icml26.ecg_r1.methods import PLACEHOLDERS, SPECIAL, PolicySettings, new_policy, sft_targets
from icml26.ecg_r1.model import EncodedBank
from icml26.ecg_r1.probe import markup_spans
from icml26.ecg_r1.protocol import protocol_answer
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.wavemodel import sample_params, simulate
from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm, save_tiny_lm


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, EncodedBank, list]:
    """A tiny Llama saved as a checkpoint whose tokenizer knows none of the protocol's
    tokens (as SmolLM2's), an encoded bank and the records' features."""
    rng = np.random.default_rng(0)
    sim = simulate(sample_params(rng, 3), rng)
    corpus = [protocol_answer(f) for f in sim.features] * 3
    lm, tok = make_tiny_lm(
        corpus,
        vocab_size=400,
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
    folder = save_tiny_lm(lm, tok, tmp_path_factory.mktemp("ckpt") / "lm")
    torch.manual_seed(0)
    sig = to_model_signal(sim.signals, sim.fs)
    img = (ImageRasteriser(sim.fs)(sim.signals) * 255).astype(np.uint8)
    bank = EncodedBank.build(
        SignalEncoder(width=16, n_tokens=4).eval(),
        ImageEncoder(width=16, n_tokens=4).eval(),
        sig,
        img,
    )
    return folder, bank, list(sim.features)


def test_text_markup_answers_use_only_pretrained_rows(checkpoint: tuple) -> None:
    folder, bank, feats = checkpoint
    model, tok = new_policy(PolicySettings(str(folder)), [], bank, seed=0)
    first_new = min(tok.convert_tokens_to_ids(PLACEHOLDERS))
    ids = sft_targets(model, tok, feats)
    assert all(t < first_new or t == tok.eos_token_id for row in ids for t in row)  # type: ignore[union-attr]
    assert not any("trainable_tokens" in n for n, _ in model.named_parameters())
    text = protocol_answer(feats[0])
    assert tok.decode(ids[0][:-1], skip_special_tokens=False) == text  # type: ignore[index]
    assert len(markup_spans(text)) >= 5  # <think>, </think>, <answer>, a label, </answer>


def test_special_markup_trains_new_rows(checkpoint: tuple) -> None:
    folder, bank, feats = checkpoint
    model, tok = new_policy(PolicySettings(str(folder), markup="special"), [], bank, seed=0)
    think, label = tok.convert_tokens_to_ids(["<think>", LABELS[0]])
    row = sft_targets(model, tok, feats[:1])[0]
    assert row is not None
    assert row[0] == think
    assert think >= len(tok) - len(SPECIAL)
    assert label != tok.unk_token_id
    assert any("trainable_tokens" in n for n, _ in model.named_parameters())


def test_markup_must_be_known() -> None:
    with pytest.raises(ValueError, match="markup"):
        PolicySettings("x", markup="xml")


@pytest.mark.slow
def test_probe_reports_lengths_logprobs_and_rates(checkpoint: tuple) -> None:
    from icml26.ecg_r1.probe import ProbeSettings, format_probe

    folder = checkpoint[0]
    s = ProbeSettings(str(folder), n_train=4, n_test=1, sft_steps=1, sft_batch=2, enc_steps=1)
    out = format_probe(s)
    assert out["generation_cap"] >= out["answer_tokens_p95"]
    assert set(out["logprob_after"]) == {"markup", "other"}
    assert 0 <= out["format_rate"] <= 1
    assert 0 <= out["truncation_rate"] <= 1
    assert len(out["texts"]) == 1
