"""Confusion-matrix correction and the bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import confusion_matrix

from icml26.disempowerment.calibration import (
    SINGULAR_CONDITION,
    check_identifiable,
    condition_number,
    confusion_counts,
    correct_shares,
    draw_confusions,
    rate_draws,
)


def _simplex(x: np.ndarray) -> np.ndarray:
    x = np.abs(x) + 1e-3
    return x / x.sum()


@given(
    arrays(float, 4, elements=st.floats(0, 1)),
    arrays(float, (4, 4), elements=st.floats(0, 0.15)),
)
def test_correction_recovers_a_known_rate_from_a_known_confusion_matrix(p, off) -> None:
    p = _simplex(p)
    conf = off.copy()
    np.fill_diagonal(conf, 0)
    conf = conf / np.maximum(conf.sum(axis=1, keepdims=True), 1) * 0.3  # off-diagonal <= 0.3
    np.fill_diagonal(conf, 1 - conf.sum(axis=1))
    q = conf.T @ p
    np.testing.assert_allclose(correct_shares(q, conf), p, atol=1e-9)


def test_correction_undoes_known_misclassification() -> None:
    # 1% of negatives read as positive; 80% recall: observed 0.01*0.99+0.8*0.01 = 0.0179
    conf = np.array([[0.99, 0.01], [0.2, 0.8]])
    p = correct_shares(np.array([1 - 0.0179, 0.0179]), conf)
    assert p[1] == pytest.approx(0.01, abs=1e-12)


def test_confusion_counts_match_sklearn() -> None:
    rng = np.random.default_rng(0)
    t, p = rng.integers(0, 4, 500), rng.integers(0, 4, 500)
    np.testing.assert_array_equal(
        confusion_counts(t, p, 4), confusion_matrix(t, p, labels=range(4))
    )
    with pytest.raises(ValueError, match="classes"):
        confusion_counts(np.array([5]), np.array([0]), 4)


def test_rate_interval_on_a_known_binomial() -> None:
    """A perfect classifier: the interval is a binomial interval. Over 300 fresh samples of
    n = 20,000 at p = 1e-3 it must cover p close to 95% of the time and be as wide as the
    normal-approximation interval."""
    rng = np.random.default_rng(3)
    n, p = 20_000, 1e-3
    eye_counts = np.diag([50_000, 50_000]).astype(float)
    cover, widths = [], []
    for _ in range(300):
        x = rng.binomial(n, p)
        rd = rate_draws(np.array([[n - x, x]]), eye_counts, draws=600, rng=rng)
        lo, hi = rd.interval(0.95)
        cover.append(lo[0, 1] <= p <= hi[0, 1])
        widths.append(hi[0, 1] - lo[0, 1])
    # 300 Bernoulli(0.95): sd 0.0126, the band is > 3 sd wide on each side
    assert 0.90 <= np.mean(cover) <= 0.99
    assert np.mean(widths) == pytest.approx(2 * 1.96 * np.sqrt(p * (1 - p) / n), rel=0.15)


def test_calibration_uncertainty_widens_the_interval() -> None:
    rng = np.random.default_rng(4)
    counts = np.array([[9900.0, 100.0]])
    sharp = rate_draws(counts, np.array([[100_000, 10], [10, 100_000]]), draws=2000, rng=rng)
    vague = rate_draws(counts, np.array([[1000, 1], [20, 80]]), draws=2000, rng=rng)
    w = lambda rd: np.subtract(*rd.interval()[::-1])[0, 1]  # noqa: E731
    assert w(vague) > 1.2 * w(sharp)


def test_dp_noise_widens_the_interval() -> None:
    rng = np.random.default_rng(5)
    counts = np.array([[99_000.0, 1000.0]])
    conf = np.diag([10**6, 10**6])
    plain = rate_draws(counts, conf, draws=2000, rng=rng)
    noisy = rate_draws(counts, conf, draws=2000, rng=rng, dp_scale=50.0)
    w = lambda rd: np.subtract(*rd.interval()[::-1])[0, 1]  # noqa: E731
    # binomial sd 31 counts, Laplace(50) sd 71: the interval must be clearly wider
    assert w(noisy) > 1.8 * w(plain)


def test_dirichlet_rows_are_stochastic() -> None:
    d = draw_confusions(np.array([[5, 0], [1, 9]]), 50, np.random.default_rng(0))
    np.testing.assert_allclose(d.sum(axis=2), 1.0)
    assert (d > 0).all()


def test_bad_counts() -> None:
    with pytest.raises(ValueError, match="finite"):
        rate_draws(np.array([[np.nan, 1.0]]), np.eye(2), draws=10, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="conf_counts"):
        rate_draws(np.array([[1.0, 1.0]]), np.eye(3), draws=10, rng=np.random.default_rng(0))


def test_weighted_rows_estimate_the_population_mix() -> None:
    """A true class mixing two kinds of conversations, enriched 9:1 in the labelled set for
    the confusable kind: unweighted rows are biased, importance-weighted rows are not."""
    rng = np.random.default_rng(6)
    # population: 90% easy negatives (1% false positives), 10% hard ones (30%)
    easy, hard = 2000, 2000  # labelled set: equal numbers, i.e. hard ones oversampled 9x
    pred = np.r_[rng.random(easy) < 0.01, rng.random(hard) < 0.30].astype(int)
    truth = np.zeros(easy + hard, int)
    w = np.r_[np.full(easy, 0.9 / 0.5), np.full(hard, 0.1 / 0.5)]
    raw = confusion_counts(truth, pred, 2)
    weighted = confusion_counts(truth, pred, 2, w)
    fp_raw = raw[0, 1] / raw[0].sum()
    fp_w = weighted[0, 1] / weighted[0].sum()
    assert fp_raw == pytest.approx(0.155, abs=0.02)
    assert fp_w == pytest.approx(0.9 * 0.01 + 0.1 * 0.30, abs=0.006)
    assert weighted[0].sum() == pytest.approx(easy + hard)
    with pytest.raises(ValueError, match="weights"):
        confusion_counts(truth, pred, 2, -w)


def test_zero_count_still_gets_an_interval_above_zero() -> None:
    rd = rate_draws(
        np.array([[10_000.0, 0.0]]), np.diag([1000, 1000]), draws=2000, rng=np.random.default_rng(7)
    )
    lo, hi = rd.interval()
    assert lo[0, 1] == 0.0
    # Jeffreys upper 97.5% bound for 0 of 10,000 is about 2.5e-4
    assert 1e-4 < hi[0, 1] < 4e-4


def test_condition_number_matches_numpy_and_singular_is_infinite() -> None:
    counts = np.array([[80, 10, 5, 5], [10, 70, 10, 10], [5, 5, 60, 30], [2, 3, 15, 80]])
    rows = counts / counts.sum(axis=1, keepdims=True)
    assert condition_number(counts) == pytest.approx(np.linalg.cond(rows))
    constant = np.zeros((4, 4))
    constant[:, 0] = [500, 40, 20, 5]  # a classifier that always says "none"
    assert condition_number(constant) == float("inf")


def test_a_constant_classifier_gets_no_confident_rates() -> None:
    constant = np.zeros((4, 4))
    constant[:, 0] = [500, 40, 20, 5]
    with pytest.raises(ValueError, match=r"reality: .*predicted only class \[0\]"):
        check_identifiable(constant, "reality")
    with pytest.raises(ValueError, match="no information"):
        rate_draws(np.array([[900.0, 0, 0, 0]]), constant, draws=50, rng=np.random.default_rng(0))


def test_a_class_never_predicted_is_reported_not_refused() -> None:
    counts = np.array([[500.0, 10, 0, 0], [20, 30, 0, 5], [5, 10, 0, 5], [1, 2, 0, 6]])
    assert check_identifiable(counts, "value") == SINGULAR_CONDITION
    rd = rate_draws(np.array([[900.0, 60, 0, 40]]), counts, draws=400, rng=np.random.default_rng(1))
    lo, hi = rd.interval()
    assert hi[0, 2] - lo[0, 2] > 0.05  # the unidentified share gets a wide interval
