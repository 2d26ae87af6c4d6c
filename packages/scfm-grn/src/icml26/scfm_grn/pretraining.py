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
from icml26.scfm_grn.model import ScFM, ScFMConfig, load_scfm

__all__ = [
    "PretrainConfig",
    "masked_loss",
    "masked_variance_explained",
    "pretrain",
    "pretrained_scfm",
    "sample_batch",
]

CHECKPOINT_EVERY = 250


@dataclass(frozen=True)
class PretrainConfig:
    """Masked-reconstruction pretraining (AdamW, one-cycle learning rate).

    Attributes:
        steps, batch_size, max_genes, lr, weight_decay: the optimisation (cells per batch,
            genes per cell sampled per step).
        mask_low, mask_high: the masked share of a cell's tokens, drawn uniformly per cell.
        seed: batches and masks.

    Raises:
        ValueError: non-positive sizes, a bad mask range.
    """

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
    """Mean squared error of the predictions on the hidden tokens (a scalar tensor)."""
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
    """Train ``model`` in place by masked reconstruction.

    Args:
        model: the scFM.
        datasets: the corpus (drawn in proportion to their cells).
        cfg: the optimisation.
        state: an earlier ``on_step`` call's third argument: resumes a killed run (model,
            optimiser, RNG and losses so far).
        on_step: ``on_step(step, loss, state)`` after every step (the caller checkpoints).

    Returns:
        The loss of every step.

    Raises:
        ValueError: no dataset.
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


@torch.no_grad()
def masked_variance_explained(
    model: Any,
    datasets: Sequence[ExpressionData],
    *,
    mask_rate: float = 0.5,
    batches: int = 8,
    batch_size: int = 64,
    max_genes: int = 64,
    seed: int = 0,
) -> float:
    """``1 - MSE / Var`` of the hidden values on ``datasets`` (cells the scFM never saw).

    Args:
        model: the scFM (``token_ids`` and ``predict``).
        datasets: held-out datasets.
        mask_rate: the hidden share of each cell's tokens (VVP hides about half).
        batches, batch_size, max_genes: batches drawn per dataset and their size.
        seed: the draws.

    Returns:
        The share of the hidden values' variance the predictions explain (0 for predicting
        each gene's mean of its z-scores, which is 0).
    """
    cfg = PretrainConfig(
        batch_size=batch_size, max_genes=max_genes, mask_low=mask_rate, mask_high=mask_rate
    )
    rng = np.random.default_rng(seed)
    sse, ss = 0.0, 0.0
    was_training = getattr(model, "training", False)
    model.eval()
    for data in datasets:
        for _ in range(batches):
            ids, values, mask = sample_batch(model, data, cfg, rng)
            pred = model.predict(ids, values, mask)
            target = values[mask]
            sse += float(((pred[mask] - target) ** 2).sum())
            ss += float(((target - target.mean()) ** 2).sum())
    if was_training:
        model.train()
    return 1.0 - sse / max(ss, 1e-12)


def pretrained_scfm(
    cfg: Any, vocabulary: Sequence[str], datasets: Sequence[ExpressionData], run_dir: Any
) -> tuple[ScFM, list[float]]:
    """The run's scFM: pretrained (resuming from the run folder's checkpoints) or loaded.

    Args:
        cfg: the run's config (``width``, ``layers``, ``heads``, ``pretrain_steps``, ...,
            ``scfm_checkpoint``, ``device``).
        vocabulary: every gene the run reads (the scFM's tokens).
        datasets: the pretraining corpus.
        run_dir: the run folder (checkpoints every ``CHECKPOINT_EVERY`` steps).

    Returns:
        ``(model in eval mode, losses per step)`` (no losses for a loaded checkpoint).

    Raises:
        KeyError: a checkpoint lacking genes of the benchmark.
    """
    if cfg.scfm_checkpoint is not None:
        model = load_scfm(cfg.scfm_checkpoint, cfg.device)
        missing = [g for g in vocabulary if g not in model.vocab]
        if missing:
            raise KeyError(f"scfm_checkpoint lacks genes of the benchmark: {missing[:10]}")
        return model.eval(), []
    torch.manual_seed(cfg.seed)
    model = ScFM(vocabulary, ScFMConfig(cfg.width, cfg.layers, cfg.heads)).to(cfg.device)
    pcfg = PretrainConfig(
        steps=cfg.pretrain_steps,
        batch_size=cfg.batch_size,
        max_genes=cfg.max_genes,
        lr=cfg.lr,
        mask_low=cfg.mask_low,
        mask_high=cfg.mask_high,
        seed=cfg.seed,
    )
    latest = run_dir.checkpoints.latest()

    def on_step(step: int, loss: float, st: dict[str, Any]) -> None:
        if step % 50 == 0:
            run_dir.log_metrics(step, pretrain_loss=loss)
        if (step + 1) % CHECKPOINT_EVERY == 0 and step + 1 < cfg.pretrain_steps:
            run_dir.checkpoints.save(step + 1, st)

    state = latest[1] if latest is not None else None
    losses = pretrain(model, datasets, pcfg, state=state, on_step=on_step)
    return model.eval(), losses
