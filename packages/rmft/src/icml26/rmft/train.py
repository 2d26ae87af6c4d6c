"""Supervised fine-tuning of the numerical Transformer on trajectories (behaviour cloning).

Used twice: the weak pretraining on random and greedy trajectories (the base model) and every
RMFT iteration on the model's own selected low-regret trajectories. The loss is the
negative log-likelihood of the chosen arms, averaged over steps and trajectories.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from icml26.rmft.model import ArmTransformer, trajectory_features
from icml26.rmft.rollouts import Trajectories

__all__ = ["SFTData", "sft", "sft_data", "sft_loss"]


@dataclass
class SFTData:
    """Teacher-forcing inputs ``(N, T, K, F)`` and target arms ``(N, T)``."""

    inputs: torch.Tensor
    targets: torch.Tensor

    def __len__(self) -> int:
        return int(self.inputs.shape[0])


def sft_data(trajectories: list[Trajectories] | Trajectories) -> SFTData:
    """Inputs and targets from trajectories (all of one ``K`` and ``T``)."""
    trajs = [trajectories] if isinstance(trajectories, Trajectories) else list(trajectories)
    if not trajs:
        raise ValueError("no trajectories to train on")
    xs, ys = [], []
    for tr in trajs:
        spec = tr.instances.spec
        full = tr.instances.rewards if spec.full_information else None
        xs.append(trajectory_features(tr.actions, tr.rewards, spec.n_arms, full))
        ys.append(tr.actions)
    shapes = {x.shape[1:] for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"trajectories mix shapes {sorted(shapes)}; train on one (T, K) at a time")
    return SFTData(
        torch.from_numpy(np.concatenate(xs)), torch.from_numpy(np.concatenate(ys)).long()
    )


def sft_loss(model: ArmTransformer, data: SFTData, *, batch_size: int = 512) -> float:
    """Mean NLL of ``data``'s actions under ``model`` (no gradient)."""
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            x = data.inputs[start : start + batch_size].to(device)
            y = data.targets[start : start + batch_size].to(device)
            logits, _ = model(x)
            total += F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").item()
            count += y.numel()
    return total / count


def sft(
    model: ArmTransformer,
    data: SFTData,
    *,
    steps: int,
    lr: float,
    batch_size: int,
    rng: np.random.Generator,
    weight_decay: float = 0.0,
) -> list[float]:
    """``steps`` AdamW steps on minibatches of ``data`` (shuffled epochs, so a batch as large
    as the data is full-batch descent; the shared epoch loop
    :func:`icml26.shared.llm.sft.minibatch_steps`); returns the training losses."""
    if steps < 0 or batch_size < 1 or lr <= 0:
        raise ValueError(
            f"need steps >= 0, batch_size >= 1, lr > 0; got {steps}, {batch_size}, {lr}"
        )
    from icml26.shared.llm.sft import minibatch_steps

    device = next(model.parameters()).device

    def loss_of(idx: np.ndarray) -> torch.Tensor:
        rows = torch.from_numpy(idx)
        logits, _ = model(data.inputs[rows].to(device))
        return F.cross_entropy(logits.flatten(0, 1), data.targets[rows].to(device).flatten())

    model.train()
    losses = minibatch_steps(
        list(model.parameters()),
        loss_of,
        len(data),
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        rng=rng,
        weight_decay=weight_decay,
    )
    model.eval()
    return losses
