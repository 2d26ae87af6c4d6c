"""Flow matching on the linear (rectified) path, OT-CFM coupling, and the MAFM objective.

Path and target (t = 0 noise, t = 1 data)::

    x_t = (1 - t) x0 + t x1,        u = d x_t / dt = x1 - x0.

Flow matching (FM) minimises ``E |v(x_t, t) - u|^2``, whose minimiser is the conditional mean
``m = E[u | x_t]``. An average of vectors pointing in different directions is shorter than their
average length, so ``|m| <= E[|u| | x_t]`` (Jensen): even the exact field is "slower" than the
straight-line target. That part of the deficit is geometry, not a fault of the model.

Magnitude-Aware Flow Matching (MAFM) adds a penalty on the *length* of the prediction::

    L_MAFM = E [ |v - u|^2 + lambda w(t) (|v| - rho(t) |u|)^2 ] / d,   w(t) = (1 - t)^p.

The paper pulls ``|v|`` toward ``|u|`` (``rho = 1``); at a point ``x_t`` the minimiser then keeps
the direction of ``m`` with length ``(|m| + lambda w E[|u| | x_t]) / (1 + lambda w)``, longer than
the exact field's, so on a model that already fits it injects the Jensen gap as an error. We
size the target from what the exact field has instead: ``rho(t) = R_exact(t)``, the exact field's
mean speed over the target's (:func:`icml26.velocity_deficit.diagnostics.exact_ratio`), so that
on average the magnitude term asks for the exact field's speed and only a model that falls
short of it is pushed. Where ``rho`` is known only on ``[0, t_max]`` (data without a density)
the term acts there only: ``w(t) = 0`` for ``t > t_max``. The weight ``(1 - t)^p`` puts the
correction at the start of the trajectory (Initial Energy Injection) and fades it at the end.

Every function takes batches of any shape ``(n, ...)``: vectors ``(n, d)`` or images
``(n, C, H, W)``; lengths are taken over all non-batch dimensions and losses are per element.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import ot
import torch

from icml26.velocity_deficit.diagnostics import RatioProfile

__all__ = [
    "MAFMObjective",
    "fm_loss",
    "linear_path",
    "mafm_loss",
    "mafm_optimal_norm",
    "mafm_time_weight",
    "ot_coupling",
    "per_sample",
]

#: The MAFM target ratio: ``None`` (the paper's ``rho = 1``), a constant, a measured
#: :class:`RatioProfile`, or any ``t -> rho(t)`` callable on a ``(n,)`` tensor.
Target = RatioProfile | float | Callable[[torch.Tensor], torch.Tensor] | None


def per_sample(t: torch.Tensor | float, like: torch.Tensor) -> torch.Tensor:
    """``t`` as a ``(n, 1, ..., 1)`` tensor that broadcasts over the rows of ``like``.

    Args:
        t: a scalar (0-d tensor or float) or a ``(n,)`` tensor of per-sample times.
        like: a batch ``(n, ...)``.

    Returns:
        ``t`` on ``like``'s device and dtype, shaped ``(n, 1, ..., 1)`` (or 0-d for a scalar).

    Raises:
        ValueError: ``t`` is neither a scalar nor of shape ``(n,)``.
    """
    tt = torch.as_tensor(t, device=like.device)
    tt = tt.to(like.dtype) if like.is_floating_point() else tt
    if tt.ndim == 0:
        return tt
    if tt.shape != (like.shape[0],):
        raise ValueError(
            f"t must be a scalar or have shape ({like.shape[0]},) (one time per sample), "
            f"got {tuple(tt.shape)} for a batch of shape {tuple(like.shape)}"
        )
    return tt.reshape(-1, *([1] * (like.ndim - 1)))


def linear_path(
    x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The linear path's point and velocity for per-sample times.

    Args:
        x0: noise ``(n, ...)``.
        x1: data of the same shape.
        t: ``(n,)`` times (or a scalar).

    Returns:
        ``(x_t, u)`` with ``x_t = (1 - t) x0 + t x1`` and ``u = x1 - x0``.

    Raises:
        ValueError: shapes differ or ``t`` is not one time per row.
    """
    if x0.shape != x1.shape:
        raise ValueError(
            f"x0 and x1 must have the same shape, got {tuple(x0.shape)} and {tuple(x1.shape)}"
        )
    tt = per_sample(t, x0)
    return (1 - tt) * x0 + tt * x1, x1 - x0


