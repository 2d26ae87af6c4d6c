"""Training a velocity model with flow matching (FM) or MAFM, resumable from checkpoints.

Adam with a cosine learning-rate decay, an exponential moving average (EMA) of the weights
used for sampling (as in every modern flow model), uniform ``t``, and independent or OT-CFM
minibatch coupling.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from icml26.shared import Checkpoints, log
from icml26.velocity_deficit.diagnostics import RatioProfile
from icml26.velocity_deficit.flow import MAFMObjective, fm_loss, linear_path, ot_coupling
from icml26.velocity_deficit.model import VelocityMLP

__all__ = ["TrainSettings", "train_velocity_model"]


@dataclass(frozen=True)
class TrainSettings:
    """Hyper-parameters of one training run.

    Attributes:
        objective: ``fm`` (MSE) or ``mafm`` (magnitude-aware).
        coupling: ``independent`` pairs or ``ot`` (exact minibatch OT, OT-CFM).
        skip: the model's time-scaled input skip ``a(t) x`` (``icml26.velocity_deficit.model``).
        mafm_lambda, mafm_power: MAFM's ``lambda`` and ``p`` (``icml26.velocity_deficit.flow``).
        mafm_target: MAFM's target ratio ``rho(t)`` (``None``: the paper's ``rho = 1``; the
            exact field's ``R_exact`` profile: :func:`icml26.velocity_deficit.diagnostics.exact_ratio`;
            a constant ``rho`` at every time).
        checkpoint_every: steps between checkpoints (with ``checkpoints``).
        steps: optimiser steps.
        batch_size: pairs per step.
        lr: Adam's peak learning rate (cosine decay).
        ema_decay: decay of the weights' exponential moving average (training returns the
            EMA model).
        width: the velocity MLP's width.
        depth: its residual blocks.

    Raises:
        ValueError: a setting out of range.
    """

    steps: int = 2000
    batch_size: int = 256
    lr: float = 1e-3
    ema_decay: float = 0.999
    width: int = 256
    depth: int = 2
    skip: bool = True
    objective: Literal["fm", "mafm"] = "fm"
    coupling: Literal["independent", "ot"] = "independent"
    mafm_lambda: float = 1.0
    mafm_power: float = 1.0
    mafm_target: RatioProfile | float | None = None
    checkpoint_every: int = 500

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "width", "depth", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if not 0 <= self.ema_decay < 1:
            raise ValueError(f"ema_decay must lie in [0, 1), got {self.ema_decay}")
        if self.objective not in ("fm", "mafm"):
            raise ValueError(f"objective must be 'fm' or 'mafm', got {self.objective!r}")
        if self.coupling not in ("independent", "ot"):
            raise ValueError(f"coupling must be 'independent' or 'ot', got {self.coupling!r}")
        if self.mafm_lambda < 0 or self.mafm_power < 0:
            raise ValueError("mafm_lambda and mafm_power must be >= 0")


def _lr_at(step: int, s: TrainSettings) -> float:
    warm = min(1.0, (step + 1) / 50)
    return s.lr * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / s.steps)))


def train_velocity_model(
    x: np.ndarray,
    y: np.ndarray | None,
    settings: TrainSettings,
    *,
    seed: int = 0,
    checkpoints: Checkpoints | None = None,
    device: str = "cpu",
    tag: str = "",
) -> tuple[VelocityMLP, list[float]]:
    """Train a :class:`VelocityMLP` on data ``x`` ``(N, d)`` with FM or MAFM.

    Args:
        x: training data ``(N, d)``.
        y: class labels (a class-conditional model) or ``None``.
        settings: :class:`TrainSettings`.
        seed: seeds the initialisation and the batch / noise / time draws.
        checkpoints: save every ``settings.checkpoint_every`` steps and resume a killed run
            from the latest one (a finished run is reloaded without training).
        device: ``cpu`` or ``cuda``.
        tag: a name for log lines.

    Returns:
        The EMA model (eval mode) and the loss curve (one value per 50 steps).

    Raises:
        ValueError: data not ``(N >= 2, d)``, NaN, or labels of another length.
        FloatingPointError: the loss diverged.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"training data must be (N >= 2, d), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("training data contain NaN or infinite values")
    if y is not None and len(y) != len(x):
        raise ValueError(f"{len(y)} labels for {len(x)} examples")
    n_classes = 0 if y is None else int(np.max(y)) + 1
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = VelocityMLP(
        x.shape[1], settings.width, settings.depth, n_classes, skip=settings.skip
    ).to(device)
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr, foreach=True)
    objective = (
        MAFMObjective(settings.mafm_lambda, settings.mafm_power, settings.mafm_target)
        if settings.objective == "mafm"
        else None
    )
    losses: list[float] = []
    start = 0
    if checkpoints is not None and (latest := checkpoints.latest()) is not None:
        start, state = latest
        model.load_state_dict(state["model"])
        ema.load_state_dict(state["ema"])
        opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
        losses = list(state["losses"])
        if start >= settings.steps:
            return ema.eval(), losses
        log(f"{tag}: resuming training at step {start}")
    xt_all = torch.as_tensor(x, device=device)
    yt_all = None if y is None else torch.as_tensor(np.asarray(y), dtype=torch.long, device=device)
    running = 0.0
    model.train()
    ema_params, params = list(ema.parameters()), list(model.parameters())
    for step in range(start, settings.steps):
        for group in opt.param_groups:
            group["lr"] = _lr_at(step, settings)
        idx = torch.randint(0, len(x), (settings.batch_size,), generator=gen).to(device)
        x1 = xt_all[idx]
        yb = None if yt_all is None else yt_all[idx]
        x0 = torch.randn(x1.shape, generator=gen).to(device)
        if settings.coupling == "ot":
            x0 = ot_coupling(x0, x1)
        t = torch.rand(len(x1), generator=gen).to(device)
        xt, u = linear_path(x0, x1, t)
        v = model(xt, t, yb)
        loss = objective(v, u, t) if objective is not None else fm_loss(v, u)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{tag}: loss became {loss.item()} at step {step}; lower lr")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
        opt.step()
        decay = min(settings.ema_decay, (1 + step) / (10 + step))
        with torch.no_grad():
            torch._foreach_lerp_(ema_params, params, 1 - decay)
        running += loss.item()
        if (step + 1) % 50 == 0:
            losses.append(running / 50)
            running = 0.0
        done = step + 1
        if checkpoints is not None and (
            done % settings.checkpoint_every == 0 or done == settings.steps
        ):
            checkpoints.save(
                done,
                {
                    "model": {k: v.cpu() for k, v in model.state_dict().items()},
                    "ema": {k: v.cpu() for k, v in ema.state_dict().items()},
                    "opt": opt.state_dict(),
                    "gen": gen.get_state(),
                    "losses": losses,
                },
            )
    return ema.eval(), losses
