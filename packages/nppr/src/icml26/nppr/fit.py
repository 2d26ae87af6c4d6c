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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from icml26.nppr.gmm import PerturbationGMM, effective_components, floor_minimum_components
from icml26.nppr.montecarlo import (
    Data,
    estimate_pr_with,
    frozen_parameters,
    is_tensor_pair,
    iter_batches,
    model_device,
)
from icml26.nppr.stats import Estimate
from icml26.nppr.validation import check_eval_inputs

__all__ = [
    "FitConfig",
    "FitResult",
    "estimate_nppr",
    "fit_nppr",
    "margin_loss",
    "mixture_shape",
]


@dataclass(frozen=True)
class FitConfig:
    """Optimisation of the mixture (defaults sized for MNIST-scale CPU runs).

    Attributes:
        steps: Adam steps (one batch of clean-correct inputs each).
        batch_size: inputs per step when the data is a pair of tensors (a loader's own
            batches are used as they come, their wrong inputs dropped).
        samples: perturbations drawn per input per step.
        lr: Adam's learning rate (cosine-annealed to 0).
        tau_start, tau_end: the Gumbel-softmax temperature, annealed geometrically.
        kappa, margin_scale: the margin surrogate ``softplus((margin + κ) / s) s``.
        entropy_weight, diversity_weight: the regularisers' weights (:mod:`icml26.nppr.gmm`).

    Raises:
        ValueError: non-positive sizes or rates, negative weights.
    """

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
    """What :func:`fit_nppr` returns.

    Attributes:
        gmm: the fitted mixture (also fitted in place).
        losses: the main loss per step.
        forward_passes: classifier forward passes spent.
        seconds: wall time of the fit.
    """

    gmm: PerturbationGMM
    losses: list[float]
    forward_passes: int
    seconds: float


def margin_loss(
    logits: torch.Tensor, y: torch.Tensor, kappa: float = 0.0, scale: float = 1.0
) -> torch.Tensor:
    """The margin surrogate of keeping the label, per sample.

    Args:
        logits: ``[..., C]``.
        y: labels ``[...]``.
        kappa: the margin offset κ.
        scale: the softplus scale ``s``.

    Returns:
        ``softplus((f_y - max_{j≠y} f_j + κ)/s) s``, a smooth upper surrogate of the indicator
        that the label is kept (positive margin).
    """
    fy = logits.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    other = logits.masked_fill(
        torch.nn.functional.one_hot(y, logits.shape[-1]).bool(), float("-inf")
    )
    margin = fy - other.max(-1).values
    return torch.nn.functional.softplus((margin + kappa) / scale) * scale


