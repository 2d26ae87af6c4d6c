"""One smoke run of the whole job through the umbrella CLI, and config validation."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from icml26.bll_ntk.config import RunConfig
from icml26.bll_ntk.evaluate import RUN_METHODS
from icml26.bll_ntk.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.migration import UNMIGRATED
from icml26.shared.testing import check_paper


def _stages(out: Path) -> list[str]:
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [r["stage"] for r in rows if "stage" in r]


def test_smoke_run_writes_the_contract_keys_and_resumes_by_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "bll-ntk", "--profile", "smoke", "--out", str(out)]) == 0
    assert "bll-ntk" not in UNMIGRATED
    check_paper(PAPER, out, strict=True)
    res = json.loads((out / "results.json").read_text())
    m = res["metrics"]
    for method in RUN_METHODS:
        for key in ("nll", "rmse", "ece", "coverage90", "fit_seconds"):
            assert f"{key}.diabetes.{method}" in m
        # ll_laplace is BLL itself in classification, so it is reported for regression only
        assert (f"ood_auroc.wine_heldout.{method}" in m) == (method != "ll_laplace")
    for policy in ("bll", "ntk_bll", "greedy"):
        assert f"bandit_regret.{policy}" in m
        assert f"bandit_regret_se.{policy}" in m
    assert m["var_ge_bll_fraction.diabetes"] == 1.0  # the theorem, shared hyperparameters
    assert m["var_ge_bll_fraction.wine"] == 1.0
    assert m["trace_ratio.diabetes"] > 0
    assert "var_ratio.wine_heldout" in m
    for key in ("nll.regression", "ece.all", "ood_auroc.all", "ood_auroc.wine_heldout"):
        assert m[f"gain.{key}.bll"] == 0.0
        assert m[f"gain_se.{key}.ntk_bll"] >= 0
    assert "subsample_error_proj.diabetes.s0" in m
    assert m["cost_ratio.diabetes.lla"] == 1.0
    assert m["cost_ratio.wine.ntk_bll"] > 0
    assert m["train_steps.diabetes"] == 150  # smoke: no grid
    assert m["bandit_var_ratio.bll"] == 1.0
    assert "bandit_prior_share.ntk_bll" in m
    assert {c["id"] for c in res["claims"]} == {c.id for c in PAPER.claims}
    for name in ("regret", "reliability", "subsample_error"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    assert "| gain over bll |" in (out / "tables.md").read_text()
    # a killed run resumes at its first unfinished stage
    first = _stages(out)
    (out / "stages" / "bandit-greedy-1.json").unlink()
    assert main(["run", "bll-ntk", "--profile", "smoke", "--out", str(out)]) == 0
    assert _stages(out)[len(first) :] == ["bandit-greedy-1"]
    again = json.loads((out / "results.json").read_text())["metrics"]
    assert again == m


def test_importing_the_package_and_its_paper_imports_no_torch() -> None:
    code = (
        "import sys, icml26.bll_ntk, icml26.bll_ntk.paper; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "print(icml26.bll_ntk.__version__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import icml26.bll_ntk as pkg

    for name in pkg.__all__:
        obj = getattr(pkg, name)
        assert obj.__doc__, name
        assert not isinstance(obj, types.ModuleType) or name in ("baselines", "data")


def test_bad_config_values() -> None:
    with pytest.raises(ValueError, match="regression data set"):
        RunConfig(regression=("nope",))
    with pytest.raises(ValueError, match="ensemble_size"):
        RunConfig(ensemble_size=1)
    with pytest.raises(ValueError, match="bandit_delta"):
        RunConfig(bandit_delta=1.0)
    with pytest.raises(ValueError, match="does not exist"):
        RunConfig(regression=("csv:/nonexistent/data.csv#y",))
    with pytest.raises(ValueError, match="cls_seeds"):
        RunConfig(cls_seeds=1)
    with pytest.raises(ValueError, match="bandit_policies"):
        RunConfig(bandit_policies=("ntk_bll",))


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


def test_bench_smoke_writes_medians_and_decides_its_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "bench"
    assert main(["bench", "bll-ntk", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out, strict=True)
    m = json.loads((out / "results.json").read_text())["metrics"]
    for size in ("w8_n100", "w16_n200"):
        assert m[f"cost_ratio.{size}.lla"] == 1.0
        for method in ("bll", "ntk_bll", "lla"):
            assert m[f"seconds.{method}.{size}"] > 0
            assert m[f"spread.{method}.{size}"] >= 0
