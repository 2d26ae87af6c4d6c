"""Sample-quality metrics: Fréchet distance (in a classifier's feature space), sliced
Wasserstein distance (POT), and the exact mixture log-likelihood where the density is known.

The Fréchet distance between ``N(m1, S1)`` and ``N(m2, S2)`` is
``|m1 - m2|^2 + tr(S1 + S2 - 2 (S1^{1/2} S2 S1^{1/2})^{1/2})``; computed here with symmetric
eigendecompositions (stable for the rank-deficient covariances of pixel data). On features of a
small classifier trained on the real data it is our stand-in for FID ("FD").
"""

from __future__ import annotations

import numpy as np
import ot
import torch
from torch import nn

__all__ = [
    "FeatureClassifier",
    "frechet_distance",
    "frechet_distance_gaussians",
    "sliced_wasserstein",
]


def _sqrt_psd(m: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh((m + m.T) / 2)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


def frechet_distance_gaussians(
    mu1: np.ndarray, cov1: np.ndarray, mu2: np.ndarray, cov2: np.ndarray
) -> float:
    """Fréchet (2-Wasserstein squared) distance between two Gaussians."""
    mu1, mu2 = np.atleast_1d(mu1).astype(np.float64), np.atleast_1d(mu2).astype(np.float64)
    cov1, cov2 = np.atleast_2d(cov1).astype(np.float64), np.atleast_2d(cov2).astype(np.float64)
    d = mu1.shape[0]
    if mu2.shape != (d,) or cov1.shape != (d, d) or cov2.shape != (d, d):
        raise ValueError(
            f"shape mismatch: means {mu1.shape}, {mu2.shape}; covariances {cov1.shape}, {cov2.shape}"
        )
    s1 = _sqrt_psd(cov1)
    cross = _sqrt_psd(s1 @ cov2 @ s1)
    value = float(((mu1 - mu2) ** 2).sum() + np.trace(cov1) + np.trace(cov2) - 2 * np.trace(cross))
    return max(value, 0.0)


def _check_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"expected two (n, d) arrays with the same d, got {a.shape} and {b.shape}")
    if len(a) < 2 or len(b) < 2:
        raise ValueError("need at least two samples on each side")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("samples contain NaN or infinite values")
    return a, b


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """FD between the Gaussian fits (mean, covariance) of two feature sets ``(n, d)``."""
    a, b = _check_pair(a, b)
    ca = np.atleast_2d(np.cov(a, rowvar=False))
    cb = np.atleast_2d(np.cov(b, rowvar=False))
    return frechet_distance_gaussians(a.mean(0), ca, b.mean(0), cb)


def sliced_wasserstein(
    a: np.ndarray, b: np.ndarray, *, n_projections: int = 256, seed: int = 0
) -> float:
    """Sliced 2-Wasserstein distance (POT's Monte-Carlo estimate over random directions)."""
    a, b = _check_pair(a, b)
    return float(ot.sliced_wasserstein_distance(a, b, n_projections=n_projections, seed=seed))


class FeatureClassifier(nn.Module):
    """A small MLP classifier trained on the real data; its penultimate layer is the feature
    space of the FD metric (the role Inception-v3 plays for FID).

    Data without labels uses the identity features (FD in data space).

    Args:
        dim: the data dimension (image rows are flattened).
        n_classes: classes of the labels (< 2: identity features).
        width: hidden width.
        feat_dim: the feature dimension of the FD.
    """

    def __init__(self, dim: int, n_classes: int, width: int = 256, feat_dim: int = 64) -> None:
        super().__init__()
        self.dim, self.n_classes = dim, n_classes
        self.body = nn.Sequential(
            nn.Linear(dim, width), nn.SiLU(), nn.Linear(width, feat_dim), nn.SiLU()
        )
        self.head = nn.Linear(feat_dim, max(n_classes, 1))
        self.accuracy: float | None = None

    @property
    def identity(self) -> bool:
        return self.n_classes < 2

    def fit(
        self,
        x: np.ndarray,
        y: np.ndarray | None,
        *,
        steps: int = 1000,
        batch_size: int = 256,
        lr: float = 2e-3,
        seed: int = 0,
        x_val: np.ndarray | None = None,
        y_val: np.ndarray | None = None,
    ) -> FeatureClassifier:
        """Train with cross-entropy (light input noise for robustness to imperfect samples).

        Args:
            x: training rows ``(n, dim)`` (the training split only: never the rows the FD
                floor or the samples are scored against).
            y: integer labels ``(n,)``; ``None`` (or identity features) leaves it untrained.
            steps: Adam steps.
            batch_size: rows per step.
            lr: Adam's learning rate.
            seed: seeds the batch and noise draws.
            x_val: optional held-out rows for :attr:`accuracy`.
            y_val: their labels.

        Returns:
            ``self``, trained and in eval mode.
        """
        if self.identity or y is None:
            return self
        gen = torch.Generator().manual_seed(seed)  # CPU draws, moved: the same on every device
        dev = self._device
        xt = torch.as_tensor(x, dtype=torch.float32).to(dev)
        yt = torch.as_tensor(y, dtype=torch.long).to(dev)
        opt = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=1e-4)
        self.train()
        for _ in range(steps):
            idx = torch.randint(0, len(xt), (min(batch_size, len(xt)),), generator=gen).to(dev)
            xb = xt[idx] + 0.1 * torch.randn(len(idx), xt.shape[1], generator=gen).to(dev)
            loss = nn.functional.cross_entropy(self.head(self.body(xb)), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        self.eval()
        if x_val is not None and y_val is not None:
            with torch.no_grad():
                xv = torch.as_tensor(x_val, dtype=torch.float32).to(dev)
                pred = self.head(self.body(xv)).argmax(1)
            self.accuracy = float((pred.cpu().numpy() == np.asarray(y_val)).mean())
        return self

    @torch.no_grad()
    def accuracy_on(self, x: np.ndarray, y: np.ndarray) -> float:
        """Classification accuracy on ``(x, y)`` (NaN for identity features)."""
        if self.identity:
            return float("nan")
        xv = torch.as_tensor(np.asarray(x), dtype=torch.float32).flatten(1).to(self._device)
        pred = self.head(self.body(xv)).argmax(1)
        return float((pred.cpu().numpy() == np.asarray(y)).mean())

    @property
    def _device(self) -> torch.device:
        return next(self.parameters()).device

    @torch.no_grad()
    def features(self, x: np.ndarray | torch.Tensor) -> np.ndarray:
        """Features of ``x`` (array, or a tensor on any device) as float64 NumPy (the metric
        boundary): computed on this classifier's device."""
        if isinstance(x, torch.Tensor):
            xt = x.detach().to(torch.float32)
        else:
            xt = torch.as_tensor(np.asarray(x), dtype=torch.float32)
        if xt.ndim > 2:
            xt = xt.flatten(1)
        if xt.ndim != 2 or xt.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}), got {tuple(xt.shape)}")
        if self.identity:
            return xt.cpu().numpy().astype(np.float64)
        return self.body(xt.to(self._device)).cpu().numpy().astype(np.float64)

    def fd(self, samples: np.ndarray, reference: np.ndarray) -> float:
        """FD between ``samples`` and ``reference`` in this feature space."""
        return frechet_distance(self.features(samples), self.features(reference))