def ot_coupling(x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    """Reorder ``x0`` so that row ``i`` is paired with ``x1[i]`` by exact minibatch OT (OT-CFM).

    Solves the assignment for the squared Euclidean cost (rows flattened) with POT's network
    simplex (``ot.emd``); with equal uniform weights the plan is a permutation.

    Args:
        x0: noise ``(n, ...)``.
        x1: data of the same shape.

    Returns:
        ``x0`` with its rows permuted.

    Raises:
        ValueError: shapes differ.
    """
    if x0.shape != x1.shape:
        raise ValueError(
            f"x0 and x1 must have the same shape, got {tuple(x0.shape)} and {tuple(x1.shape)}"
        )
    a = x0.detach().flatten(1).cpu().double().numpy()
    b = x1.detach().flatten(1).cpu().double().numpy()
    cost = ot.dist(a, b)  # squared Euclidean
    n = len(a)
    plan = ot.emd(np.full(n, 1.0 / n), np.full(n, 1.0 / n), cost / max(cost.max(), 1e-12))
    perm = torch.as_tensor(plan.argmax(axis=0), device=x0.device)  # source row for each target
    return x0[perm]


def fm_loss(v: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The flow-matching MSE ``E |v - u|^2 / d`` (mean over every element).

    Raises:
        ValueError: ``v`` and ``u`` differ in shape.
    """
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


def _target_and_mask(target: Target, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``rho(t)`` and where the magnitude term applies, for ``(n,)`` times."""
    if target is None:
        return torch.ones_like(t), torch.ones_like(t)
    if isinstance(target, int | float):
        return torch.full_like(t, float(target)), torch.ones_like(t)
    if isinstance(target, RatioProfile):
        if target.t_max <= 0:
            raise ValueError(
                "the MAFM target profile holds only t = 0, so the magnitude term would apply at "
                "no training time (plain FM): measure it on a time grid, e.g. "
                "exact_ratio(data, times=(0.0, 0.05, 0.1, 0.15)), or pass a constant target"
            )
        return target(t).to(t.dtype), target.covers(t).to(t.dtype)
    return torch.as_tensor(target(t), dtype=t.dtype, device=t.device), torch.ones_like(t)


def mafm_loss(
    v: torch.Tensor,
    u: torch.Tensor,
    t: torch.Tensor,
    *,
    lam: float = 1.0,
    power: float = 1.0,
    target: Target = None,
    eps: float = 1e-8,
) -> torch.Tensor:
    """The MAFM objective (module docstring) on a batch of any shape.

    Args:
        v: the model's prediction ``(n, ...)``.
        u: the target velocity ``x1 - x0``, same shape.
        t: ``(n,)`` per-sample times.
        lam: the magnitude term's weight ``lambda >= 0`` (0: plain FM).
        power: ``p`` in ``w(t) = (1 - t)^p``.
        target: ``rho(t)``: ``None`` for the paper's ``|u|``, or the exact field's ratio
            (a :class:`RatioProfile`, whose term is off beyond its last time).
        eps: keeps the gradient of ``|v|`` finite at ``v = 0``.

    Returns:
        The scalar loss ``mean_i (|v_i - u_i|^2 + lam w(t_i) (|v_i| - rho(t_i)|u_i|)^2) / d``.

    Raises:
        ValueError: shapes differ, ``t`` is not ``(n,)``, ``lam`` / ``power`` is negative, or
            ``v``, ``u`` or ``t`` holds NaN or infinite values.
    """
    if v.shape != u.shape:
        raise ValueError(
            f"prediction and target shapes differ: {tuple(v.shape)} vs {tuple(u.shape)}"
        )
    if t.shape != (v.shape[0],):
        raise ValueError(f"t must have shape ({v.shape[0]},), got {tuple(t.shape)}")
    if lam < 0 or power < 0:
        raise ValueError(f"lam and power must be >= 0, got {lam}, {power}")
    for name, x in (("prediction v", v), ("target u", u), ("times t", t)):
        if not bool(torch.isfinite(x).all()):
            raise ValueError(
                f"mafm_loss got NaN or infinite values in the {name} "
                f"({int((~torch.isfinite(x)).sum())} of {x.numel()}); a diverged model or bad "
                "data, not a loss to train on"
            )
    vf, uf = v.flatten(1), u.flatten(1)
    d = vf.shape[1]
    mse = (vf - uf).pow(2).sum(1)
    v_norm = torch.sqrt(vf.pow(2).sum(1) + eps)
    rho, mask = _target_and_mask(target, t)
    weight = lam * mafm_time_weight(t, power) * mask
    return ((mse + weight * (v_norm - rho * uf.norm(dim=1)) ** 2) / d).mean()


def mafm_optimal_norm(
    mean_norm: float, mean_length: float, lam: float, weight: float = 1.0, rho: float = 1.0
) -> float:
    """Length of the pointwise MAFM minimiser: ``(|m| + lam w rho E|u|) / (1 + lam w)``.

    Args:
        mean_norm: ``|m| = |E[u | x_t]|``.
        mean_length: ``E[|u| | x_t]``.
        lam: ``lambda``.
        weight: ``w(t)``.
        rho: the target ratio ``rho(t)``.

    Returns:
        The minimiser's length.
    """
    lw = lam * weight
    return (mean_norm + lw * rho * mean_length) / (1 + lw)


class MAFMObjective:
    """Callable ``(v, u, t) -> loss``: :func:`mafm_loss` with fixed settings (for a trainer).

    Args:
        lam: the magnitude term's weight.
        power: ``p`` of the time weight.
        target: ``rho(t)`` (see :func:`mafm_loss`).

    Raises:
        ValueError: ``lam`` or ``power`` is negative.
    """

    def __init__(self, lam: float, power: float, target: Target = None) -> None:
        if lam < 0 or power < 0:
            raise ValueError(f"lam and power must be >= 0, got {lam}, {power}")
        self.lam, self.power, self.target = lam, power, target

    def __call__(self, v: torch.Tensor, u: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return mafm_loss(v, u, t, lam=self.lam, power=self.power, target=self.target)
