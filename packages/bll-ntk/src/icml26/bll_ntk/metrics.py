"""Calibration and uncertainty metrics (numpy in, floats out)."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

__all__ = [
    "auroc",
    "classification_ece",
    "gaussian_nll",
    "interval_coverage",
    "prediction_set_coverage",
    "regression_ece",
    "reliability_curve",
]


def gaussian_nll(y: np.ndarray, mean: np.ndarray, var: np.ndarray) -> float:
    """Mean Gaussian negative log-likelihood."""
    return float(np.mean(0.5 * (np.log(2 * math.pi * var) + (y - mean) ** 2 / var)))


def interval_coverage(
    y: np.ndarray, mean: np.ndarray, var: np.ndarray, level: float = 0.9
) -> float:
    """Fraction of targets inside the central ``level`` Gaussian interval."""
    z = norm.ppf(0.5 + level / 2)
    return float(np.mean(np.abs(y - mean) <= z * np.sqrt(var)))


def regression_ece(y: np.ndarray, mean: np.ndarray, var: np.ndarray, n_levels: int = 19) -> float:
    """Quantile calibration error (Kuleshov et al. 2018): mean over levels p of
    ``|P̂(y ≤ q_p) − p|`` for p = 0.05, ..., 0.95."""
    levels = np.linspace(0.05, 0.95, n_levels)
    u = norm.cdf((y - mean) / np.sqrt(var))
    return float(np.mean([abs(np.mean(u <= p) - p) for p in levels]))


def reliability_curve(
    probs: np.ndarray, labels: np.ndarray, n_bins: int = 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-label confidence, accuracy and count per equal-width confidence bin."""
    conf = probs.max(1)
    correct = (probs.argmax(1) == labels).astype(float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1]), 0, n_bins - 1)
    c, a, n = np.zeros(n_bins), np.zeros(n_bins), np.zeros(n_bins)
    for b in range(n_bins):
        sel = which == b
        n[b] = sel.sum()
        if n[b]:
            c[b], a[b] = conf[sel].mean(), correct[sel].mean()
    return c, a, n


def classification_ece(probs: np.ndarray, labels: np.ndarray, n_bins: int = 15) -> float:
    """Expected calibration error of the top label (Guo et al. 2017)."""
    c, a, n = reliability_curve(probs, labels, n_bins)
    return float(np.sum(n * np.abs(c - a)) / max(n.sum(), 1))


def prediction_set_coverage(probs: np.ndarray, labels: np.ndarray, level: float = 0.9) -> float:
    """Coverage of the smallest label sets whose predicted mass reaches ``level``."""
    order = np.argsort(-probs, axis=1)
    sorted_p = np.take_along_axis(probs, order, axis=1)
    cum = np.cumsum(sorted_p, axis=1)
    size = (cum < level).sum(1) + 1
    rank = np.argmax(order == labels[:, None], axis=1)
    return float(np.mean(rank < size))


def auroc(score_in: np.ndarray, score_out: np.ndarray) -> float:
    """AUROC of separating out-of-distribution (positive, higher score) from in-distribution."""
    y = np.r_[np.zeros(len(score_in)), np.ones(len(score_out))]
    return float(roc_auc_score(y, np.r_[score_in, score_out]))
