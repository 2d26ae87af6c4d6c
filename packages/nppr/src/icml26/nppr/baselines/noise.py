"""PR under fixed perturbation distributions inside the L-inf ball (the state of the art's
assumption NPPR drops): ours, scaled by the budget, and the official code's, at unit scale.

Ours (``scale`` is the noise level relative to the budget):

* ``uniform``: ``δ_j ~ U[-eps, eps]`` independently (already inside the ball);
* ``gaussian``: ``δ_j = clip(σ z_j, -eps, eps)``, ``z_j ~ N(0, 1)``, ``σ = scale * eps``;
* ``laplace``: ``δ_j = clip(b l_j, -eps, eps)``, ``l_j ~ Laplace(0, 1)``, ``b = scale * eps``.

The official NPPR code's (``scale`` multiplies the unit-scale draw, default 1):

* ``gaussian_official``: ``δ_j = clip(z_j, -eps, eps)``, ``z_j ~ N(0, 1)`` (``torch.randn``);
* ``uniform_official``: ``δ_j = clip(u_j, -eps, eps)``, ``u_j ~ U(-1, 1)``.

At eps = 8/255 or 0.1 the official draws put nearly every coordinate at a corner ``±eps``
(``P(|z| < 0.1) = 0.08``): a far harsher noise than ours, so PR under it is lower.
``pr.tuned`` (:func:`tuned_fixed_pr`) is the lowest PR over our families and a sweep of
scales plus the official two, chosen on inputs separate from those it is reported on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from icml26.nppr.montecarlo import Data, PerturbationSampler, estimate_pr_with, kept_rates
from icml26.nppr.stats import Estimate
from icml26.nppr.validation import check_budget

__all__ = [
    "DISTRIBUTIONS",
    "OFFICIAL_DISTRIBUTIONS",
    "OUR_DISTRIBUTIONS",
    "FixedNoise",
    "estimate_fixed_pr",
    "tuned_fixed_pr",
]

OUR_DISTRIBUTIONS = ("uniform", "gaussian", "laplace")
OFFICIAL_DISTRIBUTIONS = ("uniform_official", "gaussian_official")
DISTRIBUTIONS = OUR_DISTRIBUTIONS + OFFICIAL_DISTRIBUTIONS


@dataclass(frozen=True)
class FixedNoise:
    """A fixed perturbation distribution; calling it draws ``[m, B, ...]`` perturbations.

    Attributes:
        dist: one of :data:`DISTRIBUTIONS`.
        eps: the L-inf budget.
        scale: the noise scale (relative to ``eps`` for ours, absolute for the official two).

    Raises:
        ValueError: an unknown distribution, a bad budget or a non-positive scale.
    """

    dist: str
    eps: float
    scale: float = 1.0

    def __post_init__(self) -> None:
        if self.dist not in DISTRIBUTIONS:
            raise ValueError(f"dist must be one of {DISTRIBUTIONS}, got {self.dist!r}")
        check_budget(self.eps)
        if not self.scale > 0:
            raise ValueError(f"scale must be positive, got {self.scale}")

    def __call__(
        self, x: torch.Tensor, y: torch.Tensor, m: int, g: torch.Generator
    ) -> torch.Tensor:
        """``m`` draws per input of ``x``: ``[m, *x.shape]`` inside the ball."""
        shape = (m, *x.shape)
        if self.dist == "uniform":
            u = torch.rand(shape, generator=g, device=x.device, dtype=x.dtype)
            return (2 * u - 1) * self.eps
        if self.dist in ("gaussian", "gaussian_official"):
            z = torch.randn(shape, generator=g, device=x.device, dtype=x.dtype)
        elif self.dist == "uniform_official":
            z = 2 * torch.rand(shape, generator=g, device=x.device, dtype=x.dtype) - 1
        else:  # Laplace by inverse CDF of a uniform on (-1/2, 1/2)
            u = torch.rand(shape, generator=g, device=x.device, dtype=x.dtype) - 0.5
            z = -torch.sign(u) * torch.log1p(-2 * u.abs().clamp(max=0.5 - 1e-7))
        unit = self.scale if self.dist in OFFICIAL_DISTRIBUTIONS else self.scale * self.eps
        return (unit * z).clamp(-self.eps, self.eps)


def estimate_fixed_pr(
    model: nn.Module,
    data: Data,
    dist: str,
    eps: float,
    m: int = 100,
    *,
    scale: float = 1.0,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> Estimate:
    """PR under a fixed distribution.

    Args:
        model: the classifier (eval mode).
        data: a ``DataLoader`` of ``(x, y)`` batches or a pair of tensors.
        dist: one of :data:`DISTRIBUTIONS`.
        eps: the L-inf budget.
        m: draws per input.
        scale: see :class:`FixedNoise`.
        level: the interval's confidence.
        clip: the input range.
        seed: seeds the draws.

    Returns:
        An :class:`~icml26.nppr.stats.Estimate`.
    """
    sampler: PerturbationSampler = FixedNoise(dist, eps, scale)
    return estimate_pr_with(model, data, sampler, eps, m, level=level, clip=clip, seed=seed)


def tuned_fixed_pr(
    model: nn.Module,
    select: Data,
    evaluate: Data,
    eps: float,
    *,
    scales: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0, 64.0),
    m_select: int = 16,
    m: int = 100,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> tuple[Estimate, FixedNoise]:
    """The strongest fixed distribution, chosen on ``select`` and reported on ``evaluate``.

    Args:
        model: the classifier (eval mode).
        select: inputs the distribution is chosen on (separate from ``evaluate``).
        evaluate: inputs it is reported on.
        eps: the L-inf budget.
        scales: our families' scales searched (a huge scale approaches random sign corners).
        m_select, m: draws per input when choosing and when reporting.
        level: the interval's confidence.
        clip: the input range.
        seed: seeds the draws.

    Returns:
        ``(estimate on evaluate, the chosen FixedNoise)``.
    """
    candidates = [FixedNoise("uniform", eps)]
    candidates += [FixedNoise(d, eps, s) for d in ("gaussian", "laplace") for s in scales]
    candidates += [FixedNoise(d, eps) for d in OFFICIAL_DISTRIBUTIONS]
    scored = [
        (float(kept_rates(model, select, n, m_select, eps, clip=clip, seed=seed).mean()), i)
        for i, n in enumerate(candidates)
    ]
    best = candidates[min(scored)[1]]
    est = estimate_pr_with(model, evaluate, best, eps, m, level=level, clip=clip, seed=seed + 1)
    return est, best
