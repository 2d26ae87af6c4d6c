"""Training of the multimodal model: supervised fine-tuning on protocol (or free-text)
answers, then GRPO with the evidence rewards, both with interleaved modality dropout.

* SFT (:func:`train_sft`) encodes every conversation with the shared
  :func:`icml26.shared.llm.sft.encode_chat` (the tokenizer's chat template, loss on the
  assistant tokens only) and trains on the mean NLL of those tokens, the prompt drawn per step
  with the dropout's layout. A hand loop, because each row's prompt names its record in the
  attached bank (TRL's ``SFTTrainer`` would work on the rows too; the loop keeps one batch
  per step of ``batch_size`` records drawn by our generator).
* GRPO (:func:`train_grpo`) is the shared path
  :func:`icml26.shared.llm.grpo.train_grpo` (TRL's ``GRPOTrainer``): a dataset of prompts,
  one row per (record, dropout layout) with the record's true features as a column, and the
  reward functions of :func:`~icml26.ecg_r1.rewards.reward_functions`. The KL reference
  (``beta > 0``) is the model as GRPO starts (after SFT): TRL reloads it through
  ``AutoModelForCausalLM`` (the class is registered) and :class:`_BankTrainer` attaches the
  bank to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from icml26.ecg_r1.labels import Features
from icml26.ecg_r1.model import ECGR1ForCausalLM, EncodedBank, ModalityDropout
from icml26.ecg_r1.rewards import REWARD_NAMES, reward_functions
from icml26.shared.llm.grpo import GRPOSettings, grpo_trainer_class
from icml26.shared.llm.grpo import train_grpo as shared_train_grpo
from icml26.shared.llm.sft import encode_chat

__all__ = ["SFTSettings", "answer_ids", "grpo_dataset", "train_grpo", "train_sft"]


@dataclass(frozen=True)
class SFTSettings:
    """Supervised fine-tuning: AdamW, one-cycle schedule, gradient clip 1.

    Attributes:
        steps: optimiser steps.
        batch_size: records per step.
        lr: AdamW's peak learning rate.
    """

    steps: int = 100
    batch_size: int = 12
    lr: float = 4e-3

    def __post_init__(self) -> None:
        if self.steps < 0 or self.batch_size < 1 or not self.lr > 0:
            raise ValueError(f"need steps >= 0, batch_size >= 1, lr > 0; got {self}")


def answer_ids(model: ECGR1ForCausalLM, tokenizer: Any, answers: Sequence[str]) -> list[list[int]]:
    """Assistant tokens (with the end-of-turn token) of each answer, by the shared
    :func:`encode_chat` on ``[user prompt, answer]``.

    Raises:
        ValueError: the chat template does not render the prompt followed by the answer.
    """
    prompt = model.user_text("signal+image", 0)
    head = model.prompt_ids(tokenizer, "signal+image", 0)
    out = []
    for a in answers:
        conv = [{"role": "user", "content": prompt}, {"role": "assistant", "content": a}]
        enc = encode_chat(tokenizer, conv, max_length=100_000)
        toks = [t for t, m in zip(enc.input_ids, enc.loss_mask, strict=True) if m]
        # Template text after the closing end-of-turn (SmolLM2's trailing newline) is not
        # trained on and not generated: only the prompt prefix and the answer must line up.
        got = enc.input_ids[: len(head) + len(toks)]
        if got != head + toks:
            raise ValueError("the chat template does not render prompt + answer as a prefix")
        out.append(toks)
    return out


def _padded(
    rows: list[list[int]], pad: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=device)
    attn = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=device)
    return ids, attn


def train_sft(
    model: ECGR1ForCausalLM,
    tokenizer: Any,
    bank: EncodedBank,
    answers: Sequence[Sequence[int] | None],
    settings: SFTSettings,
    *,
    dropout: ModalityDropout,
    rng: np.random.Generator,
) -> list[float]:
    """SFT of projectors and decoder (mean NLL of the answer tokens), the prompt's layout
    drawn per example by ``dropout``.

    Args:
        model: the policy.
        tokenizer: its tokenizer.
        bank: the encoded training records (attached to ``model``).
        answers: per record of ``bank``, its target's assistant token ids (:func:`answer_ids`),
            or ``None`` to skip the record.
        settings: steps, batch size, learning rate.
        dropout: the modality dropout.
        rng: draws records and layouts.

    Returns:
        The per-step losses.

    Raises:
        ValueError: answers and bank differ in length, or no record has a target.
    """
    if len(answers) != len(bank):
        raise ValueError(f"{len(answers)} answers for a bank of {len(bank)} records")
    usable = np.flatnonzero([a is not None for a in answers])
    if not len(usable):
        raise ValueError("no record has an SFT target")
    model.use_bank(bank)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=settings.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt,
        max_lr=settings.lr,
        total_steps=max(settings.steps, 10),
        pct_start=0.1 if settings.steps >= 20 else 0.2,
    )
    model.train()
    losses = []
    for _ in range(settings.steps):
        idx = rng.choice(usable, settings.batch_size)
        layouts = dropout.sample(rng, settings.batch_size)
        prompts = [
            model.prompt_ids(tokenizer, c, int(i)) for c, i in zip(layouts, idx, strict=True)
        ]
        rows = [p + list(answers[i]) for p, i in zip(prompts, idx, strict=True)]  # type: ignore[arg-type]
        ids, attn = _padded(rows, pad, model.device)
        target = torch.zeros_like(ids, dtype=torch.bool)
        for r, i in enumerate(idx):
            target[r, ids.shape[1] - len(answers[i]) :] = True  # type: ignore[arg-type]
        logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
        lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        m = target[:, 1:].float()
        loss = -(lp * m).sum() / m.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def grpo_dataset(
    model: ECGR1ForCausalLM,
    truths: Sequence[Features | Mapping[str, Any]],
    n_rows: int,
    *,
    dropout: ModalityDropout,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """``n_rows`` GRPO prompts: a record drawn at random, a layout from ``dropout``, the
    record's reference features as the ``features`` column (a dict, as a ``datasets`` column
    holds it).

    Args:
        model: the policy (writes the prompts).
        truths: per record of the bank, its reference features: :class:`Features` or their
            dict (``Features.as_dict()``, as a ``datasets`` column or a JSON file gives them).
        n_rows: prompts to draw.
        dropout: draws each prompt's layout.
        rng: draws records and layouts.

    Returns:
        The rows, ``{"prompt": [user turn], "features": dict}``.

    Raises:
        TypeError: a record's features are neither :class:`Features` nor a dict.
        KeyError, ValueError: a dict misses a feature or holds a non-finite value.
    """
    columns = [_feature_dict(t, i) for i, t in enumerate(truths)]
    recs = rng.integers(0, len(truths), n_rows)
    layouts = dropout.sample(rng, n_rows)
    return [
        {
            "prompt": [{"role": "user", "content": model.user_text(c, int(r))}],
            "features": columns[int(r)],
        }
        for r, c in zip(recs, layouts, strict=True)
    ]


def _feature_dict(truth: Features | Mapping[str, Any], i: int) -> dict[str, Any]:
    """The ``features`` column of record ``i``: a dict checked by :meth:`Features.from_mapping`."""
    if isinstance(truth, Features):
        return truth.as_dict()
    if isinstance(truth, Mapping):
        return Features.from_mapping(truth).as_dict()
    raise TypeError(
        f"features of record {i} must be Features or a dict, got {type(truth).__name__}"
    )


_BANK_TRAINER: list[type] = []


def _bank_trainer() -> type:
    """The shared GRPO trainer class, with the policy's bank attached to TRL's reference
    model (which TRL reloads from the saved weights, without the bank)."""
    if _BANK_TRAINER:
        return _BANK_TRAINER[0]
    base = grpo_trainer_class()

    class _BankTrainer(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if self.ref_model is not None:
                policy = self.accelerator.unwrap_model(self.model)
                self.accelerator.unwrap_model(self.ref_model).use_bank(policy.bank)

    _BANK_TRAINER.append(_BankTrainer)
    return _BankTrainer


def train_grpo(
    model: ECGR1ForCausalLM,
    tokenizer: Any,
    bank: EncodedBank,
    truths: Sequence[Features | Mapping[str, Any]],
    settings: GRPOSettings,
    *,
    dropout: ModalityDropout,
    rng: np.random.Generator,
) -> list[dict[str, float]]:
    """GRPO with the evidence rewards through the shared TRL path.

    Args:
        model: the policy (after SFT).
        tokenizer: its tokenizer.
        bank: the encoded training records.
        truths: their reference features (the rewards' ``features`` column):
            :class:`Features` or their dicts (as a ``datasets`` column holds them).
        settings: the shared :class:`~icml26.shared.llm.grpo.GRPOSettings` (``beta > 0``: KL
            to ``model`` as it starts).
        dropout: the modality dropout of the prompts.
        rng: draws records and layouts.

    Returns:
        TRL's per-step log (``reward``, ``rewards/<name>/mean``, ``kl``, ...).

    Raises:
        ValueError: reward weights that do not match the three reward components.
        TypeError: a record's features are neither :class:`Features` nor a dict.
    """
    if settings.reward_weights is not None and len(settings.reward_weights) != len(REWARD_NAMES):
        raise ValueError(f"need {len(REWARD_NAMES)} reward weights, got {settings.reward_weights}")
    model.use_bank(bank)
    rows = grpo_dataset(
        model, truths, settings.steps * settings.prompts_per_step, dropout=dropout, rng=rng
    )
    return shared_train_grpo(
        model, tokenizer, reward_functions(tokenizer), rows, settings, trainer_class=_bank_trainer()
    )