def _clean_correct_batches(
    model: nn.Module, data: Data, batch_size: int, eps: float, clip: tuple[float, float]
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Endless batches of the clean-correct inputs of ``data`` (on the model's device)."""
    device = model_device(model)
    while True:
        found = False
        for x, y in iter_batches(data, batch_size):
            check_eval_inputs(model, x, y, eps, clip)
            x, y = x.to(device), y.to(device)
            with torch.no_grad():
                keep = model(x).argmax(-1) == y
            if keep.any():
                found = True
                yield x[keep], y[keep]
        if not found:
            raise ValueError(
                "the classifier gets none of the fitting inputs right: nothing to perturb"
            )


def fit_nppr(
    model: nn.Module,
    data: Data,
    gmm: PerturbationGMM,
    cfg: FitConfig,
    *,
    seed: int = 0,
    clip: tuple[float, float] = (0.0, 1.0),
    log: Callable[..., Any] | None = None,
    tag: str = "",
) -> FitResult:
    """Fit ``gmm`` to minimise the surrogate PR of the frozen ``model`` (in place).

    Only the clean-correct inputs are used (a wrong input needs no perturbation). The
    classifier's parameters are frozen while fitting and each gets its own ``requires_grad``
    back afterwards, also when fitting fails.

    Args:
        model: the classifier, in eval mode (its device is used).
        data: a ``DataLoader`` of ``(x, y)`` batches (cycled through for ``cfg.steps`` steps),
            or a pair of tensors ``(x, y)`` (sampled in batches of ``cfg.batch_size``).
        gmm: the mixture to fit (moved to the model's device).
        cfg: the optimisation settings.
        seed: seeds the Gumbel and Gaussian draws (and the batches of a tensor pair).
        clip: the input range.
        log: optional ``log(step=..., **metrics)`` (e.g. ``RunDir.log_metrics``).
        tag: suffix of the logged metric names.

    Returns:
        :class:`FitResult`.

    Raises:
        ValueError: bad inputs, or a classifier that gets no fitting input right.
    """
    device = model_device(model)
    gmm.to(device).train()
    if is_tensor_pair(data):
        x, y = data  # type: ignore[misc]
        perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
        data = (x[perm], y[perm])
    batches = _clean_correct_batches(model, data, cfg.batch_size, gmm.eps, clip)
    opt = torch.optim.Adam(gmm.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    g = torch.Generator(device=device).manual_seed(seed)
    losses: list[float] = []
    t0 = time.perf_counter()
    passes = 0
    with frozen_parameters(model):
        for step in range(cfg.steps):
            tau = cfg.tau_start * (cfg.tau_end / cfg.tau_start) ** (step / max(1, cfg.steps - 1))
            xb, yb = next(batches)
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
    gmm.eval()
    return FitResult(gmm, losses, passes, time.perf_counter() - t0)


def estimate_nppr(
    model: nn.Module,
    data: Data,
    gmm: PerturbationGMM,
    m: int = 100,
    *,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> Estimate:
    """NPPR: the PR of ``model`` under exact draws from the fitted ``gmm``.

    Args:
        model: the classifier (eval mode).
        data: held-out inputs: a ``DataLoader`` or ``(x, y)``.
        gmm: the fitted mixture.
        m: draws per input.
        level: the interval's confidence.
        clip: the input range.
        seed: seeds the draws.

    Returns:
        An :class:`~icml26.nppr.stats.Estimate` (mean over all inputs; ``.on(mask)`` for the
        clean-correct convention).
    """
    gmm.eval()
    return estimate_pr_with(model, data, gmm.sampler, gmm.eps, m, level=level, clip=clip, seed=seed)


@torch.no_grad()
def mixture_shape(
    gmm: PerturbationGMM, data: Data, *, draws: int = 16, seed: int = 0, batch_size: int = 256
) -> dict[str, float]:
    """How far the fitted mixture is from a point perturbation, on ``data``.

    Args:
        gmm: the fitted mixture.
        data: inputs (a loader or ``(x, y)``).
        draws: perturbations drawn per input (and per component) for the spreads.
        seed: seeds the draws.
        batch_size: for a pair of tensors.

    Returns:
        ``effective_components``: ``exp H(π)`` averaged over inputs (1 = one component);
        ``neff_excess``: that minus :func:`~icml26.nppr.gmm.floor_minimum_components`, the
        least the weight floor allows (0: collapsed as far as the floor lets it);
        ``spread``: the per-coordinate standard deviation of δ across draws for a fixed input,
        over eps, averaged (0 for a point perturbation such as a universal adversarial one;
        it includes switching between components); ``spread_within``: the same across draws
        of *one* component, averaged over components with weights π (0 when every component
        is a point, however many there are); ``saturation``: the fraction of coordinates of a
        draw at ``|δ| >= 0.95 eps``.
    """
    gmm.eval()
    device = next(gmm.parameters()).device
    g = torch.Generator(device=device).manual_seed(seed)
    neff, spread, within, sat, n = 0.0, 0.0, 0.0, 0.0, 0
    for x, y in iter_batches(data, batch_size):
        x, y = x.to(device), y.to(device)
        p = gmm(x, y)
        w = p.weights
        neff += effective_components(w) * len(y)
        d = gmm.sampler(x, y, draws, g)  # [draws, B, ...]
        spread += float(d.std(0).mean()) / gmm.eps * len(y)
        sat += float((d.abs() >= 0.95 * gmm.eps).float().mean()) * len(y)
        for k in range(gmm.k):
            xi = torch.randn((draws, *p.mu[:, k].shape), generator=g, device=device)
            dk = gmm.decode(p.mu[:, k] + p.log_std[:, k].exp() * xi)  # [draws, B, ...]
            within += float((w[:, k] * dk.std(0).flatten(1).mean(1)).sum()) / gmm.eps
        n += len(y)
    floor = floor_minimum_components(gmm.k, gmm.weight_floor)
    return {
        "effective_components": neff / n,
        "neff_excess": neff / n - floor,
        "spread": spread / n,
        "spread_within": within / n,
        "saturation": sat / n,
    }
