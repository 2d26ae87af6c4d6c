"""Modality dropout's rates, the placeholder embedding, generation against the training
forward pass, the record index invisible to the model, save/load, SFT, and GRPO through the
shared TRL path with the KL reference holding the bank."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from icml26.ecg_r1.data import to_model_signal
from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
from icml26.ecg_r1.labels import LABELS
from icml26.ecg_r1.model import (
    CONFIGS,
    RECORD_DIGITS,
    ECGR1ForCausalLM,
    EncodedBank,
    ModalityDropout,
)
from icml26.ecg_r1.protocol import protocol_answer
from icml26.ecg_r1.render import ImageRasteriser
from icml26.ecg_r1.train import SFTSettings, answer_ids, train_grpo, train_sft
from icml26.ecg_r1.wavemodel import sample_params, simulate
from icml26.shared.llm.grpo import GRPOSettings
from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm

SPECIAL = [
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<sig>",
    "<img>",
    *RECORD_DIGITS,
    *LABELS,
]


def test_dropout_rates_over_many_batches() -> None:
    rng = np.random.default_rng(0)
    d = ModalityDropout(0.5, 0.1)
    draws = [c for _ in range(200) for c in d.sample(rng, 100)]
    n = len(draws)
    counts = {c: draws.count(c) for c in CONFIGS}
    sd = np.sqrt(0.25 * 0.75 / n)  # of a 0.25 share
    assert abs(counts["signal"] / n - 0.25) < 5 * sd
    assert abs(counts["image"] / n - 0.25) < 5 * sd
    both = counts["signal+image"] + counts["image+signal"]
    assert abs(counts["image+signal"] / both - 0.1) < 5 * np.sqrt(0.09 / both)
    assert set(ModalityDropout(0.0, 0.0).sample(rng, 500)) == {"signal+image"}
    with pytest.raises(ValueError, match="p_drop"):
        ModalityDropout(1.5)


@pytest.fixture(scope="module")
def setup() -> tuple:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    c = simulate(sample_params(rng, 6), rng)
    sig = to_model_signal(c.signals, c.fs)
    img = (ImageRasteriser(c.fs)(c.signals) * 255).astype(np.uint8)
    bank = EncodedBank.build(
        SignalEncoder(width=16, n_tokens=4).eval(),
        ImageEncoder(width=16, n_tokens=4).eval(),
        sig,
        img,
    )
    texts = [protocol_answer(f) for f in c.features]
    config = TinyModelConfig(
        hidden_size=32, intermediate_size=64, num_heads=4, num_kv_heads=2, max_positions=512
    )
    lm, tok = make_tiny_lm(texts, special_tokens=SPECIAL, vocab_size=400, config=config)
    model = ECGR1ForCausalLM.from_lm(
        lm, tok, sig_width=16, img_width=16, read_dim=bank.sig_read.shape[1], n_sig=4, n_img=4
    )
    return model.use_bank(bank), tok, bank, c, texts


def test_placeholders_carry_the_modality_embeddings(setup: tuple) -> None:
    model, tok, _, _, _ = setup
    rows = [
        model.prompt_ids(tok, layout, r)
        for layout, r in (("signal+image", 0), ("image", 1), ("signal", 2))
    ]
    assert len({len(r) for r in rows[1:]}) == 1
    sig, img = model.modality_embeddings([0, 1, 2])
    for i, row in enumerate(rows):
        ids = torch.tensor([row])
        emb = model.embed(ids)[0]
        if i != 1:
            torch.testing.assert_close(emb[ids[0] == model.config.sig_id], sig[i])
        if i != 2:
            torch.testing.assert_close(emb[ids[0] == model.config.img_id], img[i])
        digits = torch.isin(ids[0], torch.tensor(model.config.digit_ids))
        assert digits.sum() == 5
        assert emb[digits].abs().sum() == 0
    p = model.prompt_ids(tok, "image+signal", 0)
    assert p.index(model.config.img_id) < p.index(model.config.sig_id)


def test_record_index_reaches_no_layer(setup: tuple) -> None:
    """The same encoded record under two indices gives the same logits."""
    model, tok, bank, _, _ = setup
    twice = EncodedBank(
        *(
            torch.cat([x, x[:1]])
            for x in (bank.sig_tokens, bank.sig_read, bank.img_tokens, bank.img_read)
        )
    )
    model.use_bank(twice)
    a = model(torch.tensor([model.prompt_ids(tok, "signal+image", 0)])).logits
    b = model(torch.tensor([model.prompt_ids(tok, "signal+image", len(bank))])).logits
    model.use_bank(bank)
    torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="outside the attached bank"):
        model(torch.tensor([model.prompt_ids(tok, "signal", 99)]))


def test_generation_scores_equal_the_training_forward(setup: tuple) -> None:
    """Left-padded sampling from the cache and one padded forward pass over prompt +
    completion give the same next-token log-probabilities (so TRL's loss scores the policy
    that sampled), and placeholders are never generated."""
    model, tok, _, _, _ = setup
    rows = [model.prompt_ids(tok, c, i) for i, c in enumerate(["signal+image", "image", "signal"])]
    w = max(len(r) for r in rows)
    ids = torch.tensor([[tok.pad_token_id] * (w - len(r)) + r for r in rows])
    attn = (torch.arange(w)[None] >= torch.tensor([w - len(r) for r in rows])[:, None]).long()
    torch.manual_seed(0)
    out = model.generate(
        input_ids=ids,
        attention_mask=attn,
        max_new_tokens=10,
        do_sample=True,
        output_logits=True,
        return_dict_in_generate=True,
        pad_token_id=tok.pad_token_id,
    )
    seq = out.sequences
    gen_lp = torch.stack([torch.log_softmax(s, -1) for s in out.logits], 1)  # raw: no top-k
    full_attn = torch.cat([attn, torch.ones_like(seq[:, w:])], 1)
    with torch.no_grad():
        logits = model(input_ids=seq, attention_mask=full_attn).logits[:, w - 1 : -1]
    fwd_lp = torch.log_softmax(logits, -1)
    tokens = seq[:, w:, None]
    torch.testing.assert_close(
        gen_lp.gather(-1, tokens), fwd_lp.gather(-1, tokens), atol=1e-4, rtol=1e-4
    )
    banned = [model.config.sig_id, model.config.img_id, *model.config.digit_ids]
    assert not torch.isin(seq[:, w:], torch.tensor(banned)).any()


def test_save_pretrained_round_trip(setup: tuple, tmp_path) -> None:
    model, tok, bank, _, _ = setup
    model.save_pretrained(tmp_path)
    again = AutoModelForCausalLM.from_pretrained(tmp_path).use_bank(bank)
    assert isinstance(again, ECGR1ForCausalLM)
    ids = torch.tensor([model.prompt_ids(tok, "signal+image", 3)])
    torch.testing.assert_close(again(ids).logits, model(ids).logits)
    with pytest.raises(RuntimeError, match="use_bank"):
        AutoModelForCausalLM.from_pretrained(tmp_path)(ids)


def test_sft_lowers_the_loss_and_skips_records_without_targets(setup: tuple) -> None:
    model, tok, bank, _, texts = setup
    ids = answer_ids(model, tok, texts)
    assert ids[0][-1] == tok.eos_token_id
    targets = [None, *ids[1:]]
    losses = train_sft(
        model,
        tok,
        bank,
        targets,
        SFTSettings(steps=8, batch_size=4, lr=1e-2),
        dropout=ModalityDropout(),
        rng=np.random.default_rng(0),
    )
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="no record has an SFT target"):
        train_sft(
            model,
            tok,
            bank,
            [None] * len(bank),
            SFTSettings(steps=1),
            dropout=ModalityDropout(),
            rng=np.random.default_rng(0),
        )


def test_grpo_runs_through_the_shared_trl_path_with_kl(setup: tuple) -> None:
    model, tok, bank, c, _ = setup
    settings = GRPOSettings(
        steps=1,
        prompts_per_step=2,
        num_generations=2,
        max_completion_length=8,
        lr=1e-4,
        beta=0.1,
        temperature=0.7,
        loss_type="dapo",
        reward_weights=(1.0, 1.0, 0.5),
    )
    before = {k: v.clone() for k, v in model.state_dict().items()}
    history = train_grpo(
        model,
        tok,
        bank,
        [f.as_dict() for f in c.features],  # dicts, as a datasets column or JSON gives them
        settings,
        dropout=ModalityDropout(),
        rng=np.random.default_rng(0),
    )
    assert len(history) == 1
    assert {"rewards/diagnosis/mean", "rewards/evidence/mean", "rewards/format/mean", "kl"} <= set(
        history[0]
    )
    assert history[0]["kl"] is not None
    assert np.isfinite(history[0]["kl"])
    model.load_state_dict(before)


def test_grpo_dataset_takes_features_or_their_dicts(setup: tuple) -> None:
    from icml26.ecg_r1.train import grpo_dataset

    model, _, _, c, _ = setup

    def rows(truths: list) -> list:
        return grpo_dataset(
            model, truths, 5, dropout=ModalityDropout(), rng=np.random.default_rng(3)
        )

    assert rows([f.as_dict() for f in c.features]) == rows(list(c.features))
    with pytest.raises(TypeError, match="record 1 must be Features or a dict"):
        rows([c.features[0], "hr=70"])
    with pytest.raises(KeyError):
        rows([{"hr": 70.0}])


def test_generation_cap_covers_the_95th_percentile() -> None:
    from icml26.ecg_r1.methods import generation_cap

    lengths = list(range(1, 101))
    cap, p95 = generation_cap(lengths, floor=16)
    assert p95 == pytest.approx(np.percentile(lengths, 95))
    assert cap >= p95
    assert sum(n > cap for n in lengths) == 0
    assert generation_cap([3, 4], floor=16)[0] == 16


def test_run_caps_generation_at_the_measured_p95(setup: tuple) -> None:
    """The cap a method generates with is :func:`generation_cap` of its own SFT answers'
    token lengths (at least their p95); ``max_new_tokens`` lowers it only when set."""
    from dataclasses import replace

    from icml26.ecg_r1.methods import (
        PROMPT,
        MethodInputs,
        MethodSpec,
        PolicySettings,
        generation_cap,
        new_policy,
        run_llm_method,
    )

    _, _, bank, c, texts = setup
    inputs = MethodInputs(
        policy=PolicySettings(hidden=32, layers=1, vocab_size=400),
        sft=SFTSettings(steps=1, batch_size=2, lr=1e-3),
        grpo=None,
        drop=ModalityDropout(0.0, 0.0),
        train=None,  # read by GRPO only
        targets=list(c.features),
        banks=(bank, bank),
        n_eval=1,
    )
    spec = MethodSpec("probe")
    out = run_llm_method(spec, inputs, seed=0)
    model, tok = new_policy(inputs.policy, [PROMPT, *texts], bank, seed=0)  # the run's own
    lengths = [len(x) for x in answer_ids(model, tok, texts)]
    assert out["answer_tokens_p95"] == pytest.approx(np.percentile(lengths, 95))
    assert out["generation_cap"] == generation_cap(lengths, floor=16)[0]
    assert out["generation_cap"] >= out["answer_tokens_p95"] > 16
    lowered = run_llm_method(spec, replace(inputs, max_new_tokens=8), seed=0)
    assert lowered["generation_cap"] == 8
    assert lowered["answer_tokens_p95"] == out["answer_tokens_p95"]
