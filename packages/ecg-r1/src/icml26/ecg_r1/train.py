"""Training of the multimodal model: supervised fine-tuning on protocol (or free-text)
answers, then GRPO with the evidence rewards, both with interleaved modality dropout.

Both loops are written on the shared post-training path rather than on TRL's trainers (whose
input path carries token ids only, and whose import costs about 29 CPU seconds):

* SFT encodes every conversation with :func:`icml26.shared.llm.sft.encode_chat` (the
  tokenizer's chat template, loss on the assistant tokens only) and trains on the mean NLL of
  those tokens, the prompt rebuilt per step with the dropout's layout;
* GRPO samples ``G`` completions per prompt from :meth:`~model.ECGR1Model.generate`, scores
  them with the reward components, takes the group-relative advantages
  (:func:`~icml26.shared.llm.grpo.group_advantages`), drops zero-variance groups (dynamic
  sampling, :func:`~icml26.shared.llm.grpo.zero_variance_groups`) and minimises
  :func:`~icml26.shared.llm.grpo.reference_grpo_loss` (the token-level ``"dapo"`` form, clip
  range ``[1 - epsilon, 1 + epsilon_high]``), with knobs validated by
  :class:`~icml26.shared.llm.grpo.GRPOSettings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.ecg_r1.labels import Features
from icml26.ecg_r1.model import ECGR1Model, EncodedBank, ModalityDropout
from icml26.ecg_r1.rewards import REWARD_NAMES, reward_functions
from icml26.shared.llm.grpo import (
    GRPOSettings,
    group_advantages,
    reference_grpo_loss,
    zero_variance_groups,
)
from icml26.shared.llm.sft import encode_chat

__all__ = ["GRPOLog", "answer_ids", "grpo_step", "train_grpo", "train_sft"]


def answer_ids(model: ECGR1Model, answers: Sequence[str]) -> list[list[int]]:
    """Assistant tokens (with the end-of-turn token) of each answer, by the shared
    :func:`encode_chat` on ``[user prompt, answer]``; checks that the encoded conversation is
    the model's prompt followed by those tokens (then, at most, untrained template text)."""
    prompt = model.user_text("signal+image")
    head = model.prompt_ids("signal+image")
    out = []
    for a in answers:
        enc = encode_chat(model.tokenizer, [{"role": "user", "content": prompt}, {"role": "assistant", "content": a}], max_length=100_000)  # fmt: skip
        toks = [t for t, m in zip(enc.input_ids, enc.loss_mask, strict=True) if m]
        # Template text after the closing end-of-turn (SmolLM2's trailing newline) is not
        # trained on and not generated: only the prompt prefix and the answer must line up.
        if enc.input_ids[: len(head)] != head or enc.input_ids[len(head) : len(head) + len(toks)] != toks:  # fmt: skip
            raise ValueError("the chat template does not render prompt + answer as a prefix")
        out.append(toks)
    return out


def train_sft(
    model: ECGR1Model,
    bank: EncodedBank,
    answers: list[list[int]],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    dropout: ModalityDropout,
    rng: np.random.Generator,
) -> list[float]:
    """SFT of projectors and decoder; per-step mean NLL of the answer tokens."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=lr, total_steps=max(steps, 1), pct_start=0.1
    )
    model.train()
    losses = []
    for _ in range(steps):
        idx = rng.integers(0, len(answers), batch_size)
        configs = dropout.sample(rng, batch_size)
        batch = model.assemble(configs, [answers[i] for i in idx])
        sig, img = model.modality_embeddings(bank, torch.as_tensor(idx))
        lp = model.token_logps(batch, sig, img)
        m = batch["comp"][:, 1:].float()
        loss = -(lp * m).sum() / m.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


@dataclass
class GRPOLog:
    """Per-step means of the reward components, kept share of groups, loss."""

    reward: list[float] = field(default_factory=list)
    components: dict[str, list[float]] = field(
        default_factory=lambda: {k: [] for k in REWARD_NAMES}
    )
    kept_frac: list[float] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)


def grpo_step(
    model: ECGR1Model,
    opt: torch.optim.Optimizer,
    bank: EncodedBank,
    truths: Sequence[Features],
    settings: GRPOSettings,
    dropout: ModalityDropout,
    rng: np.random.Generator,
    generator: torch.Generator,
    weights: Sequence[float],
) -> dict[str, float]:
    """One GRPO step (module docstring); returns its log entry."""
    P, G = settings.prompts_per_step, settings.num_generations
    rec = rng.integers(0, len(truths), P)
    configs = dropout.sample(rng, P)
    idx = torch.as_tensor(np.repeat(rec, G))
    cfg = [c for c in configs for _ in range(G)]
    model.eval()
    comps, _ = model.generate(bank, idx, cfg, max_new_tokens=settings.max_completion_length, greedy=False, temperature=settings.temperature, generator=generator)  # fmt: skip
    texts = [model.decode(c) for c in comps]
    feats = [truths[int(i)] for i in idx]
    parts = {}
    for fn in reward_functions():
        parts[fn.__name__] = torch.tensor(fn(prompts=cfg, completions=texts, features=feats), dtype=torch.float32)  # fmt: skip
    reward = sum(w * parts[k] for w, k in zip(weights, REWARD_NAMES, strict=True))
    assert isinstance(reward, torch.Tensor)
    adv = group_advantages(reward, G, scale=settings.scale_rewards)
    keep = ~zero_variance_groups(reward, G) if settings.dynamic_sampling else torch.ones(len(reward), dtype=torch.bool)  # fmt: skip
    entry = {"reward": float(reward.mean()), "kept_frac": float(keep.float().mean())}
    entry.update({k: float(v.mean()) for k, v in parts.items()})
    if not keep.any():
        entry["loss"] = 0.0
        return entry
    model.train()
    batch = model.assemble(cfg, comps)
    sig, img = model.modality_embeddings(bank, idx)
    lp = model.token_logps(batch, sig, img, temperature=settings.temperature)
    mask = batch["comp"][:, 1:] & keep[:, None].to(lp.device)
    loss = reference_grpo_loss(
        lp, lp.detach(), adv.to(lp.device), mask,
        epsilon_low=settings.epsilon, epsilon_high=settings.epsilon_high or settings.epsilon,
        beta=0.0, loss_type=settings.loss_type,
    )  # fmt: skip
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
    opt.step()
    model.eval()
    entry["loss"] = float(loss.detach())
    return entry


def train_grpo(
    model: ECGR1Model,
    bank: EncodedBank,
    truths: Sequence[Features],
    settings: GRPOSettings,
    *,
    dropout: ModalityDropout,
    rng: np.random.Generator,
    weights: Sequence[float] = (1.0, 1.0, 0.5),
) -> GRPOLog:
    """``settings.steps`` GRPO steps (``settings.num_iterations`` must be 1: one update per
    batch, so ``pi_old`` is the sampling policy)."""
    if settings.num_iterations != 1:
        raise ValueError("this GRPO loop makes one update per generated batch (num_iterations=1)")
    if len(weights) != len(REWARD_NAMES):
        raise ValueError(f"need {len(REWARD_NAMES)} reward weights, got {len(weights)}")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=settings.lr, weight_decay=0.0)
    gen = torch.Generator(device=model.device).manual_seed(settings.seed)
    log = GRPOLog()
    for _ in range(settings.steps):
        e = grpo_step(model, opt, bank, truths, settings, dropout, rng, gen, weights)
        log.reward.append(e["reward"])
        log.kept_frac.append(e["kept_frac"])
        log.loss.append(e["loss"])
        for k in REWARD_NAMES:
            log.components[k].append(e[k])
    return log
