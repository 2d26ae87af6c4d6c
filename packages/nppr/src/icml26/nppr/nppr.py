"""Fitting the NPPR perturbation mixture and estimating NPPR on held-out inputs.

NPPR is the PR under the *least favourable* perturbation distribution of a family:
``NPPR = inf_{D in GMM_K} E_(x,y) P_{δ ~ D(x,y)} [f(x + δ) = y]``. The indicator is replaced
by a smooth margin surrogate so the infimum can be sought by gradient descent on the mixture:

    L = E_{x,y} E_δ softplus((f_y(x+δ) - max_{j≠y} f_j(x+δ) + κ) / s)
        + λ_H (1 - H(π)/log K) + λ_div (-log det G / K)

(``s`` the margin scale), sampled with Gumbel-softmax and reparameterised Gaussians
(:mod:`icml26.nppr.gmm`), on inputs the classifier gets right (a wrong input needs no
perturbation). The Gumbel temperature anneals geometrically from ``tau_start`` to
``tau_end``. The fitted mixture is then evaluated with exact draws on other inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from icml26.nppr.gmm import PerturbationGMM
from icml26.nppr.montecarlo import estimate_pr_with
from icml26.nppr.stats import Estimate
from icml26.nppr.validation import check_eval_inputs

__all__ = ["FitConfig", "FitResult", "estimate_nppr", "fit_nppr", "margin_loss"]


@dataclass(frozen=True)
class FitConfig:
    """Optimisation of the mixture (defaults sized for MNIST-scale CPU runs)."""

    steps: int = 300
    batch_size: int = 32
    samples: int = 4
    lr: float = 0.02
    tau_start: float = 1.0
    tau_end: float = 0.2
    kappa: float = 0.0
    margin_scale: float = 1.0
    entropy_weight: float = 0.01
    diversity_weight: float = 0.001

    def __post_init__(self) -> None:
        if min(self.steps, self.batch_size, self.samples) < 1:
            raise ValueError("steps, batch_size and samples must be >= 1")
        if self.lr <= 0 or self.tau_start <= 0 or self.tau_end <= 0 or self.margin_scale <= 0:
            raise ValueError("lr, tau_start, tau_end and margin_scale must be positive")
        if self.entropy_weight < 0 or self.diversity_weight < 0:
            raise ValueError("regulariser weights must be >= 0")


@dataclass
class FitResult:
    gmm: PerturbationGMM
    losses: list[float]
    forward_passes: int
    seconds: float


def margin_loss(
    logits: torch.Tensor, y: torch.Tensor, kappa: float = 0.0, scale: float = 1.0
) -> torch.Tensor:
    """``softplus((f_y - max_{j≠y} f_j + κ)/s)`` per sample: a smooth upper surrogate of the
    indicator that the label is kept (positive margin), scaled by ``s``."""
    fy = logits.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    other = logits.masked_fill(
        torch.nn.functional.one_hot(y, logits.shape[-1]).bool(), float("-inf")
    )
    margin = fy - other.max(-1).values
    return torch.nn.functional.softplus((margin + kappa) / scale) * scale


def fit_nppr(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    gmm: PerturbationGMM,
    cfg: FitConfig,
    *,
    seed: int = 0,
    clip: tuple[float, float] = (0.0, 1.0),
    log: Callable[..., Any] | None = None,
    tag: str = "",
) -> FitResult:
    """Fit ``gmm`` to minimise the surrogate PR of the frozen ``model`` on ``(x, y)``."""
    check_eval_inputs(model, x, y, gmm.eps, clip)
    device = next(model.parameters()).device
    gmm.to(device).train()
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        pred = torch.cat(
            [model(x[i : i + 1024].to(device)).argmax(-1).cpu() for i in range(0, len(y), 1024)]
        )
    keep = pred == y.cpu()
    if int(keep.sum()) == 0:
        raise ValueError("the classifier gets none of the fitting inputs right: nothing to perturb")
    xf, yf = x[keep].to(device), y[keep].to(device)
    opt = torch.optim.Adam(gmm.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    g = torch.Generator(device=device).manual_seed(seed)
    gi = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    t0 = time.perf_counter()
    passes = 0
    try:
        for step in range(cfg.steps):
            frac = step / max(1, cfg.steps - 1)
            tau = cfg.tau_start * (cfg.tau_end / cfg.tau_start) ** frac
            idx = torch.randint(0, len(yf), (min(cfg.batch_size, len(yf)),), generator=gi).to(
                device
            )
            xb, yb = xf[idx], yf[idx]
            params = gmm(xb, yb)
            delta = gmm.decode(gmm.rsample_latent(params, cfg.samples, tau, g))  # [S, B, ...]
            xp = (xb.unsqueeze(0) + delta).clamp(*clip)
            logits = model(xp.flatten(0, 1)).view(cfg.samples, len(yb), -1)
            main = margin_loss(
                logits, yb.unsqueeze(0).expand(cfg.samples, -1), cfg.kappa, cfg.margin_scale
            ).mean()
            reg = gmm.regularisers(params)
            loss = (
                main + cfg.entropy_weight * reg["entropy"] + cfg.diversity_weight * reg["diversity"]
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(gmm.parameters(), 10.0)
            opt.step()
            sched.step()
            passes += cfg.samples * len(yb)
            losses.append(float(main.detach()))
            if log is not None and (step % max(1, cfg.steps // 10) == 0 or step == cfg.steps - 1):
                log(step=step, **{f"nppr_fit_loss.{tag}": losses[-1], f"nppr_fit_tau.{tag}": tau})
    finally:
        for p in model.parameters():
            p.requires_grad_(True)
    gmm.eval()
    return FitResult(gmm, losses, passes, time.perf_counter() - t0)


def estimate_nppr(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    gmm: PerturbationGMM,
    m: int = 100,
    *,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> Estimate:
    """NPPR: PR of ``model`` on ``(x, y)`` under exact draws from the fitted ``gmm``."""
    check_eval_inputs(model, x, y, gmm.eps, clip)
    gmm.eval()
    return estimate_pr_with(model, x, y, gmm.sampler, gmm.eps, m, level=level, clip=clip, seed=seed)
