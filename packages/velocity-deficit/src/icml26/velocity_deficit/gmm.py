"""Isotropic Gaussian mixtures: exact density, sampling, and the exact flow-matching velocity.

For the linear (rectified) path ``x_t = (1 - t) x0 + t x1`` with ``x0 ~ N(0, I)`` and data
``x1 ~ sum_k w_k N(mu_k, s_k^2 I)``, the marginal ``p_t`` is again a mixture,
``x_t | k ~ N(t mu_k, ((1 - t)^2 + t^2 s_k^2) I)``, and the minimiser of the flow-matching MSE
is the conditional mean of the target ``u = x1 - x0`` (the paper's "optimal velocity")::

    v*(x, t) = sum_k r_k(x, t) [ mu_k + c_k(t) (x - t mu_k) ],
    c_k(t)   = (t s_k^2 - (1 - t)) / ((1 - t)^2 + t^2 s_k^2),

with ``r_k`` the posterior of component ``k`` under ``p_t``. Because ``v*`` is an average of
directions, ``|v*(x_t, t)| <= E[|x1 - x0| | x_t]`` (Jensen): the MSE objective under-estimates the
velocity magnitude even with infinite capacity. This closed form is the oracle against which
learned models and the deficit diagnostics are checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["IsotropicGMM", "gaussian_optimal_velocity", "random_gmm"]


@dataclass(frozen=True)
class IsotropicGMM:
    """A mixture of isotropic Gaussians ``sum_k w_k N(mu_k, s_k^2 I)``.

    Attributes:
        means: ``(K, d)`` component means.
        stds: ``(K,)`` per-component standard deviations ``s_k > 0``.
        weights: ``(K,)`` mixture weights summing to one.
    """

    means: np.ndarray
    stds: np.ndarray
    weights: np.ndarray

    def __post_init__(self) -> None:
        means = np.asarray(self.means, dtype=np.float64)
        stds = np.asarray(self.stds, dtype=np.float64)
        weights = np.asarray(self.weights, dtype=np.float64)
        if means.ndim != 2:
            raise ValueError(f"means must be (K, d), got shape {means.shape}")
        if stds.shape != (means.shape[0],) or weights.shape != (means.shape[0],):
            raise ValueError(
                f"stds and weights must have shape ({means.shape[0]},), got {stds.shape} and {weights.shape}"
            )
        if np.any(stds <= 0) or not np.all(np.isfinite(stds)):
            raise ValueError("stds must be positive and finite")
        if np.any(weights < 0) or not math.isclose(weights.sum(), 1.0, rel_tol=1e-6):
            raise ValueError("weights must be non-negative and sum to 1")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "stds", stds)
        object.__setattr__(self, "weights", weights)

    @property
    def dim(self) -> int:
        return int(self.means.shape[1])

    @property
    def n_components(self) -> int:
        return int(self.means.shape[0])

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` samples and their component labels."""
        labels = rng.choice(self.n_components, size=n, p=self.weights)
        noise = rng.standard_normal((n, self.dim))
        x = self.means[labels] + self.stds[labels, None] * noise
        return x.astype(np.float32), labels.astype(np.int64)

    def _component_logpdf(self, x: torch.Tensor, t: float | torch.Tensor = 1.0) -> torch.Tensor:
        """``log N(x; t mu_k, var_k(t) I)`` for every row and component: ``(n, K)``."""
        means = torch.as_tensor(self.means, dtype=x.dtype, device=x.device)
        stds = torch.as_tensor(self.stds, dtype=x.dtype, device=x.device)
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device).reshape(-1, 1)
        var = (1 - t) ** 2 + t**2 * stds[None, :] ** 2  # (n or 1, K)
        # |x - t mu_k|^2 without forming (n, K, d)
        sq = (
            (x**2).sum(1, keepdim=True) - 2 * t * (x @ means.T) + t**2 * (means**2).sum(1)[None, :]
        ).clamp_min(0)
        d = x.shape[1]
        return -0.5 * sq / var - 0.5 * d * torch.log(2 * math.pi * var)

    def log_prob(self, x: np.ndarray | torch.Tensor) -> np.ndarray:
        """Exact mixture log-density of each row of ``x`` (float64 NumPy: a metric).

        A tensor is evaluated on its own device; only the ``(n,)`` result comes to the host.
        """
        if isinstance(x, torch.Tensor):
            xt = x.detach().to(torch.float64)
        else:
            xt = torch.as_tensor(np.asarray(x), dtype=torch.float64)
        if xt.ndim != 2 or xt.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}), got {tuple(xt.shape)}")
        logw = torch.log(torch.as_tensor(self.weights, dtype=torch.float64, device=xt.device))
        return torch.logsumexp(self._component_logpdf(xt) + logw, dim=1).cpu().numpy()

    def optimal_velocity(self, x: torch.Tensor, t: float | torch.Tensor) -> torch.Tensor:
        """The exact minimiser ``v*(x, t) = E[x1 - x0 | x_t = x]`` (module docstring).

        Computed in float64 on ``x``'s device; returned in ``x``'s dtype.
        """
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}), got {tuple(x.shape)}")
        work = x.to(torch.float64)
        dev = x.device
        tt = torch.as_tensor(t, dtype=torch.float64, device=dev).reshape(-1, 1)
        if torch.any(tt < 0) or torch.any(tt > 1):
            raise ValueError("t must lie in [0, 1]")
        means = torch.as_tensor(self.means, dtype=torch.float64, device=dev)
        stds = torch.as_tensor(self.stds, dtype=torch.float64, device=dev)
        logw = torch.log(torch.as_tensor(self.weights, dtype=torch.float64, device=dev))
        resp = torch.softmax(self._component_logpdf(work, tt) + logw, dim=1)  # (n, K)
        var = (1 - tt) ** 2 + tt**2 * stds[None, :] ** 2
        c = (tt * stds[None, :] ** 2 - (1 - tt)) / var  # (n, K)
        # sum_k r_k [mu_k (1 - c_k t) + c_k x]
        v = (resp * (1 - c * tt)) @ means + (resp * c).sum(1, keepdim=True) * work
        return v.to(x.dtype)


