"""BEELINE-style scores for a ranked list of directed gene pairs.

Every function takes ``labels`` (1 for a true edge ``i -> j``, 0 otherwise) and ``scores``
(higher = more likely an edge) over the same candidate pairs, as 1-D arrays.

* :func:`auprc` — area under the precision-recall curve, computed as average precision
  (the step-wise sum of precision at each recall increment, ties broken as one block).
* :func:`auprc_ratio` — AUPRC divided by the edge density (the AUPRC of a random ranking),
  BEELINE's "AUPRC ratio".
* :func:`epr` — early precision ratio: precision among the top-``k`` pairs, ``k`` = number of
  true edges, divided by the edge density (BEELINE's EPR).
* :func:`balanced_auprc` — the paper's balanced-pair AUPRC: AUPRC on every positive plus an
  equal number of negatives drawn at random, averaged over ``draws`` draws (chance = 0.5).
* :func:`auroc` — area under the ROC curve (Mann-Whitney statistic, ties count one half).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["auprc", "auprc_ratio", "auroc", "balanced_auprc", "epr", "score_all"]


def _check(labels: ArrayLike, scores: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.shape != y.shape:
        raise ValueError(
            f"labels and scores must be 1-D of one length, got {y.shape} and {s.shape}"
        )
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite (no NaN or inf)")
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        raise ValueError("labels need at least one positive and one negative pair")
    return y.astype(np.int64), s


def auprc(labels: ArrayLike, scores: ArrayLike) -> float:
    """Average precision: ``sum_k (R_k - R_{k-1}) P_k`` over distinct score thresholds."""
    y, s = _check(labels, scores)
    order = np.argsort(-s, kind="mergesort")
    y, s = y[order], s[order]
    # the last index of every block of tied scores is a threshold
    last = np.r_[np.flatnonzero(np.diff(s) != 0), y.size - 1]
    tp = np.cumsum(y)[last]
    precision = tp / (last + 1)
    recall = tp / y.sum()
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def auprc_ratio(labels: ArrayLike, scores: ArrayLike) -> float:
    """AUPRC over the AUPRC of a random ranking (the edge density)."""
    y, s = _check(labels, scores)
    return auprc(y, s) / y.mean()


def epr(labels: ArrayLike, scores: ArrayLike) -> float:
    """Early precision ratio: precision@k (k = #edges) over the edge density.

    Ties at the k-th score are resolved by the expected precision of a random tie-break,
    so an all-constant scorer gets exactly 1.
    """
    y, s = _check(labels, scores)
    k = int(y.sum())
    order = np.argsort(-s, kind="mergesort")
    kth = s[order[k - 1]]
    above = s > kth
    tied = s == kth
    n_above = int(above.sum())
    hits = y[above].sum() + (k - n_above) * y[tied].mean()
    return float(hits / k / y.mean())


def auroc(labels: ArrayLike, scores: ArrayLike) -> float:
    """Probability that a random edge outscores a random non-edge (ties count 1/2)."""
    y, s = _check(labels, scores)
    # average ranks handle ties
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(s.size, dtype=np.float64)
    sorted_s = s[order]
    start = 0
    while start < s.size:
        stop = start
        while stop + 1 < s.size and sorted_s[stop + 1] == sorted_s[start]:
            stop += 1
        ranks[order[start : stop + 1]] = 0.5 * (start + stop) + 1.0
        start = stop + 1
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def balanced_auprc(
    labels: ArrayLike, scores: ArrayLike, *, draws: int = 20, seed: int = 0
) -> float:
    """AUPRC with as many negatives as positives (drawn at random, mean over ``draws``).

    When there are fewer negatives than positives, positives are subsampled instead.
    """
    y, s = _check(labels, scores)
    if draws < 1:
        raise ValueError("draws must be >= 1")
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    n = min(pos.size, neg.size)
    values = []
    for _ in range(draws):
        idx = np.r_[rng.choice(pos, n, replace=False), rng.choice(neg, n, replace=False)]
        values.append(auprc(y[idx], s[idx]))
    return float(np.mean(values))


def score_all(labels: ArrayLike, scores: ArrayLike, *, seed: int = 0) -> dict[str, float]:
    """The four figures of the benchmark, keyed as in the metric contract."""
    return {
        "auprc_ratio": auprc_ratio(labels, scores),
        "epr": epr(labels, scores),
        "balanced_auprc": balanced_auprc(labels, scores, seed=seed),
        "auroc": auroc(labels, scores),
    }
