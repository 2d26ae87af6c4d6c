"""Metrics against independent references: scikit-learn's reliability curve, closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.weak_strong.metrics import (
    error_rates,
    expected_calibration_error,
    reliability_curve,
    resolution,
    running_error_rates,
    sharpness,
)


def test_error_rates_by_hand() -> None:
    labels = np.array([1, 1, 1, 0, 0])
    accepted = np.array([1, 0, 1, 1, 0])
    queried = np.array([0, 1, 0, 0, 1])
    r = error_rates(accepted, labels, queried)
    assert r.incorrect_accept == pytest.approx(1 / 2)
    assert r.incorrect_reject == pytest.approx(1 / 3)
    assert r.strong_freq == pytest.approx(2 / 5)
    assert r.final_accuracy == pytest.approx(3 / 5)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_running_rates_end_at_the_totals(rows: list[tuple[bool, bool, bool]]) -> None:
    acc, lab, q = (np.array(c) for c in zip(*rows, strict=True))
    run = running_error_rates(acc, lab, q)
    total = error_rates(acc, lab, q)
    for key, value in total.as_dict().items():
        assert run[key][-1] == pytest.approx(value)
        assert np.all((run[key] >= 0) & (run[key] <= 1))


def test_reliability_curve_matches_sklearn() -> None:
    calibration_curve = pytest.importorskip("sklearn.calibration").calibration_curve
    rng = np.random.default_rng(0)
    s = rng.random(3000)
    y = rng.random(3000) < s**1.5
    conf, acc, _ = reliability_curve(s, y, bins=10)
    prob_true, prob_pred = calibration_curve(y, s, n_bins=10, strategy="uniform")
    np.testing.assert_allclose(acc, prob_true, atol=1e-12)
    np.testing.assert_allclose(conf, prob_pred, atol=1e-12)


def test_ece_constructed_cases() -> None:
    rng = np.random.default_rng(1)
    s = rng.random(200_000)
    y = rng.random(s.size) < s  # calibrated by construction
    assert expected_calibration_error(s, y) < 0.01
    # Always 0.9 confident, right half the time: ECE = 0.4 exactly.
    s2 = np.full(1000, 0.9)
    y2 = np.arange(1000) % 2 == 0
    assert expected_calibration_error(s2, y2) == pytest.approx(0.4)


def test_sharpness_and_resolution_closed_forms() -> None:
    y = np.array([1, 0, 1, 1, 0, 1, 1, 1])
    pi = y.mean()
    assert sharpness(np.full(8, 0.3)) == 0.0
    assert sharpness(y.astype(float)) == pytest.approx(pi * (1 - pi))
    # Perfect scores resolve everything: Var(E[H|S]) = pi (1 - pi).
    assert resolution(y.astype(float), y) == pytest.approx(pi * (1 - pi))
    assert resolution(np.full(8, 0.5), y) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([0.2, 1.5], [0, 1], "must lie in \\[0, 1\\]"),
        ([0.2, float("nan")], [0, 1], "non-finite"),
        ([[0.2, 0.3]], [0, 1], "1-D"),
        ([0.2, 0.3], [0, 2], "0/1 or booleans"),
        ([0.2, 0.3], [0, 1, 1], "differ in length"),
    ],
)
def test_bad_input(scores, labels, message) -> None:
    with pytest.raises(ValueError, match=message):
        expected_calibration_error(scores, labels)
