"""MAP training of the networks the posteriors wrap (Adam, L2 weight decay, mini-batches)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["TrainSpec", "train_classifier", "train_regressor"]


@dataclass(frozen=True)
class TrainSpec:
    """Optimiser settings.

    Attributes:
        steps: Adam steps.
        lr: learning rate.
        weight_decay: L2 coefficient (a Gaussian prior on the weights, i.e. MAP training).
        batch_size: mini-batch size (full batch when the data set is smaller).
    """

    steps: int = 1000
    lr: float = 3e-3
    weight_decay: float = 1e-4
    batch_size: int = 128

    def __post_init__(self) -> None:
        if self.steps < 0 or self.lr <= 0 or self.weight_decay < 0 or self.batch_size < 1:
            raise ValueError(f"bad training settings {self}")


def _loop(  # type: ignore[no-untyped-def]
    model: nn.Module,
    n: int,
    loss_fn,
    spec: TrainSpec,
    generator: torch.Generator,
    device: torch.device,
) -> None:
    """Adam on mini-batches; indices come from the CPU ``generator`` (the same batches on
    every device) and are moved to the data's ``device``."""
    opt = torch.optim.Adam(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    model.train()
    for _ in range(spec.steps):
        idx = (
            torch.randint(0, n, (spec.batch_size,), generator=generator)
            if n > spec.batch_size
            else torch.arange(n)
        ).to(device)
        opt.zero_grad()
        loss = loss_fn(idx)
        loss.backward()
        opt.step()
    model.eval()


def train_regressor(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    spec: TrainSpec,
    *,
    mask: torch.Tensor | None = None,
    seed: int = 0,
) -> nn.Module:
    """Least squares on ``y (N, C)``; with ``mask`` only observed entries count (bandits).

    Args:
        model: the network, trained in place.
        x: inputs ``(N, ...)``.
        y: targets ``(N, C)``.
        spec: steps, learning rate, weight decay and batch size.
        mask: ``(N, C)``, 1 where an entry of ``y`` is observed (``None``: all are).
        seed: seeds the minibatch order.

    Returns:
        ``model``, trained.
    """
    if y.ndim == 1:
        y = y[:, None]
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"{x.shape[0]} inputs but {y.shape[0]} targets")
    y = y.to(x.device)
    m = torch.ones_like(y) if mask is None else mask.to(device=y.device, dtype=y.dtype)
    gen = torch.Generator().manual_seed(seed)

    def loss(idx: torch.Tensor) -> torch.Tensor:
        out = model(x[idx])
        w = m[idx]
        return ((out - y[idx]) ** 2 * w).sum() / w.sum().clamp_min(1.0)

    _loop(model, x.shape[0], loss, spec, gen, x.device)
    return model


def train_classifier(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, spec: TrainSpec, *, seed: int = 0
) -> nn.Module:
    """Cross-entropy on integer labels ``y (N,)``.

    Args:
        model: the network (logits out), trained in place.
        x: inputs ``(N, ...)``.
        y: integer labels ``(N,)``.
        spec: steps, learning rate, weight decay and batch size.
        seed: seeds the minibatch order.

    Returns:
        ``model``, trained.
    """
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"{x.shape[0]} inputs but {y.shape[0]} labels")
    gen = torch.Generator().manual_seed(seed)
    ce = nn.CrossEntropyLoss()
    y = y.to(x.device)

    def loss(idx: torch.Tensor) -> torch.Tensor:
        return ce(model(x[idx]), y[idx])

    _loop(model, x.shape[0], loss, spec, gen, x.device)
    return model
