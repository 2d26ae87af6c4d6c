"""The smoke profile through the umbrella CLI, the bench, and bad config values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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
    per_seed = json.loads((out / "per_seed.json").read_text())
    assert len(per_seed["digits"]) == 2
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
    for key in (
        "fd_se.digits.ssc.nfe4",
        "fd_improvement_lcb.digits.ssc.nfe4",
        "fm_loss.gmm2.baseline",
    ):
        assert key in m, key  # seed spread (smoke runs 2 seeds) and the fit check
    assert m["ssc_alpha.gmm16.baseline"] == pytest.approx(
        float(np.mean([1 / s["velocity_ratio.gmm16.t00"] - 1 for s in per_seed["gmm16"]]))
    )  # SSC's strength is the measured start ratio's, gamma(0) = 1 / R(0), seed by seed
    from icml26.velocity_deficit.tables import render

    assert "| gmm16 | ssc |" in render(out)
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
        ("ssc_magnitude=linear", "not one of ratio, sweep"),
        ("ssc_magnitude=sweep ssc_alphas=-0.1", "alpha > 0"),
        ("ratio_times=0.5", "must include 0.0"),
        ("seeds=0", "seeds must be >= 1"),
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
                *(arg for one in override.split() for arg in ("--set", one)),
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


def test_two_user_datasets_keep_apart(tmp_path: Path) -> None:
    """Two ``npy:`` files with the same stem in different folders: their own metric keys and
    their own checkpoint folders, with names that are safe metric-key parts."""
    import numpy as np

    from icml26.shared.results import load_results
    from icml26.velocity_deficit.config import dataset_name

    rng = np.random.default_rng(0)
    specs = []
    for folder, shift in (("a", 0.0), ("b", 3.0)):
        (tmp_path / folder).mkdir()
        np.save(tmp_path / folder / "x.npy", rng.normal(shift, 1.0, (150, 2)).astype(np.float32))
        specs.append(f"npy:{tmp_path / folder / 'x.npy'}")
    names = [dataset_name(s) for s in specs]
    assert len(set(names)) == 2
    assert names == [dataset_name(s) for s in specs]  # stable
    assert all(n.startswith("user_x_") and "." not in n and "/" not in n for n in names)
    out = tmp_path / "run"
    argv = ["run", "velocity-deficit", "--profile", "smoke", "--out", str(out)]
    argv += ["--set", f"datasets={','.join(specs)}", "--set", "compare=", "--set", "n_test=30"]
    assert main(argv) == 0
    m = load_results(out / "results.json")["metrics"]
    for name in names:
        assert f"fd.{name}.real" in m
        assert (out / "checkpoints" / f"{name}-baseline-s0").is_dir()
    assert m[f"fd.{names[0]}.baseline.nfe4"] != m[f"fd.{names[1]}.baseline.nfe4"]


def test_user_dataset_paths_checked_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    np.save(tmp_path / "x.npy", np.zeros((30, 2)))
    bad = [
        (f"datasets=npy:{tmp_path / 'missing.npy'}", "not an existing .npy file"),
        (f"datasets=images:{tmp_path / 'x.npy'}", "not an existing folder"),
        (f"datasets=npy:{tmp_path / 'x.npy'},npy:{tmp_path}/./x.npy", "name the same data"),
    ]
    for override, message in bad:
        out = tmp_path / "run"
        argv = ["run", "velocity-deficit", "--profile", "smoke", "--out", str(out)]
        assert main([*argv, "--set", override, "--set", "compare="]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()
