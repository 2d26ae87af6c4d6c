"""Classical GRN baselines on an expression matrix ``x`` ``[cells, genes]``.

Each returns a ``[G(source), G(target)]`` score matrix (the diagonal is ignored).

* :func:`pearson_scores`, :func:`spearman_scores` — ``|rho|`` (symmetric).
* :func:`mutual_information_scores` — plain MI (nats) of equal-frequency discretised genes,
  ``sum_ab p(a,b) log(p(a,b) / p(a) p(b))`` (symmetric; PIDC builds on the same estimate).
* :func:`genie3_scores` — GENIE3 (Huynh-Thu et al. 2010): per target a random forest on all
  other genes; the regulator's impurity importance is the edge score.
* :func:`grnboost2_scores` — GRNBoost2 (Moerman et al. 2019): per target a stochastic
  gradient-boosting regressor with early stopping; importances as scores.

GENIE3 and GRNBoost2 are written on scikit-learn (``arboreto`` does not run with current dask).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata

__all__ = [
    "genie3_scores",
    "grnboost2_scores",
    "mutual_information_scores",
    "pearson_scores",
    "spearman_scores",
]


def _check(x: NDArray[np.floating]) -> NDArray[np.float64]:
    arr: NDArray[np.float64] = np.asarray(x, dtype=np.float64)
    x = arr
    if x.ndim != 2 or x.shape[0] < 3 or x.shape[1] < 2:
        raise ValueError(f"expression must be [cells >= 3, genes >= 2], got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("expression holds NaN or inf")
    return arr


def pearson_scores(x: NDArray[np.floating]) -> NDArray[np.float64]:
    x = _check(x)
    z = x - x.mean(axis=0)
    sd = np.sqrt((z**2).sum(axis=0))
    sd[sd == 0] = 1.0
    z /= sd
    return np.abs(z.T @ z)


def spearman_scores(x: NDArray[np.floating]) -> NDArray[np.float64]:
    return pearson_scores(rankdata(_check(x), axis=0))


def _discretise(x: NDArray[np.float64], n_bins: int) -> NDArray[np.int64]:
    """Equal-frequency bins per gene (ties share a bin)."""
    ranks = rankdata(x, axis=0, method="average")
    return np.minimum(((ranks - 1) / x.shape[0] * n_bins).astype(np.int64), n_bins - 1)


def mutual_information_scores(
    x: NDArray[np.floating], n_bins: int | None = None
) -> NDArray[np.float64]:
    """Plugin MI of every gene pair; ``n_bins`` defaults to ``floor(sqrt(cells) / 2)`` (>= 2)."""
    x = _check(x)
    n = x.shape[0]
    nb = n_bins or max(2, int(np.sqrt(n) / 2))
    codes = _discretise(x, nb)
    onehot = np.zeros((n, x.shape[1], nb))
    np.put_along_axis(onehot, codes[:, :, None], 1.0, axis=2)
    joint = np.einsum("cia,cjb->ijab", onehot, onehot) / n
    marg = onehot.mean(axis=0)  # [G, nb]
    outer = marg[:, None, :, None] * marg[None, :, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log(joint / outer), 0.0)
    return terms.sum(axis=(2, 3))


def _per_target(x: NDArray[np.float64], make_model, seed: int) -> NDArray[np.float64]:  # type: ignore[no-untyped-def]
    g = x.shape[1]
    scores = np.zeros((g, g))
    for j in range(g):
        others = np.r_[0:j, j + 1 : g]
        y = x[:, j]
        if y.std() == 0:
            continue
        model = make_model(seed + j)
        model.fit(x[:, others], (y - y.mean()) / y.std())
        scores[others, j] = model.feature_importances_
    return scores


def genie3_scores(
    x: NDArray[np.floating],
    *,
    n_trees: int = 100,
    max_features: str | float = "sqrt",
    seed: int = 0,
) -> NDArray[np.float64]:
    """GENIE3 with random forests (``K = sqrt`` features per split, as the reference)."""
    from sklearn.ensemble import RandomForestRegressor

    def make(s: int) -> RandomForestRegressor:
        return RandomForestRegressor(
            n_estimators=n_trees, max_features=max_features, random_state=s, n_jobs=1
        )

    return _per_target(_check(x), make, seed)


def grnboost2_scores(
    x: NDArray[np.floating],
    *,
    n_estimators: int = 200,
    learning_rate: float = 0.05,
    seed: int = 0,
) -> NDArray[np.float64]:
    """GRNBoost2: shallow stochastic boosting (subsample 0.9, 10% features per split) with
    early stopping on a held-out tenth of the cells."""
    from sklearn.ensemble import GradientBoostingRegressor

    def make(s: int) -> GradientBoostingRegressor:
        return GradientBoostingRegressor(
            n_estimators=n_estimators,
            learning_rate=learning_rate,
            max_depth=3,
            subsample=0.9,
            max_features=0.1,
            n_iter_no_change=10,
            validation_fraction=0.1,
            random_state=s,
        )

    return _per_target(_check(x), make, seed)
