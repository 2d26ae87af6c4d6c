"""Masked expression reconstruction: the scFM's pretraining objective (as scGPT's GEP).

Per step: pick a dataset (with probability proportional to its cell count), ``batch_size`` of
its cells and up to ``max_genes`` of its genes, hide a fraction ``rho ~ U(mask_low,
mask_high)`` of the tokens, and minimise the mean squared error of the predicted values on
the hidden tokens. No network labels are used: the regulatory signal, if any, is implicit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.model import ScFM

__all__ = ["PretrainConfig", "masked_loss", "pretrain", "sample_batch"]


@dataclass(frozen=True)
class PretrainConfig:
    steps: int = 1500
    batch_size: int = 32
    max_genes: int = 64
    lr: float = 2e-3
    weight_decay: float = 1e-2
    mask_low: float = 0.3
    mask_high: float = 0.7
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 0 or self.batch_size < 1 or self.max_genes < 2 or self.lr <= 0:
            raise ValueError("steps >= 0, batch_size >= 1, max_genes >= 2 and lr > 0 required")
        if not 0.0 < self.mask_low <= self.mask_high < 1.0:
            raise ValueError("need 0 < mask_low <= mask_high < 1")


def sample_batch(
    model: ScFM, data: ExpressionData, cfg: PretrainConfig, rng: np.random.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    """``(gene_ids, values, mask)`` for one batch of one dataset (mask: at least one token
    hidden and one visible per cell)."""
    cells = rng.choice(data.n_cells, size=min(cfg.batch_size, data.n_cells), replace=False)
    n_genes = min(cfg.max_genes, data.n_genes)
    genes = rng.choice(data.n_genes, size=n_genes, replace=False)
    ids = model.token_ids([data.genes[g] for g in genes]).expand(len(cells), -1)
    values = torch.from_numpy(data.values[np.ix_(cells, genes)])
    rho = rng.uniform(cfg.mask_low, cfg.mask_high, size=(len(cells), 1))
    mask = rng.random((len(cells), n_genes)) < rho
    mask[:, 0] |= ~mask.any(axis=1)  # at least one hidden
    mask[:, 1] &= mask[:, 1:].sum(axis=1) < n_genes - 1  # at least one visible
    return ids.contiguous(), values, torch.from_numpy(mask)


def masked_loss(model: Any, gene_ids: Tensor, values: Tensor, mask: Tensor) -> Tensor:
    """Mean squared error of the predictions on the hidden tokens."""
    pred = model.predict(gene_ids, values, mask)
    return ((pred - values) ** 2)[mask].mean()


def pretrain(
    model: ScFM,
    datasets: Sequence[ExpressionData],
    cfg: PretrainConfig,
    *,
    state: dict[str, Any] | None = None,
    on_step: Callable[[int, float, dict[str, Any]], None] | None = None,
) -> list[float]:
    """Train ``model`` in place; return the loss of every step.

    ``state`` (from an earlier ``on_step`` call's third argument) resumes a killed run:
    model, optimiser, RNG and losses so far. ``on_step(step, loss, state)`` is called after
    every step (the caller decides when to checkpoint).
    """
    if not datasets:
        raise ValueError("pretraining needs at least one dataset")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt,
        max_lr=cfg.lr,
        total_steps=max(cfg.steps, 1),
        pct_start=min(0.5, max(0.1, 3 / max(cfg.steps, 1))),  # >= 2 warm-up steps
    )
    rng = np.random.default_rng(cfg.seed)
    losses: list[float] = []
    start = 0
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        rng.bit_generator.state = state["rng"]
        losses = list(state["losses"])
        start = len(losses)
    weights = np.array([d.n_cells for d in datasets], dtype=float)
    weights /= weights.sum()
    model.train()
    for step in range(start, cfg.steps):
        data = datasets[int(rng.choice(len(datasets), p=weights))]
        loss = masked_loss(model, *sample_batch(model, data, cfg, rng))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(
                step,
                losses[-1],
                {
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "sched": sched.state_dict(),
                    "rng": rng.bit_generator.state,
                    "losses": losses,
                },
            )
    model.eval()
    return losses
