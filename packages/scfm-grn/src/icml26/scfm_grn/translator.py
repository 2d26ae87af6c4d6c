"""The translator: a shallow MLP from a pair's scFM features to an edge probability.

Trained with binary cross-entropy (positives up-weighted to balance the classes) on one
dataset's labelled pairs, then applied zero-shot to pairs of genes it never saw and to
datasets with no gene in common. Features are standardised per dataset (each feature
dimension z-scored over that dataset's pairs, no labels used), so a translator reads every
dataset on one scale. The **ensemble** averages the VVP and GT translators' probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

__all__ = ["Translator", "TranslatorConfig", "pair_features", "standardise"]


def standardise(
    features: NDArray[np.floating], sources: NDArray[np.int64] | None = None
) -> NDArray[np.float32]:
    """z-score each feature dimension over the read pairs of one dataset (no labels used).

    Args:
        features: ``[S, G, F]`` (source, target, feature); ``S = G`` unless ``sources``.
        sources: the gene index of each source row (None: row ``i`` is gene ``i``).

    Returns:
        The standardised features (self-pairs excluded from the statistics).
    """
    f = np.asarray(features, dtype=np.float64)
    rows = np.arange(f.shape[0]) if sources is None else np.asarray(sources)
    if f.ndim != 3 or rows.shape != (f.shape[0],):
        raise ValueError(f"features must be [S, G, F] with one source per row, got {f.shape}")
    off = rows[:, None] != np.arange(f.shape[1])[None, :]
    mu = f[off].mean(axis=0)
    sd = np.maximum(f[off].std(axis=0), 1e-8)
    return ((f - mu) / sd).astype(np.float32)


def pair_features(
    features: NDArray[np.floating],
    pairs: NDArray[np.int64],
    sources: NDArray[np.int64] | None = None,
) -> NDArray[np.float32]:
    """Rows ``features[row of i, j]`` for each ``(i, j)`` in ``pairs`` ``[N, 2]``.

    Args:
        features: ``[S, G, F]``.
        pairs: gene index pairs (source among ``sources``).
        sources: the gene index of each source row (None: row ``i`` is gene ``i``).

    Returns:
        ``[N, F]``.

    Raises:
        ValueError: a pair whose source has no row.
    """
    if sources is None:
        rows = pairs[:, 0]
    else:
        where = {int(g): r for r, g in enumerate(sources)}
        missing = sorted({int(i) for i in pairs[:, 0]} - set(where))
        if missing:
            raise ValueError(f"pairs with sources {missing[:5]} that were not read")
        rows = np.array([where[int(i)] for i in pairs[:, 0]], dtype=np.int64)
    return np.asarray(features[rows, pairs[:, 1]], dtype=np.float32)


@dataclass(frozen=True)
class TranslatorConfig:
    """The translator MLP and its training (AdamW, full batch, class-balanced BCE).

    Raises:
        ValueError: non-positive sizes or learning rate.
    """

    hidden: int = 32
    steps: int = 400
    lr: float = 3e-3
    weight_decay: float = 1e-2
    seed: int = 0

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.steps < 1 or self.lr <= 0:
            raise ValueError("hidden >= 1, steps >= 1 and lr > 0 required")


class Translator:
    """``fit(x [N, F], y [N])`` then ``predict(x) -> P(edge)``.

    Args:
        config: the MLP's size and training.
    """

    def __init__(self, config: TranslatorConfig | None = None) -> None:
        self.config = config or TranslatorConfig()
        self.net: nn.Module | None = None
        self.losses: list[float] = []

    def fit(self, x: NDArray[np.floating], y: NDArray[np.integer]) -> Translator:
        """Train on labelled pairs.

        Args:
            x: ``[N, F]`` pair features.
            y: ``[N]`` 0/1 labels (both present).

        Returns:
            ``self``.

        Raises:
            ValueError: bad shapes, one class only, or non-finite features.
        """
        x_t = torch.as_tensor(np.asarray(x, dtype=np.float32))
        y_t = torch.as_tensor(np.asarray(y, dtype=np.float32))
        if x_t.ndim != 2 or y_t.shape != (x_t.shape[0],):
            raise ValueError(
                f"x must be [N, F] and y [N], got {tuple(x_t.shape)}, {tuple(y_t.shape)}"
            )
        n_pos = float(y_t.sum())
        if n_pos == 0 or n_pos == len(y_t):
            raise ValueError("the translator needs both edges and non-edges to train on")
        if not torch.isfinite(x_t).all():
            raise ValueError("features hold NaN or inf")
        cfg = self.config
        gen = torch.Generator().manual_seed(cfg.seed)
        h = cfg.hidden
        self.net = nn.Sequential(
            nn.Linear(x_t.shape[1], h), nn.GELU(), nn.Linear(h, h), nn.GELU(), nn.Linear(h, 1)
        )
        with torch.no_grad():
            for p in self.net.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * (0.5 / max(1, p.shape[-1]) ** 0.5))
        loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor((len(y_t) - n_pos) / n_pos))
        opt = torch.optim.AdamW(self.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.losses = []
        for _ in range(cfg.steps):
            loss = loss_fn(self.net(x_t).squeeze(-1), y_t)
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.losses.append(loss.item())
        return self

    @torch.no_grad()
    def predict(self, x: NDArray[np.floating]) -> NDArray[np.float64]:
        """Edge probabilities ``[N]``.

        Raises:
            RuntimeError: before :meth:`fit`.
        """
        if self.net is None:
            raise RuntimeError("fit the translator first")
        logits = self.net(torch.as_tensor(np.asarray(x, dtype=np.float32))).squeeze(-1)
        return torch.sigmoid(logits).double().numpy()
