"""Flow matching on the linear (rectified) path, OT-CFM coupling, and the MAFM objective.

Path and target (t = 0 noise, t = 1 data)::

    x_t = (1 - t) x0 + t x1,        u = d x_t / dt = x1 - x0.

Flow matching (FM) minimises ``E |v(x_t, t) - u|^2``, whose minimiser is the conditional mean
``E[u | x_t]``. An average of vectors pointing in different directions is shorter than their
average length, so ``|E[u | x_t]| <= E[|u| | x_t]``: the *velocity deficit*.

Magnitude-Aware Flow Matching (MAFM) adds a penalty on the *length* of the prediction::

    L_MAFM = E [ |v - u|^2 + lambda w(t) (|v| - |u|)^2 ] / d,   w(t) = (1 - t)^p.

At a point ``x_t`` with ``m = E[u | x_t]`` and ``rho = E[|u| | x_t]`` the minimiser keeps the
direction of ``m`` and has length ``(|m| + lambda w rho) / (1 + lambda w)``: it moves the length
from the MSE's shrunken ``|m|`` toward the target's ``rho``. The weight ``w(t)`` puts the
correction at the start of the trajectory (Initial Energy Injection) and fades it at the end,
where the contraction of ``|v|`` acts as denoising (the paper's asymmetry). ``p = 0`` corrects
uniformly in ``t``.
"""

from __future__ import annotations

import numpy as np
import ot
import torch

__all__ = [
    "MAFMObjective",
    "fm_loss",
    "linear_path",
    "mafm_loss",
    "mafm_optimal_norm",
    "ot_coupling",
]


def linear_path(
    x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x_t, u)`` on the linear path for per-row times ``t`` of shape ``(n,)``."""
    if x0.shape != x1.shape:
        raise ValueError(
            f"x0 and x1 must have the same shape, got {tuple(x0.shape)} and {tuple(x1.shape)}"
        )
    if t.shape != (x0.shape[0],):
        raise ValueError(f"t must have shape ({x0.shape[0]},), got {tuple(t.shape)}")
    tt = t[:, None]
    return (1 - tt) * x0 + tt * x1, x1 - x0


def ot_coupling(x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    """Reorder ``x0`` so that row ``i`` is paired with ``x1[i]`` by exact minibatch OT (OT-CFM).

    Solves the assignment for the squared Euclidean cost with POT's network simplex
    (``ot.emd``); with equal uniform weights the plan is a permutation.
    """
    if x0.shape != x1.shape:
        raise ValueError(
            f"x0 and x1 must have the same shape, got {tuple(x0.shape)} and {tuple(x1.shape)}"
        )
    a = x0.detach().cpu().double().numpy()
    b = x1.detach().cpu().double().numpy()
    cost = ot.dist(a, b)  # squared Euclidean
    n = len(a)
    plan = ot.emd(np.full(n, 1.0 / n), np.full(n, 1.0 / n), cost / max(cost.max(), 1e-12))
    perm = torch.as_tensor(plan.argmax(axis=0), device=x0.device)  # source row for each target
    return x0[perm]


def fm_loss(v: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The flow-matching MSE ``E |v - u|^2 / d``."""
    if v.shape != u.shape:
        raise ValueError(
            f"prediction and target shapes differ: {tuple(v.shape)} vs {tuple(u.shape)}"
        )
    return (v - u).pow(2).mean()


def mafm_time_weight(t: torch.Tensor, power: float) -> torch.Tensor:
    """``(1 - t)^power`` on ``[0, 1]``, exactly 0 at ``t = 1`` for every ``power > 0``.

    Computed as a power in ``t``'s dtype, a tiny positive ``power`` (say 1e-143) rounds to 0
    in float32 and ``0 ** 0 = 1`` would keep the magnitude term alive at the data end, where
    it must vanish. ``power == 0`` is the constant weight 1 (the term everywhere).
    """
    base = (1 - t).clamp_min(0)
    if power == 0:
        return torch.ones_like(base)
    return torch.where(base > 0, base.pow(power), torch.zeros_like(base))


def mafm_loss(
    v: torch.Tensor,
    u: torch.Tensor,
    t: torch.Tensor,
    *,
    lam: float = 1.0,
    power: float = 1.0,
    eps: float = 1e-8,
) -> torch.Tensor:
    """The MAFM objective (module docstring): MSE plus ``lam (1 - t)^power (|v| - |u|)^2``, per dim."""
    if v.shape != u.shape:
        raise ValueError(
            f"prediction and target shapes differ: {tuple(v.shape)} vs {tuple(u.shape)}"
        )
    if lam < 0 or power < 0:
        raise ValueError(f"lam and power must be >= 0, got {lam}, {power}")
    d = v.shape[1]
    mse = (v - u).pow(2).sum(1)
    v_norm = torch.sqrt(v.pow(2).sum(1) + eps)
    u_norm = u.norm(dim=1)
    weight = lam * mafm_time_weight(t, power)
    return ((mse + weight * (v_norm - u_norm) ** 2) / d).mean()


def mafm_optimal_norm(
    mean_norm: float, mean_length: float, lam: float, weight: float = 1.0
) -> float:
    """Length of the pointwise MAFM minimiser: ``(|m| + lam w rho) / (1 + lam w)``."""
    lw = lam * weight
    return (mean_norm + lw * mean_length) / (1 + lw)


class MAFMObjective:
    """Callable ``(v, u, t) -> loss`` with fixed ``lam`` and ``power`` (for the trainer)."""

    def __init__(self, lam: float, power: float) -> None:
        if lam < 0 or power < 0:
            raise ValueError(f"lam and power must be >= 0, got {lam}, {power}")
        self.lam, self.power = lam, power

    def __call__(self, v: torch.Tensor, u: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return mafm_loss(v, u, t, lam=self.lam, power=self.power)
