"""Metrics on cases with known answers; data loading and its errors; the wheel bandit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.bll_ntk import metrics as M
from icml26.bll_ntk.bandit import NeuralLinearSettings, NIGArms, WheelBandit, run_wheel
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
    task = load_classification("digits", seed=0, val_fraction=0.2)
    assert task.n_classes == 8
    assert task.x_val.shape[0] == round(0.2 * (task.x_train.shape[0] + task.x_val.shape[0]))
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


def test_nig_posterior_is_ridge_regression_with_an_inverse_gamma_noise() -> None:
    """NeuralLinear's per-arm posterior: the mean is ridge regression with penalty Λ0 (against
    scikit-learn), b = b0 + ½(yᵀy − μᵀΛμ), one pull at a time equals all at once, and the arms
    do not see each other's rewards."""
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 4))
    arms = rng.integers(0, 3, size=60)
    y = Z @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=60)
    one = NIGArms(np.stack([0.25 * np.eye(4)] * 3), a0=6.0, b0=6.0)
    for z, a, r in zip(Z, arms, y, strict=True):
        one.add(z, int(a), float(r))
    many = NIGArms(np.stack([0.25 * np.eye(4)] * 3), a0=6.0, b0=6.0)
    many.add_many(Z, arms, y)
    for arm in range(3):
        sel = arms == arm
        ref = Ridge(alpha=0.25, fit_intercept=False).fit(Z[sel], y[sel]).coef_
        mu, Li, a, b = one.posterior(arm)
        np.testing.assert_allclose(mu, ref, rtol=1e-8)
        np.testing.assert_allclose(many.posterior(arm)[0], mu, rtol=1e-10)
        P = 0.25 * np.eye(4) + Z[sel].T @ Z[sel]
        np.testing.assert_allclose(Li.T @ Li, np.linalg.inv(P), rtol=1e-8)
        assert a == 6.0 + sel.sum() / 2
        assert b == pytest.approx(6.0 + 0.5 * (y[sel] @ y[sel] - mu @ P @ mu))


def test_thompson_draws_spread_like_the_posterior() -> None:
    """The sampled values at z have the Student-t spread of the NIG posterior: variance
    b/(a−1) · zᵀΛ⁻¹z (Monte Carlo), and the greedy values are the posterior means."""
    rng = np.random.default_rng(1)
    arms = NIGArms(np.stack([np.eye(2)] * 2), a0=6.0, b0=3.0)
    arms.add_many(rng.normal(size=(10, 2)), np.zeros(10, dtype=int), rng.normal(size=10))
    z = np.array([0.3, -1.2])
    draws = np.array([arms.sample(z, rng) for _ in range(20000)])
    _mu, Li, a, b = arms.posterior(1)  # arm 1 saw nothing: the prior
    var = b / (a - 1) * float((Li @ z) @ (Li @ z))
    assert draws[:, 1].var() == pytest.approx(var, rel=0.05)
    np.testing.assert_allclose(arms.means(z), [z @ arms.posterior(k)[0] for k in range(2)])


def test_wheel_runs_every_policy_on_the_same_contexts() -> None:
    s = NeuralLinearSettings(steps=60, delta=0.5, hidden=(6,), train_steps=5, retrain_every=20)
    runs = {p: run_wheel(p, s, seed=3) for p in ("bll", "ntk_bll", "ntk_bll_sub", "greedy")}
    for run in runs.values():
        assert run.regret.shape == (60,)
        assert bool(np.all(np.diff(run.regret) >= 0))
        assert 0.0 <= run.outer_found <= 1.0
    warm = 5 * s.initial_pulls  # round-robin pulls: the same regret for every policy
    assert len({float(r.regret[warm - 1]) for r in runs.values()}) == 1
    assert runs["bll"].trace_ratio == 0.0
    assert runs["ntk_bll"].trace_ratio > 0.0
    again = run_wheel("bll", s, seed=3)
    np.testing.assert_array_equal(again.regret, runs["bll"].regret)  # one seed, one run
    with pytest.raises(ValueError, match="unknown bandit policy"):
        run_wheel("ucb", s, seed=0)
    with pytest.raises(ValueError, match="retrain_every"):
        NeuralLinearSettings(retrain_every=0)
