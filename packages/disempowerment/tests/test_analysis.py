"""Analysis helpers against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from icml26.disempowerment.analysis import (
    AnalysisInputs,
    analyse,
    calibration_from_labels,
    grouped_logistic,
)
from icml26.disempowerment.labels import Labels, macro_f1


def test_grouped_logistic_matches_sklearn_on_expanded_rows() -> None:
    rng = np.random.default_rng(0)
    x = np.array([[1.0, lv, d] for d in (0, 1) for lv in range(4)])
    trials = rng.integers(50, 200, len(x))
    succ = rng.binomial(trials, 1 / (1 + np.exp(-(0.2 + 0.4 * x[:, 1] - 0.3 * x[:, 2]))))
    beta, se = grouped_logistic(x, succ.astype(float), trials.astype(float))
    rows = np.repeat(x[:, 1:], trials, axis=0)
    y = np.concatenate(
        [np.r_[np.ones(s), np.zeros(t - s)] for s, t in zip(succ, trials, strict=True)]
    )
    ref = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(rows, y)
    np.testing.assert_allclose(beta, np.r_[ref.intercept_, ref.coef_[0]], atol=1e-5)
    assert (se > 0).all()


def test_macro_f1_matches_sklearn() -> None:
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(1)
    t, p = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    assert macro_f1(t, p, 4) == pytest.approx(f1_score(t, p, average="macro"))


def test_perfect_labels_give_binomial_rates_and_the_trend() -> None:
    rng = np.random.default_rng(2)
    n = 30_000
    month = rng.integers(0, 12, n)
    p = 0.02 + 0.002 * month  # rising share with reality >= mild
    sev = np.zeros((n, 3), int)
    sev[rng.random(n) < p, 0] = 1
    pred = Labels(sev, np.zeros((n, 4), bool), rng.integers(0, 6, n))
    users = np.array([f"u{i % 3000}" for i in range(n)])
    res = analyse(
        AnalysisInputs(pred, users, [f"c{i}" for i in range(n)], month, rng.integers(-1, 2, n)),
        calibration_from_labels(pred, pred),
        k=25,
        epsilon=None,
        cap=5,
        draws=1000,
        level=0.95,
        rng=rng,
    )
    m = res.metrics
    assert m["rate.reality.mild"] == pytest.approx(np.mean(sev[:, 0] == 1))
    assert m["trend_slope.reality.lo"] < 0.002 < m["trend_slope.reality.hi"]
    assert m["trend_slope.reality.lo"] > 0
