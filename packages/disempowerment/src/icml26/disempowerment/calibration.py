"""Calibrated rates: correct a classifier's observed class shares with its confusion matrix,
and carry every source of uncertainty into the intervals.

For one variable with classes ``0..K-1`` let ``C[i, j] = P(predicted j | true i)`` (estimated
on a labelled set: rows are conditional on the truth, so an oversampled labelled set is
fine) and ``q`` the observed shares of predicted classes in the log. Then ``q = C^T p`` for
the true shares ``p``; the estimate solves that system and projects onto the simplex
(the matrix-inversion generalisation of the Rogan-Gladen correction).

Intervals come from a parametric bootstrap that redraws, per draw,

* every confusion row from its posterior ``Dirichlet(counts + 1/2)`` (labelled-set error),
* the observed shares from their Jeffreys posterior ``Dirichlet(counts + 1/2)`` (sampling
  error of the log; unlike a multinomial around the observed shares it leaves a class seen
  zero times an interval above zero),
* Laplace noise of the stated scale on every count, when the counts were released under
  differential privacy,

and takes percentiles of the corrected estimates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.shared import log

__all__ = [
    "SINGULAR_CONDITION",
    "RateDraws",
    "check_identifiable",
    "condition_number",
    "confusion_counts",
    "correct_shares",
    "rate_draws",
]


def confusion_counts(
    truth: np.ndarray, pred: np.ndarray, k: int, weights: np.ndarray | None = None
) -> np.ndarray:
    """``(k, k)`` counts, rows = true class, columns = predicted class.

    With ``weights`` (inverse inclusion probabilities of an enriched labelled set), each row
    is the importance-weighted distribution of predictions scaled back to the row's number
    of labelled examples: the row then estimates ``P(pred | true)`` *in the population*
    (a true class is a mixture of kinds of conversations, and enrichment changes the mix)
    while its total still says how much evidence it rests on.
    """
    truth, pred = np.asarray(truth, int), np.asarray(pred, int)
    if truth.shape != pred.shape:
        raise ValueError(f"truth {truth.shape} and pred {pred.shape} differ in shape")
    if truth.size and (truth.min() < 0 or truth.max() >= k or pred.min() < 0 or pred.max() >= k):
        raise ValueError(f"classes must lie in 0..{k - 1}")
    if weights is None:
        out = np.zeros((k, k), dtype=np.int64)
        np.add.at(out, (truth, pred), 1)
        return out
    w = np.asarray(weights, float)
    if w.shape != truth.shape or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be positive, finite, one per labelled example")
    raw = np.zeros((k, k))
    np.add.at(raw, (truth, pred), 1.0)
    wsum = np.zeros((k, k))
    np.add.at(wsum, (truth, pred), w)
    tot = wsum.sum(axis=1, keepdims=True)
    return np.where(tot > 0, wsum / np.maximum(tot, 1e-300), 0.0) * raw.sum(axis=1, keepdims=True)


def _rows(counts: np.ndarray) -> np.ndarray:
    tot = counts.sum(axis=-1, keepdims=True)
    k = counts.shape[-1]
    eye = np.broadcast_to(np.eye(k), counts.shape)
    # a class never seen in the labelled set: assume it is recognised (identity row)
    return np.where(tot > 0, counts / np.maximum(tot, 1), eye)


#: Condition numbers are reported up to this value; a singular matrix reports it.
SINGULAR_CONDITION = 1e12


def condition_number(conf_counts: np.ndarray) -> float:
    """The 2-norm condition number of the row-normalised confusion matrix (``inf`` when
    singular), as :func:`rate_draws` checks it.

    Args:
        conf_counts: ``(K, K)`` labelled-set confusion counts, rows = truth.

    Returns:
        The condition number.
    """
    rows = _rows(np.asarray(conf_counts, dtype=float))
    singular = np.linalg.matrix_rank(rows) < rows.shape[0]
    return float("inf") if singular else float(np.linalg.cond(rows))


def check_identifiable(conf_counts: np.ndarray, name: str = "the classifier") -> float:
    """Refuse an uninformative classifier; report how well a confusion matrix is conditioned.

    A classifier that predicts one class only while the audit set holds several true classes
    says nothing about the true shares, and the correction would return confident numbers made up by the
    pseudo-inverse: refused. A class never predicted leaves its share unidentified (the
    intervals of the bootstrap, whose confusion draws are never singular, are then wide):
    reported through the condition number and logged.

    Args:
        conf_counts: ``(K, K)`` labelled-set confusion counts, rows = truth.
        name: what the matrix belongs to, for the message.

    Returns:
        Its condition number, at most :data:`SINGULAR_CONDITION` (reported for singular).

    Raises:
        ValueError: the classifier predicted one class only on an audit set holding several.
    """
    counts = np.asarray(conf_counts, dtype=float)
    used = [j for j in range(len(counts)) if counts[:, j].sum() > 0]
    seen = int((counts.sum(axis=1) > 0).sum())
    if seen >= 2 and len(used) <= 1:
        raise ValueError(
            f"{name}: the classifier predicted only class {used} on the whole audit set, so "
            "its predictions carry no information about the true shares. Use a classifier "
            "that predicts every class on the audit set, or a larger audit set"
        )
    cond = min(condition_number(counts), SINGULAR_CONDITION)
    if len(used) < len(counts):
        never = sorted(set(range(len(counts))) - set(used))
        log(
            f"{name}: classes {never} never predicted on the audit set; their shares are "
            f"not identified (condition number {cond:.3g})"
        )
    return cond


def correct_shares(q: np.ndarray, conf: np.ndarray) -> np.ndarray:
    """True shares ``p`` from observed shares ``q`` (``(..., K)``) and row-stochastic
    ``conf`` (``(..., K, K)``, broadcast): solve ``conf^T p = q``, clip at 0, renormalise.

    An ill-conditioned confusion matrix falls back to least squares.
    """
    q = np.asarray(q, dtype=float)
    conf = np.asarray(conf, dtype=float)
    ct = np.swapaxes(conf, -1, -2)
    ct, q = np.broadcast_arrays(ct, q[..., :, None])
    try:
        p = np.linalg.solve(ct, q)[..., 0]
    except np.linalg.LinAlgError:
        p = np.einsum("...ij,...j->...i", np.linalg.pinv(ct), q[..., 0])
    p = np.clip(p, 0.0, None)
    tot = p.sum(axis=-1, keepdims=True)
    return np.where(tot > 0, p / np.where(tot > 0, tot, 1), 1.0 / p.shape[-1])


@dataclass
class RateDraws:
    """Point estimates and bootstrap draws of corrected shares for ``G`` groups.

    Attributes:
        point: ``(G, K)`` corrected shares.
        draws: ``(B, G, K)`` bootstrap draws.
        observed: ``(G, K)`` observed (uncorrected) predicted shares.
        n: ``(G,)`` conversations per group (after any DP noise).
    """

    point: np.ndarray
    draws: np.ndarray
    observed: np.ndarray
    n: np.ndarray

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        a = (1 - level) / 2
        return np.quantile(self.draws, a, axis=0), np.quantile(self.draws, 1 - a, axis=0)


def rate_draws(
    counts: np.ndarray,
    conf_counts: np.ndarray,
    *,
    draws: int,
    rng: np.random.Generator,
    dp_scale: float = 0.0,
    conf_draws: np.ndarray | None = None,
) -> RateDraws:
    """Corrected shares with bootstrap draws (see the module docstring).

    Args:
        counts: ``(G, K)`` predicted-class counts per group (possibly DP-noised, so real).
        conf_counts: ``(K, K)`` labelled-set confusion counts.
        draws: bootstrap draws ``B``.
        dp_scale: Laplace scale of the noise already on ``counts`` (0: none).
        conf_draws: ``(B, K, K)`` confusion rows to use instead of drawing them (so several
            group tables share one labelled-set draw, as they share one labelled set).
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    if np.any(~np.isfinite(counts)):
        raise ValueError("counts must be finite")
    if draws < 1:
        raise ValueError("draws must be at least 1")
    g, k = counts.shape
    if conf_counts.shape != (k, k):
        raise ValueError(f"conf_counts must be ({k}, {k}), got {conf_counts.shape}")
    check_identifiable(conf_counts)
    clipped = np.clip(counts, 0, None)
    n = clipped.sum(axis=1)
    q = clipped / np.maximum(n, 1e-12)[:, None]
    point = correct_shares(q, _rows(conf_counts))
    if conf_draws is None:
        conf_draws = draw_confusions(conf_counts, draws, rng)
    # Jeffreys posterior of the observed shares (not a multinomial around q: a class seen
    # zero times must still get an interval that reaches above zero)
    sim = rng.standard_gamma(clipped[None, :, :] + 0.5, size=(draws, g, k))
    sim = sim / sim.sum(axis=2, keepdims=True) * n[None, :, None]
    if dp_scale > 0:
        sim = sim + rng.laplace(0.0, dp_scale, size=sim.shape)
        sim = np.clip(sim, 0, None)
    tot = sim.sum(axis=2, keepdims=True)
    q_sim = np.where(tot > 0, sim / np.maximum(tot, 1e-12), 1.0 / k)
    draws_p = correct_shares(q_sim, conf_draws[:, None, :, :])
    return RateDraws(point=point, draws=draws_p, observed=q, n=n)


def draw_confusions(conf_counts: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``(B, K, K)`` row-stochastic draws from ``Dirichlet(counts + 1/2)`` per row; a row
    with no labelled example is the identity row in every draw (as in the point estimate)."""
    k = conf_counts.shape[0]
    g = rng.standard_gamma(conf_counts[None, :, :] + 0.5, size=(draws, k, k))
    rows = g / g.sum(axis=2, keepdims=True)
    empty = conf_counts.sum(axis=1) <= 0
    rows[:, empty, :] = np.eye(k)[empty]
    return rows
