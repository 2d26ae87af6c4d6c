"""One smoke run of the whole job through the umbrella CLI, and config validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.bll_ntk.paper import METHODS, PAPER, Config
from icml26.shared.cli import main
from icml26.shared.testing import check_paper


def test_smoke_run_writes_the_contract_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "bll-ntk", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    res = json.loads((out / "results.json").read_text())
    m = res["metrics"]
    for method in METHODS:
        for key in ("nll", "rmse", "ece", "coverage90", "fit_seconds"):
            assert f"{key}.diabetes.{method}" in m
        assert f"bandit_regret.{method}" in m
        # ll_laplace is BLL itself in classification, so it is reported for regression only
        assert (f"ood_auroc.wine_heldout.{method}" in m) == (method != "ll_laplace")
    assert m["var_ge_bll_fraction.diabetes"] == 1.0  # the theorem, shared hyperparameters
    assert m["var_ge_bll_fraction.wine"] == 1.0
    for key in ("nll.regression", "ece.all", "ood_auroc.all", "ood_auroc.wine_heldout"):
        assert f"ntk_gain.{key}" in m
        assert m[f"ntk_gain_se.{key}"] >= 0
    assert "subsample_error.diabetes.s16" in m
    assert {c["id"] for c in res["claims"]} == {c.id for c in PAPER.claims}
    assert (out / "plots" / "regret.png").stat().st_size > 0
    assert (out / "plots" / "reliability.png").stat().st_size > 0


def test_bad_config_values() -> None:
    with pytest.raises(ValueError, match="regression data set"):
        Config(regression=("nope",))
    with pytest.raises(ValueError, match="ensemble_size"):
        Config(ensemble_size=1)
    with pytest.raises(ValueError, match="bandit_delta"):
        Config(bandit_delta=1.0)
    with pytest.raises(ValueError, match="does not exist"):
        Config(regression=("csv:/nonexistent/data.csv#y",))
    with pytest.raises(ValueError, match="cls_seeds"):
        Config(cls_seeds=0)


def test_missing_csv_exits_2_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "bll-ntk",
            "--profile",
            "smoke",
            "--out",
            str(out),
            "--set",
            "regression=csv:/nonexistent/data.csv",
        ]
    )
    assert code == 2
    assert not out.exists()
