"""Gaussian-process kernels, task sampling and the exact GP posterior (the oracle).

Synthetic tasks are drawn from a GP prior with known kernel and observation noise, so the
exact posterior predictive is the best any model can do: ``nll.<task>.gp_oracle``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["KERNELS", "GPKernel", "gp_log_marginal", "gp_predict"]

KERNELS = ("rbf", "matern52", "periodic")


@dataclass(frozen=True)
class GPKernel:
    """A stationary kernel k(x, x') with unit-free hyperparameters.

    Attributes:
        name: ``rbf``, ``matern52`` or ``periodic``.
        lengthscale: one value per input dimension, or a scalar broadcast to all.
        variance: the signal variance k(x, x).
        period: the period of the ``periodic`` kernel (ignored otherwise).
    """

    name: str
    lengthscale: tuple[float, ...] | float = 0.5
    variance: float = 1.0
    period: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {self.name!r}")
        scales = self.lengthscale if isinstance(self.lengthscale, tuple) else (self.lengthscale,)
        if any(s <= 0 for s in scales) or self.variance <= 0 or self.period <= 0:
            raise ValueError("lengthscale, variance and period must be positive")

    def __call__(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        """Gram matrix ``[..., N1, N2]`` for inputs ``[..., N1, D]`` and ``[..., N2, D]``."""
        ls = torch.as_tensor(self.lengthscale, dtype=x1.dtype, device=x1.device)
        if self.name == "periodic":
            # Exp-sine-squared kernel, summed over dimensions (MacKay 1998).
            diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
            s = torch.sin(math.pi * diff.abs() / self.period) / ls
            return self.variance * torch.exp(-2.0 * (s**2).sum(-1))
        a, b = x1 / ls, x2 / ls
        sq = (a.unsqueeze(-2) - b.unsqueeze(-3)).pow(2).sum(-1).clamp_min(0.0)
        if self.name == "rbf":
            return self.variance * torch.exp(-0.5 * sq)
        r = torch.sqrt(sq + 1e-30)
        s5 = math.sqrt(5.0) * r
        return self.variance * (1.0 + s5 + 5.0 / 3.0 * sq) * torch.exp(-s5)


def _cholesky(k: torch.Tensor) -> torch.Tensor:
    eye = torch.eye(k.shape[-1], dtype=k.dtype, device=k.device)
    for jitter in (0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5):  # jitter only when the factorisation fails
        chol, info = torch.linalg.cholesky_ex(k + jitter * eye)
        if not bool(info.any()):
            return chol
    raise torch.linalg.LinAlgError("kernel matrix is not positive definite even with jitter")


def gp_predict(
    kernel: GPKernel,
    noise_std: float,
    xc: torch.Tensor,
    yc: torch.Tensor,
    xt: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact posterior predictive of noisy targets: ``(mean, std)`` of shape ``[..., T, 1]``.

    p(y_t | x_t, D_c) = N(k_tc (K_cc + s^2 I)^-1 y_c, k_tt - k_tc (K_cc + s^2 I)^-1 k_ct + s^2),
    computed in float64 with a Cholesky factor. An empty context gives the prior.

    Args:
        kernel: the GP's kernel.
        noise_std: the observation noise's standard deviation ``s``.
        xc: context inputs ``[..., C, dim_x]``.
        yc: context outputs ``[..., C, 1]``.
        xt: target inputs ``[..., T, dim_x]``.

    Returns:
        ``(mean, std)``, each ``[..., T, 1]``.
    """
    dtype = xc.dtype
    xc, yc, xt = xc.double(), yc.double(), xt.double()
    prior_var = kernel(xt[..., :1, :], xt[..., :1, :]).squeeze(-1) + noise_std**2
    if xc.shape[-2] == 0:
        mean = torch.zeros(*xt.shape[:-1], 1, dtype=torch.float64, device=xt.device)
        std = prior_var.sqrt().expand_as(mean)
        return mean.to(dtype), std.to(dtype)
    kcc = kernel(xc, xc) + noise_std**2 * torch.eye(
        xc.shape[-2], dtype=torch.float64, device=xc.device
    )
    chol = _cholesky(kcc)
    ktc = kernel(xt, xc)
    alpha = torch.cholesky_solve(yc, chol)
    mean = ktc @ alpha
    v = torch.linalg.solve_triangular(chol, ktc.transpose(-1, -2), upper=False)
    kdiag = kernel.variance * torch.ones(xt.shape[:-1], dtype=torch.float64, device=xt.device)
    var = (kdiag - v.pow(2).sum(-2)).clamp_min(1e-12) + noise_std**2
    return mean.to(dtype), var.sqrt().unsqueeze(-1).to(dtype)


def gp_log_marginal(
    kernel: GPKernel, noise_std: float, x: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """log p(y | x) under the GP prior with Gaussian noise, shape ``[...]``."""
    x, y = x.double(), y.double()
    n = x.shape[-2]
    k = kernel(x, x) + noise_std**2 * torch.eye(n, dtype=torch.float64, device=x.device)
    chol = _cholesky(k)
    alpha = torch.cholesky_solve(y, chol)
    quad = (y * alpha).sum((-1, -2))
    logdet = 2.0 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(-1)
    return -0.5 * (quad + logdet + n * math.log(2 * math.pi))
