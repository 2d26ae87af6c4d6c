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


def test_approval_correction_uses_the_rated_subsets_prevalence() -> None:
    """Rating depends strongly on severity and the classifier confuses levels: the corrected
    association (prevalence of the rated subset) recovers the truth among rated ones."""
    rng = np.random.default_rng(7)
    n = 200_000
    level = rng.choice(4, n, p=[0.9, 0.06, 0.03, 0.01])
    rated_p = np.array([0.1, 0.3, 0.6, 0.8])[level]  # the intense ones are rated far more
    rated = rng.random(n) < rated_p
    up_p = np.array([0.5, 0.55, 0.7, 0.75])[level]
    feedback = np.where(rated, (rng.random(n) < up_p).astype(int), -1)
    conf = np.array(
        [
            [0.95, 0.04, 0.01, 0.0],
            [0.2, 0.6, 0.15, 0.05],
            [0.05, 0.15, 0.7, 0.1],
            [0.0, 0.1, 0.3, 0.6],
        ]
    )

    def confuse(t: np.ndarray) -> np.ndarray:
        return (rng.random(len(t))[:, None] > np.cumsum(conf[t], axis=1)).sum(axis=1)

    pred_level = confuse(level)
    sev = np.zeros((n, 3), int)
    sev[:, 0] = pred_level
    truth_sev = np.zeros((n, 3), int)
    truth_sev[:, 0] = level
    users = np.array([f"u{i % 20_000}" for i in range(n)])
    pred = Labels(sev, np.zeros((n, 4), bool), rng.integers(0, 6, n))
    # calibration set: a separate labelled sample with the same confusion
    t_cal = rng.choice(4, 40_000, p=[0.4, 0.2, 0.2, 0.2])
    p_cal = confuse(t_cal)
    z = np.zeros((len(t_cal), 2), int)
    cal = calibration_from_labels(
        Labels(np.c_[t_cal, z], np.zeros((len(t_cal), 4), bool), np.zeros(len(t_cal), int)),
        Labels(np.c_[p_cal, z], np.zeros((len(t_cal), 4), bool), np.zeros(len(t_cal), int)),
    )
    res = analyse(
        AnalysisInputs(pred, users, [f"c{i}" for i in range(n)], rng.integers(0, 12, n), feedback),
        cal,
        k=25,
        epsilon=None,
        cap=5,
        draws=400,
        level=0.95,
        rng=rng,
    )
    up = feedback == 1
    truth = up[rated & (level >= 2)].mean() - up[rated & (level == 0)].mean()
    m = res.metrics
    assert m["approval_association.lo"] <= truth <= m["approval_association.hi"]
    assert abs(m["approval_association"] - truth) < abs(m["approval_association_raw"] - truth)
