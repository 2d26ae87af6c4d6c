"""The Monte-Carlo core shared by PR and NPPR: per-input rate of label-keeping draws.

``PR_D(x, y) = P_{δ ~ D(x, y)} [ f(x + δ) = y ]`` is estimated per input by ``m`` i.i.d.
draws; the metric is the mean over inputs (inputs the model already misclassifies count with
whatever rate the perturbations give, usually 0), so AR <= NPPR <= PR <= 1 holds input by
input (δ = 0 is in the ball, so a point is adversarially robust only if it is clean-correct).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from icml26.nppr.stats import Estimate, estimate_from_rates
from icml26.nppr.validation import check_eval_inputs

__all__ = ["PerturbationSampler", "clip_to_ball", "estimate_pr_with", "kept_rates"]

#: ``sampler(x, y, m, generator) -> δ`` of shape ``[m, B, *x.shape[1:]]`` inside the ball.
PerturbationSampler = Callable[[torch.Tensor, torch.Tensor, int, torch.Generator], torch.Tensor]


def clip_to_ball(
    x: torch.Tensor, delta: torch.Tensor, eps: float, clip: tuple[float, float] = (0.0, 1.0)
) -> torch.Tensor:
    """``x + Π(δ)``: δ clipped to the L-inf ball, then the image to the input range (which
    only moves a coordinate towards ``x``, so the result stays in the ball)."""
    return (x + delta.clamp(-eps, eps)).clamp(*clip)


@torch.no_grad()
def kept_rates(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    sampler: PerturbationSampler,
    m: int,
    eps: float,
    *,
    batch_size: int = 2048,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> np.ndarray:
    """Per-input fraction of ``m`` draws ``δ ~ sampler`` with ``argmax f(x + δ) = y``."""
    if m < 1:
        raise ValueError(f"the number of Monte-Carlo draws must be >= 1, got {m}")
    device = next(model.parameters()).device if any(True for _ in model.parameters()) else x.device
    g = torch.Generator(device=device).manual_seed(seed)
    per_chunk = max(1, batch_size // max(1, m))
    out = []
    for i in range(0, len(y), per_chunk):
        xb, yb = x[i : i + per_chunk].to(device), y[i : i + per_chunk].to(device)
        delta = sampler(xb, yb, m, g)  # [m, B, ...]
        xp = clip_to_ball(xb.unsqueeze(0), delta, eps, clip)
        pred = model(xp.flatten(0, 1)).argmax(-1).view(m, -1)
        out.append((pred == yb.unsqueeze(0)).float().mean(0).cpu())
    return torch.cat(out).numpy().astype(np.float64)


def estimate_pr_with(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    sampler: PerturbationSampler,
    eps: float,
    m: int,
    *,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
    batch_size: int = 2048,
) -> Estimate:
    """PR of ``model`` on ``(x, y)`` under ``sampler``, with its interval and cost."""
    check_eval_inputs(model, x, y, eps, clip)
    t0 = time.perf_counter()
    rates = kept_rates(model, x, y, sampler, m, eps, clip=clip, seed=seed, batch_size=batch_size)
    return estimate_from_rates(
        rates, m, level=level, forward_passes=len(y) * m, seconds=time.perf_counter() - t0
    )