def gaussian_optimal_velocity(
    x: torch.Tensor, t: float, mean: torch.Tensor, std: float
) -> torch.Tensor:
    """``v*`` for a single Gaussian target ``N(mean, std^2 I)``: affine in ``x`` for fixed t."""
    var = (1 - t) ** 2 + t**2 * std**2
    c = (t * std**2 - (1 - t)) / var
    return mean + c * (x - t * mean)


def random_gmm(
    dim: int,
    n_components: int = 8,
    *,
    mean_scale: float = 1.0,
    std: float = 0.5,
    seed: int = 0,
) -> IsotropicGMM:
    """A mixture whose per-coordinate scale does not depend on ``dim``.

    Means are ``N(0, mean_scale^2 I)`` draws, components ``N(mu_k, std^2 I)``, equal weights: each
    coordinate of the data has variance ``mean_scale^2 + std^2`` at every dimension, so a trend of
    the velocity ratio with ``dim`` is a dimension effect, not a scale effect. For ``dim == 2``
    the means are put on a circle (the classic 8-Gaussians toy).
    """
    if dim < 1 or n_components < 1:
        raise ValueError(f"dim and n_components must be >= 1, got {dim}, {n_components}")
    rng = np.random.default_rng(seed)
    if dim == 2:
        angles = 2 * np.pi * np.arange(n_components) / n_components
        means = np.stack([np.cos(angles), np.sin(angles)], 1) * mean_scale * math.sqrt(2)
    else:
        means = rng.standard_normal((n_components, dim)) * mean_scale
    return IsotropicGMM(
        means=means,
        stds=np.full(n_components, std),
        weights=np.full(n_components, 1.0 / n_components),
    )
