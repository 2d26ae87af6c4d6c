"""Modality dropout's rates, the placeholder embedding, rollouts against the training forward
pass, and a GRPO step against the shared reference loss (dynamic sampling included)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.ecg_r1.encoders import ImageEncoder, SignalEncoder
from icml26.ecg_r1.model import CONFIGS, ECGR1Model, EncodedBank, ModalityDropout
from icml26.ecg_r1.protocol import protocol_answer
from icml26.ecg_r1.train import answer_ids, grpo_step, train_sft
from icml26.ecg_r1.wavemodel import sample_params, simulate
from icml26.shared.llm.grpo import (
    GRPOSettings,
    group_advantages,
    reference_grpo_loss,
    zero_variance_groups,
)
from icml26.shared.llm.tiny import TinyModelConfig, make_tiny_lm


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
    from icml26.ecg_r1.data import to_model_signal
    from icml26.ecg_r1.render import ImageRasteriser

    sig = to_model_signal(c.signals, c.fs)
    img = (ImageRasteriser(c.fs)(c.signals) * 255).astype(np.uint8)
    bank = EncodedBank.build(SignalEncoder(width=16, n_tokens=4).eval(), ImageEncoder(width=16, n_tokens=4).eval(), sig, img)  # fmt: skip
    texts = [protocol_answer(f) for f in c.features]
    lm, tok = make_tiny_lm(texts, special_tokens=["<think>", "</think>", "<answer>", "</answer>", "<sig>", "<img>"],
                           vocab_size=400, config=TinyModelConfig(hidden_size=32, intermediate_size=64, num_heads=4, num_kv_heads=2))  # fmt: skip
    model = ECGR1Model(
        lm, tok, sig_width=16, img_width=16, read_dim=bank.sig_read.shape[1], n_sig=4, n_img=4
    )
    return model, bank, c, texts


def test_placeholders_carry_the_modality_embeddings(setup: tuple) -> None:
    model, bank, _, _ = setup
    batch = model.assemble(["signal+image", "image", "signal"])
    sig, img = model.modality_embeddings(bank, torch.tensor([0, 1, 2]))
    emb = model.embed(batch["ids"], sig, img)
    ids = batch["ids"]
    torch.testing.assert_close(emb[0][ids[0] == model.sig_id], sig[0])
    torch.testing.assert_close(emb[0][ids[0] == model.img_id], img[0])
    assert not (ids[1] == model.sig_id).any()
    torch.testing.assert_close(emb[1][ids[1] == model.img_id], img[1])
    torch.testing.assert_close(emb[2][ids[2] == model.sig_id], sig[2])
    # swapped order: the image block comes first
    p = model.prompt_ids("image+signal")
    assert p.index(model.img_id) < p.index(model.sig_id)


def test_sft_prompt_plus_answer_is_the_chat_encoding(setup: tuple) -> None:
    model, bank, _, texts = setup
    ids = answer_ids(model, texts[:2])
    assert ids[0][-1] == model.eos_id
    losses = train_sft(model, bank, answer_ids(model, texts), steps=8, batch_size=4, lr=1e-2,
                       dropout=ModalityDropout(), rng=np.random.default_rng(0))  # fmt: skip
    assert losses[-1] < losses[0]


def test_rollout_logps_equal_the_training_forward(setup: tuple) -> None:
    """Sampling from the key/value cache over prefix embeddings and re-scoring the completions
    in one padded forward pass give the same log-probabilities (so the GRPO loss is computed
    on the policy that sampled)."""
    model, bank, _, _ = setup
    configs = ["signal+image", "image", "signal", "image+signal"]
    idx = torch.tensor([0, 1, 2, 3])
    gen = torch.Generator().manual_seed(0)
    comps, lps = model.generate(
        bank, idx, configs, max_new_tokens=12, greedy=False, temperature=0.7, generator=gen
    )
    batch = model.assemble(configs, comps)
    sig, img = model.modality_embeddings(bank, idx)
    with torch.no_grad():
        lp = model.token_logps(batch, sig, img, temperature=0.7)
    m = batch["comp"][:, 1:]
    for i in range(4):
        torch.testing.assert_close(lp[i][m[i]], torch.tensor(lps[i]), atol=1e-4, rtol=1e-4)


def test_grpo_step_is_the_shared_loss_on_kept_groups(
    setup: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, bank, c, _ = setup
    settings = GRPOSettings(steps=1, prompts_per_step=2, num_generations=3, max_completion_length=8,
                            lr=1e-3, loss_type="dapo", dynamic_sampling=True, epsilon_high=0.28, temperature=0.7)  # fmt: skip
    captured = {}
    import icml26.ecg_r1.train as train_mod

    def spy(lp, old, adv, mask, **kw):  # type: ignore[no-untyped-def]
        captured.update(lp=lp.detach(), adv=adv, mask=mask, kw=kw)
        return reference_grpo_loss(lp, old, adv, mask, **kw)

    # Rewards: group 0 all equal (dropped by dynamic sampling), group 1 varied.
    def fake_rewards():  # type: ignore[no-untyped-def]
        def diag(prompts, completions, **_):  # type: ignore[no-untyped-def]
            return [0.5, 0.5, 0.5, 0.0, 1.0, 0.2]

        def zero(prompts, completions, **_):  # type: ignore[no-untyped-def]
            return [0.0] * 6

        diag.__name__, zero.__name__ = "diagnosis", "evidence"
        fmt = lambda prompts, completions, **_: [0.0] * 6  # noqa: E731
        fmt.__name__ = "format"
        return [diag, zero, fmt]

    monkeypatch.setattr(train_mod, "reference_grpo_loss", spy)
    monkeypatch.setattr(train_mod, "reward_functions", fake_rewards)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    entry = grpo_step(model, opt, bank, c.features, settings, ModalityDropout(), np.random.default_rng(0),
                      torch.Generator().manual_seed(0), (1.0, 1.0, 0.5))  # fmt: skip
    assert entry["kept_frac"] == pytest.approx(0.5)
    r = torch.tensor([0.5, 0.5, 0.5, 0.0, 1.0, 0.2])
    torch.testing.assert_close(captured["adv"], group_advantages(r, 3))
    keep = ~zero_variance_groups(r, 3)
    assert not captured["mask"][:3].any()
    assert captured["mask"][3:].any()
    assert keep.tolist() == [False] * 3 + [True] * 3
    assert captured["kw"]["loss_type"] == "dapo"
    assert captured["kw"]["epsilon_high"] == 0.28
    # With pi_old == pi the DAPO loss is minus the mean advantage over kept tokens.
    m = captured["mask"].float()
    expected = -(captured["adv"][:, None] * m).sum() / m.sum()
    assert entry["loss"] == pytest.approx(float(expected), abs=1e-5)
