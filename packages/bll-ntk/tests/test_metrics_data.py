"""Metrics on cases with known answers; data loading and its errors; the wheel bandit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.bll_ntk import metrics as M
from icml26.bll_ntk.bandit import WheelBandit
from icml26.bll_ntk.bandit_runner import BanditSettings, run_thompson
from icml26.bll_ntk.data import load_classification, load_regression, regression_split


def test_regression_metrics_on_a_calibrated_gaussian() -> None:
    rng = np.random.default_rng(0)
    mean, sd = rng.normal(size=20000), rng.uniform(0.5, 2.0, size=20000)
    y = mean + sd * rng.normal(size=20000)
    assert M.interval_coverage(y, mean, sd**2, 0.9) == pytest.approx(0.9, abs=0.01)
    assert M.regression_ece(y, mean, sd**2) < 0.01
    assert M.regression_ece(y, mean, (0.3 * sd) ** 2) > 0.1  # overconfident
    nll = M.gaussian_nll(y, mean, sd**2)
    assert nll == pytest.approx(np.mean(0.5 * np.log(2 * np.pi * sd**2) + 0.5), abs=0.02)


def test_classification_metrics() -> None:
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(4), size=20000)
    labels = np.array([rng.choice(4, p=p) for p in probs])
    assert M.classification_ece(probs, labels) < 0.02  # labels drawn from the probabilities
    assert M.prediction_set_coverage(probs, labels, 0.9) >= 0.88
    onehot = np.eye(4)[labels]
    assert M.classification_ece(onehot, labels) == 0.0
    assert M.auroc(np.zeros(5), np.ones(5)) == 1.0
    assert M.auroc(np.ones(5), np.zeros(5)) == 0.0


def test_data_sets_load_and_split() -> None:
    X, y = load_regression("autompg")
    assert X.shape == (392, 8)
    assert np.isfinite(X).all()
    s = regression_split(X, y, seed=0)
    assert s.x_train.shape[0] + s.x_test.shape[0] == 392
    assert abs(float(s.y_train.mean())) < 1e-5
    task = load_classification("digits", seed=0)
    assert task.n_classes == 8
    assert int(task.y_train.max()) == 7
    assert set(task.ood) == {"digits_heldout", "digits_noise", "digits_shift"}


def test_csv_and_bad_names(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    rows = ["a,b,name,target"] + [
        f"{rng.normal()},{rng.normal()},x,{rng.normal()}" for _ in range(30)
    ]
    path.write_text("\n".join(rows))
    X, y = load_regression(f"csv:{path}")
    assert X.shape == (30, 2)
    assert y.shape == (30,)
    X, y = load_regression(f"csv:{path}#a")
    assert X.shape == (30, 2)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_regression(f"csv:{tmp_path / 'missing.csv'}")
    with pytest.raises(ValueError, match="no numeric column 'zz'"):
        load_regression(f"csv:{path}#zz")
    with pytest.raises(ValueError, match="unknown regression"):
        load_regression("yacht")
    with pytest.raises(ValueError, match="NaN"):
        regression_split(np.array([[np.nan]] * 5), np.zeros(5), 0)


def test_wheel_bandit_rewards() -> None:
    env = WheelBandit(delta=0.5)
    mu = env.mean_rewards(
        np.array([[0.1, 0.1], [0.9, 0.1], [-0.9, 0.1], [-0.6, -0.6], [0.6, -0.6]])
    )
    assert list(mu.argmax(1)) == [0, 1, 2, 3, 4]
    assert mu[1, 1] == 50.0
    assert mu[0, 0] == 1.2
    with pytest.raises(ValueError, match="delta"):
        WheelBandit(delta=1.5)


def test_thompson_sampling_runs_and_regret_is_monotone() -> None:
    s = BanditSettings(steps=40, hidden=(6, 6), train_steps=10, retrain_every=20, update_every=10)
    for m in ("bll", "ntk_bll", "lla", "ensemble"):
        c = run_thompson(m, s, seed=0)
        assert c.shape == (40,)
        assert bool(np.all(np.diff(c) >= 0))
