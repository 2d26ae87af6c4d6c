"""Checks every robustness estimator runs before spending a forward pass.

A wrong budget, images outside the classifier's input range, labels the classifier cannot
output or a model left in train mode (dropout / batch-norm statistics would change between
Monte-Carlo draws) all give estimates that look plausible and mean nothing, so they are
refused with a message naming the problem.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["check_budget", "check_eval_inputs"]


def check_budget(eps: float) -> float:
    """``eps`` as a float, refusing non-positive or non-finite budgets."""
    eps = float(eps)
    if not eps > 0 or eps != eps or eps == float("inf"):
        raise ValueError(f"the L-inf budget eps must be a positive finite number, got {eps}")
    return eps


def check_eval_inputs(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    eps: float,
    clip: tuple[float, float] = (0.0, 1.0),
) -> int:
    """Validate ``(model, x, y, eps)``; return the number of classes the model outputs.

    Raises:
        ValueError: on a bad budget, a model in train mode, NaN/inf inputs, inputs outside
            ``clip``, labels of the wrong shape or out of the model's class range.
    """
    check_budget(eps)
    if model.training:
        raise ValueError(
            "the classifier is in train mode: call model.eval() first (dropout and batch-norm "
            "would change the function between Monte-Carlo draws)"
        )
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise TypeError("x and y must be torch tensors")
    if x.ndim < 2 or x.shape[0] == 0:
        raise ValueError(f"x must be a non-empty batch [N, ...], got shape {tuple(x.shape)}")
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"y must be a 1-D label vector with one label per input: x has {x.shape[0]} inputs, "
            f"y has shape {tuple(y.shape)}"
        )
    if y.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise ValueError(f"labels must be integers, got dtype {y.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError("x contains NaN or infinite values")
    lo, hi = clip
    if float(x.min()) < lo - 1e-6 or float(x.max()) > hi + 1e-6:
        raise ValueError(
            f"inputs must lie in the model's input range [{lo}, {hi}], got "
            f"[{float(x.min()):.4g}, {float(x.max()):.4g}] (normalise inside the model, not the data)"
        )
    with torch.no_grad():
        n_classes = int(model(x[:1]).shape[-1])
    if int(y.min()) < 0 or int(y.max()) >= n_classes:
        raise ValueError(
            f"labels must be in [0, {n_classes - 1}] for a model with {n_classes} outputs, got "
            f"[{int(y.min())}, {int(y.max())}]"
        )
    return n_classes
