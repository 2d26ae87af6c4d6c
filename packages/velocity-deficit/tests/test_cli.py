"""The smoke profile through the umbrella CLI, the bench, and bad config values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper
from icml26.velocity_deficit.config import VDConfig
from icml26.velocity_deficit.paper import PAPER


def test_smoke_run_writes_results_plots_and_claims(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "velocity-deficit", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    res = load_results(out / "results.json")
    m = res["metrics"]
    for key in (
        "velocity_ratio.gmm2.t00",
        "velocity_ratio.digits.t95",
        "velocity_ratio_oracle.gmm16.t50",
        "velocity_ratio_slope_vs_dim",
        "integration_lag.digits.baseline.nfe4",
        "fd.digits.mafm_ssc.nfe4",
        "fd.gmm16.ssc.nfe2",
        "fd_improvement.digits.ssc.nfe4",
        "steps_to_match_baseline_250.digits.mafm",
        "loglik.gmm2.baseline.nfe4",
    ):
        assert key in m, key
    assert "fd.gmm16.mafm.nfe2" not in m  # MAFM only on `compare`
    assert {c["id"] for c in res["claims"]} == {c.id for c in PAPER.claims}
    plots = {p.name for p in (out / "plots").iterdir()}
    assert {
        "velocity_ratio_vs_t.png",
        "quality_vs_nfe_digits.png",
        "samples_digits.png",
        "ssc_sweep_digits_mafm.png",
    } <= plots
    # resuming reuses the finished datasets
    assert main(["run", "velocity-deficit", "--profile", "smoke", "--out", str(out)]) == 0
    again = load_results(out / "results.json")["metrics"]
    assert again["fd.digits.ssc.nfe4"] == m["fd.digits.ssc.nfe4"]


def test_smoke_bench(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "velocity-deficit", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    res = json.loads((out / "results.json").read_text())
    assert res["metrics"]["ssc_overhead_ratio"] > 0
    assert "throughput.heun.nfe4" in res["metrics"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("nfe=0,5", "NFE must be >= 1"),
        ("lr=0", "lr must be > 0"),
        ("datasets=cifar", "unknown dataset"),
        ("compare=mnist", "not in datasets"),
        ("ssc_alphas=-0.1", "alpha > 0"),
        ("ssc_select_nfe=3", "must be one of nfe"),
    ],
)
def test_bad_config_exits_2(
    override: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "run",
                "velocity-deficit",
                "--profile",
                "smoke",
                "--out",
                str(tmp_path / "x"),
                "--set",
                override,
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_config_validation_direct() -> None:
    with pytest.raises(ValueError, match="device"):
        VDConfig(device="tpu")
    with pytest.raises(ValueError, match="ratio_times"):
        VDConfig(ratio_times=(1.0,))
