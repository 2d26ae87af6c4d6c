"""The Gaussian predictive likelihood every model here is trained and scored with."""

from __future__ import annotations

import math

import torch

__all__ = ["gaussian_nll"]


def gaussian_nll(y: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """Per-point negative log density of N(mean, std^2) at y, summed over output dims."""
    return (0.5 * ((y - mean) / std) ** 2 + torch.log(std) + 0.5 * math.log(2 * math.pi)).sum(-1)
