"""BEELINE-style scores for a ranked list of directed gene pairs.

Every function takes ``labels`` (1 for a true edge ``i -> j``, 0 otherwise) and ``scores``
(higher = more likely an edge) over the same candidate pairs, as 1-D arrays.

* :func:`auprc` — area under the precision-recall curve: by default average precision (the
  step-wise sum of precision at each recall increment, ties as one block, scikit-learn's
  ``average_precision_score``); ``convention="beeline"``: BEELINE's, PRROC's
  ``auc.davis.goadrich`` (Davis & Goadrich's interpolation between operating points,
  trapezoids in recall), which BEELINE reads from ``pr.curve(scores, weights.class0=labels)``.
* :func:`auprc_ratio` — AUPRC divided by the edge density (the AUPRC of a random ranking),
  BEELINE's "AUPRC ratio".
* :func:`epr` — early precision ratio: precision among the top-``k`` pairs, ``k`` = number of
  true edges, divided by the edge density. Ties at the ``k``-th score: by default the expected
  precision of a random tie-break (a constant scorer gets exactly 1); ``convention="beeline"``
  keeps every pair scoring at least the ``k``-th score (and at least the smallest non-zero
  score), as BEELINE's ``EarlyPrecision`` does.
* :func:`chance_levels` — each metric's distribution under a random ranking of the same
  pairs (permutations): the chance level and its SD, computed rather than assumed (balanced
  AUPRC's chance is not 0.5: about 0.54 for 23 edges).
* :func:`balanced_auprc` — the paper's balanced-pair AUPRC: AUPRC on every positive plus an
  equal number of negatives drawn at random, averaged over ``draws`` draws (chance = 0.5).
* :func:`auroc` — area under the ROC curve (Mann-Whitney statistic, ties count one half).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "METRICS",
    "auprc",
    "auprc_ratio",
    "auroc",
    "balanced_auprc",
    "chance_levels",
    "epr",
    "score_all",
]

#: The figures of the benchmark (metric-key names).
METRICS = ("auprc_ratio", "auprc_ratio_beeline", "epr", "epr_beeline", "balanced_auprc", "auroc")
CONVENTIONS = ("ours", "beeline")


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


def _blocks(y: NDArray[np.int64], s: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """Cumulative (TP, FP) at the end of each block of tied scores, best first."""
    order = np.argsort(-s, kind="mergesort")
    y, s = y[order], s[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), y.size - 1]
    tp = np.cumsum(y)[last].astype(np.float64)
    return tp, (last + 1) - tp


def _davis_goadrich(y: NDArray[np.int64], s: NDArray[np.float64]) -> float:
    """PRROC's ``auc.davis.goadrich``: between operating points A -> B, one point per extra
    true positive, ``TP_A + x`` with ``FP_A + x (FP_B - FP_A) / (TP_B - TP_A)``; trapezoids
    in recall, the curve starting at recall 0 with the first point's precision."""
    tp, fp = _blocks(y, s)
    prev_tp, prev_fp = np.r_[0.0, tp[:-1]], np.r_[0.0, fp[:-1]]
    dtp, dfp = tp - prev_tp, fp - prev_fp
    reps = np.maximum(dtp, 1).astype(np.int64)
    blk = np.repeat(np.arange(tp.size), reps)
    x = np.arange(blk.size) - np.repeat(np.cumsum(reps) - reps, reps) + 1.0
    has_tp = dtp[blk] > 0
    t = np.where(has_tp, prev_tp[blk] + x, prev_tp[blk])
    f = np.where(has_tp, prev_fp[blk] + dfp[blk] * x / np.maximum(dtp[blk], 1), fp[blk])
    ok = t > 0
    recall = np.r_[0.0, t[ok] / y.sum()]
    precision = t[ok] / (t[ok] + f[ok])
    precision = np.r_[precision[0], precision]
    return float(np.sum(np.diff(recall) * (precision[1:] + precision[:-1]) / 2))


def auprc(labels: ArrayLike, scores: ArrayLike, *, convention: str = "ours") -> float:
    """Area under the precision-recall curve.

    Args:
        labels: 1 for a true edge, 0 otherwise.
        scores: higher = more likely an edge.
        convention: ``"ours"`` (average precision, ``sum_k (R_k - R_{k-1}) P_k`` over
            distinct thresholds) or ``"beeline"`` (PRROC's Davis-Goadrich integral).

    Returns:
        The area, in (0, 1].

    Raises:
        ValueError: bad labels or scores, or an unknown convention.
    """
    y, s = _check(labels, scores)
    if convention == "beeline":
        return _davis_goadrich(y, s)
    if convention != "ours":
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    tp, fp = _blocks(y, s)
    precision = tp / (tp + fp)
    recall = tp / y.sum()
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def auprc_ratio(labels: ArrayLike, scores: ArrayLike, *, convention: str = "ours") -> float:
    """AUPRC (:func:`auprc`) over the edge density (BEELINE's "AUPRC ratio")."""
    y, s = _check(labels, scores)
    return auprc(y, s, convention=convention) / y.mean()


def epr(labels: ArrayLike, scores: ArrayLike, *, convention: str = "ours") -> float:
    """Early precision ratio: precision@k (k = #edges) over the edge density.

    Args:
        labels: as for :func:`auprc`.
        scores: as for :func:`auprc`.
        convention: ``"ours"`` (ties at the k-th score resolved by the expected precision of a
            random tie-break, so an all-constant scorer gets exactly 1) or ``"beeline"``
            (every pair scoring at least ``max(k-th score, smallest non-zero score)``).

    Returns:
        The ratio (1 for a random ranking on average).
    """
    y, s = _check(labels, scores)
    k = int(y.sum())
    order = np.argsort(-s, kind="mergesort")
    kth = s[order[k - 1]]
    if convention == "beeline":
        nonzero = s[s != 0]
        best = max(float(nonzero.min()), kth) if nonzero.size else kth
        chosen = s >= best
        return float(y[chosen].mean() / y.mean())
    if convention != "ours":
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
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
    """Every figure of :data:`METRICS` on one ranking.

    Args:
        labels: as for :func:`auprc`.
        scores: as for :func:`auprc`.
        seed: the balanced AUPRC's negative draws.

    Returns:
        ``{metric: value}``.
    """
    return {
        "auprc_ratio": auprc_ratio(labels, scores),
        "auprc_ratio_beeline": auprc_ratio(labels, scores, convention="beeline"),
        "epr": epr(labels, scores),
        "epr_beeline": epr(labels, scores, convention="beeline"),
        "balanced_auprc": balanced_auprc(labels, scores, seed=seed),
        "auroc": auroc(labels, scores),
    }


def chance_levels(
    labels: ArrayLike, *, permutations: int = 200, seed: int = 0
) -> dict[str, NDArray[np.float64]]:
    """Every metric of :data:`METRICS` for ``permutations`` random rankings of the pairs.

    Args:
        labels: the pairs' labels.
        permutations: random rankings drawn.
        seed: their seed.

    Returns:
        ``{metric: [permutations] values}``: the null distribution (its mean is the chance
        level, its SD the scale of a random ranking's noise).
    """
    y = np.asarray(labels)
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {m: [] for m in METRICS}
    for k in range(permutations):
        for m, v in score_all(y, rng.random(y.size), seed=seed + k).items():
            out[m].append(v)
    return {m: np.asarray(v) for m, v in out.items()}
