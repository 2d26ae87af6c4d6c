"""VQA pretraining of the vision-language backbone: the part Intention Decoupling protects.

The paper starts from a pretrained VLM; here the backbone and the reasoning head are trained
on visual questions (:mod:`icml26.syvla.vqa`) about states of random play before any action
is learnt. Training states, the validation states that decide when to stop, and the held-out
states that report the accuracy come from three separate seed streams, and any training
view equal in content to a validation or held-out view is dropped.

When to stop is decided on the validation questions alone (early stopping with a patience):
training ends once ``patience`` consecutive checks have not raised the best validation
accuracy by ``min_delta``, and the best check's weights are kept. The held-out accuracy is
measured afterwards and decides nothing. ``max_steps`` is a compute bound; the record says
whether the plateau or the bound ended training.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from icml26.shared import rng_for
from icml26.syvla.data import TextBank, VQASet, random_states, vqa_set
from icml26.syvla.evaluate import vqa_accuracy
from icml26.syvla.model import SyVLA
from icml26.syvla.vqa import question_texts

__all__ = ["VQAPretrainConfig", "VQAPretrainResult", "pretrain_vqa", "vqa_splits"]


@dataclass(frozen=True)
class VQAPretrainConfig:
    """Settings of :func:`pretrain_vqa`.

    Attributes:
        max_steps: the most optimiser steps.
        batch: questions per step (a fresh question for each sampled training view).
        lr: Adam learning rate (backbone and reasoning head only).
        check_every: steps between validation checks.
        patience: stop after this many consecutive checks that do not raise the best
            validation accuracy by at least ``min_delta``.
        min_delta: the smallest rise of the validation accuracy that counts as progress.
        target: optionally, also stop once the validation accuracy reaches it (``None``:
            the plateau rule alone).

    Raises:
        ValueError: a size below 1, a non-positive learning rate, a negative ``min_delta``
            or a ``target`` outside ``(0, 1]``.
    """

    max_steps: int = 12_000
    batch: int = 128
    lr: float = 2e-3
    check_every: int = 250
    patience: int = 5
    min_delta: float = 0.01
    target: float | None = None

    def __post_init__(self) -> None:
        if min(self.max_steps, self.batch, self.check_every, self.patience) < 1 or self.lr <= 0:
            raise ValueError(
                "max_steps, batch, check_every and patience must be >= 1 and lr positive"
            )
        if self.min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got {self.min_delta}")
        if self.target is not None and not 0 < self.target <= 1:
            raise ValueError(f"target must be in (0, 1] or None, got {self.target}")


@dataclass
class VQAPretrainResult:
    """Validation accuracy at each check (``curve``), the steps taken, why training stopped
    (``stopped``: ``"plateau"`` after ``patience`` checks without progress, ``"target"``, or
    ``"max_steps"`` when the compute bound ended it first), and the check whose weights the
    model keeps (``best_step``, ``best_val``: the best validation accuracy; the last weights
    are not kept when an earlier check was better)."""

    steps: int = 0
    stopped: str = "max_steps"
    curve: list[tuple[int, float]] = field(default_factory=list)
    best_step: int = 0
    best_val: float = float("nan")


def vqa_splits(
    n_train: int, n_val: int, n_test: int, view_size: int, *, seed: int
) -> tuple[np.ndarray, VQASet, VQASet]:
    """Training views, a validation set and a held-out test set of VQA questions on the
    ``train`` split, from separate streams; training views equal to a validation or test view
    (by content) are dropped."""
    val_views = random_states(n_val, "train", view_size, seed=seed, stream="vqa_val")
    test_views = random_states(n_test, "train", view_size, seed=seed, stream="vqa_test")
    train = random_states(n_train, "train", view_size, seed=seed, stream="vqa_train")
    held = {v.tobytes() for v in np.concatenate([val_views, test_views])}
    train = train[[v.tobytes() not in held for v in train]]
    val = vqa_set(val_views, seed=int(rng_for(seed, "vqa_val_q").integers(2**31)))
    test = vqa_set(test_views, seed=int(rng_for(seed, "vqa_test_q").integers(2**31)))
    return train, val, test


def pretrain_vqa(
    model: SyVLA,
    train_views: np.ndarray,
    val: VQASet,
    bank: TextBank,
    cfg: VQAPretrainConfig,
    *,
    seed: int,
) -> VQAPretrainResult:
    """Train ``model``'s backbone and reasoning head on questions about ``train_views`` until
    the accuracy on ``val`` stops rising (``cfg.patience`` checks without a rise of
    ``cfg.min_delta`` over the best), reaches ``cfg.target`` if one is set, or
    ``cfg.max_steps``; then restore the weights of the check with the best validation
    accuracy.

    Args:
        model: the network (only its backbone and reasoning head change; it ends with the
            best-validation check's weights).
        train_views: (N, S, S, 3) views to ask about (a fresh question per draw).
        val: the validation questions that decide when to stop.
        bank: embeddings of every question text.
        cfg: the settings.
        seed: the seed of the batch and question draws.

    Returns:
        A :class:`VQAPretrainResult`.

    Raises:
        ValueError: no training views.
    """
    if len(train_views) == 0:
        raise ValueError("no training views for VQA pretraining")
    device = next(model.parameters()).device
    params = [*model.backbone_parameters(), *model.reasoning_head.parameters()]
    opt = torch.optim.Adam(params, lr=cfg.lr)
    bank.ids(question_texts())  # every question text embedded before the lookups below
    vectors = torch.as_tensor(bank.vectors, device=device)
    rng = rng_for(seed, "vqa_pretrain")
    result = VQAPretrainResult()
    best: dict[str, torch.Tensor] | None = None
    since_progress = 0  # checks since the best validation accuracy last rose by min_delta
    for step in range(1, cfg.max_steps + 1):
        idx = rng.integers(0, len(train_views), size=cfg.batch)
        qs = vqa_set(train_views[idx], seed=int(rng.integers(2**31)))
        logits = model.reason(
            torch.as_tensor(train_views[idx], device=device), vectors[bank.ids(qs.questions)]
        )
        loss = nn.functional.cross_entropy(logits, torch.as_tensor(qs.answers, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        result.steps = step
        if step % cfg.check_every == 0 or step == cfg.max_steps:
            acc = vqa_accuracy(model, val, bank)
            result.curve.append((step, acc))
            progress = best is None or acc >= result.best_val + cfg.min_delta
            since_progress = 0 if progress else since_progress + 1
            if best is None or acc > result.best_val:
                result.best_step, result.best_val = step, acc
                best = {k: v.detach().clone() for k, v in model.state_dict().items()}
            if cfg.target is not None and acc >= cfg.target:
                result.stopped = "target"
                break
            if since_progress >= cfg.patience:
                result.stopped = "plateau"
                break
    if best is not None:
        model.load_state_dict(best)
    return result
