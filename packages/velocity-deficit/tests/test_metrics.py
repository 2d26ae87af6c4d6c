"""Fréchet distance, sliced Wasserstein and the diagnostics against direct computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import sqrtm
from sklearn.neighbors import NearestNeighbors

from icml26.velocity_deficit.diagnostics import integration_lag, nn_distance
from icml26.velocity_deficit.metrics import (
    FeatureClassifier,
    frechet_distance,
    frechet_distance_gaussians,
    sliced_wasserstein,
)


def _spd(rng: np.random.Generator, d: int) -> np.ndarray:
    a = rng.normal(size=(d, d))
    return a @ a.T + 0.1 * np.eye(d)


def test_fd_equals_direct_formula_with_scipy_sqrtm() -> None:
    rng = np.random.default_rng(0)
    for d in (1, 3, 10):
        m1, m2, c1, c2 = rng.normal(size=d), rng.normal(size=d), _spd(rng, d), _spd(rng, d)
        direct = ((m1 - m2) ** 2).sum() + np.trace(c1 + c2 - 2 * np.real(sqrtm(c1 @ c2)))
        assert frechet_distance_gaussians(m1, c1, m2, c2) == pytest.approx(direct, rel=1e-7)


def test_fd_diagonal_closed_form_and_samples() -> None:
    s1, s2, mu = np.array([1.0, 2.0, 0.5]), np.array([0.5, 2.0, 1.5]), np.array([1.0, 0.0, -1.0])
    exact = (mu**2).sum() + ((s1 - s2) ** 2).sum()
    assert frechet_distance_gaussians(
        np.zeros(3), np.diag(s1**2), mu, np.diag(s2**2)
    ) == pytest.approx(exact)
    rng = np.random.default_rng(1)
    a = rng.normal(size=(200_000, 3)) * s1
    b = mu + rng.normal(size=(200_000, 3)) * s2
    assert frechet_distance(a, b) == pytest.approx(exact, rel=0.02)
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-8)


def test_sliced_wasserstein_shift() -> None:
    """Between N(0, I) and N(m, I) each slice is a 1-D shift by theta.m: SW2 = |m| / sqrt(d)."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2000, 2))
    m = np.array([3.0, 0.0])
    sw = sliced_wasserstein(a, a + m, n_projections=300)
    assert sw == pytest.approx(3.0 / np.sqrt(2), rel=0.05)
    assert sliced_wasserstein(a, a) == pytest.approx(0.0, abs=1e-9)


def test_metric_bad_input() -> None:
    with pytest.raises(ValueError, match="same d"):
        frechet_distance(np.zeros((5, 2)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match="NaN"):
        frechet_distance(np.full((5, 2), np.nan), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="shape mismatch"):
        frechet_distance_gaussians(np.zeros(2), np.eye(3), np.zeros(2), np.eye(2))
    with pytest.raises(ValueError, match="shape mismatch"):
        integration_lag(np.zeros((4, 2)), np.zeros((4, 3)))


def test_integration_lag_and_nn_distance() -> None:
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(500, 4)) + 2.0
    shrunk = ref.mean(0) + 0.8 * (ref - ref.mean(0))
    assert integration_lag(shrunk, ref) == pytest.approx(0.2)
    assert integration_lag(ref, ref) == pytest.approx(0.0)
    q = rng.normal(size=(50, 4))
    expected = NearestNeighbors(n_neighbors=1).fit(ref).kneighbors(q)[0][:, 0]
    np.testing.assert_allclose(nn_distance(q, ref, chunk=7), expected, rtol=1e-5)


def test_feature_classifier_learns_and_identity_without_labels() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 600)
    x = rng.normal(size=(600, 5)) + 3.0 * y[:, None]
    clf = FeatureClassifier(5, 2, width=32, feat_dim=8).fit(x, y, steps=150, x_val=x, y_val=y)
    assert clf.accuracy is not None
    assert clf.accuracy > 0.95
    assert clf.features(x).shape == (600, 8)
    ident = FeatureClassifier(5, 0).fit(x, None)
    np.testing.assert_allclose(ident.features(x), x)
    assert clf.accuracy_on(x, y) == pytest.approx(clf.accuracy)
    with pytest.raises(ValueError, match=r"shape \(n, 5\)"):
        clf.features(np.zeros((3, 4)))
    assert clf.features(x[:4].reshape(4, 5, 1)).shape == (4, 8)  # image-shaped rows flatten
