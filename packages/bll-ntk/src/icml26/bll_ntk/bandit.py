"""The wheel bandit (Riquelme et al. 2018) and Thompson sampling from a posterior.

Contexts are uniform in the unit disc; arm 0 always pays ``N(μ1 = 1.2, 0.01²)``. Inside the
radius δ the other arms pay ``N(μ2 = 1.0, 0.01²)``; outside it, the arm of the context's
quadrant pays ``N(μ3 = 50, 0.01²)`` and the rest ``μ2``. Large δ makes the lucrative outer
ring rare, so a policy must keep exploring it: a test of the posterior's epistemic variance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["WheelBandit"]


@dataclass(frozen=True)
class WheelBandit:
    delta: float = 0.95
    mu1: float = 1.2
    mu2: float = 1.0
    mu3: float = 50.0
    sigma: float = 0.01

    def __post_init__(self) -> None:
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"wheel bandit delta must be in (0, 1), got {self.delta}")

    n_arms: int = 5
    context_dim: int = 2

    def contexts(self, n: int, rng: np.random.Generator) -> np.ndarray:
        r = np.sqrt(rng.uniform(size=n))
        a = rng.uniform(0, 2 * np.pi, size=n)
        return np.c_[r * np.cos(a), r * np.sin(a)]

    def mean_rewards(self, x: np.ndarray) -> np.ndarray:
        """Expected rewards ``(N, 5)``."""
        x = np.atleast_2d(x)
        mu = np.full((x.shape[0], 5), self.mu2)
        mu[:, 0] = self.mu1
        outer = np.linalg.norm(x, axis=1) > self.delta
        quad = np.where(x[:, 0] >= 0, np.where(x[:, 1] >= 0, 1, 4), np.where(x[:, 1] >= 0, 2, 3))
        mu[outer, quad[outer]] = self.mu3
        return mu

    def rewards(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        mu = self.mean_rewards(x)
        return mu + self.sigma * rng.standard_normal(mu.shape)
