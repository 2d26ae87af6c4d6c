"""The package through the umbrella CLI: list, show, a smoke run, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.ro_hnn.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def test_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    assert "ro-hnn" in capsys.readouterr().out
    assert main(["show", "ro-hnn", "--profile", "quick"]) == 0
    out = capsys.readouterr().out
    assert "beats_psd" in out


def test_smoke_run_writes_metrics_plots_and_claims(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "ro-hnn", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out, strict=True)
    results = load_results(out / "results.json")
    m = results["metrics"]
    for model in ("rohnn",):
        for h in ("h1", "h5", "h10"):
            assert m[f"rollout_error.fput.{model}.{h}"] is not None
            assert f"seed_se.rollout_error.fput.{model}.{h}" in m
        assert f"energy_drift.fput.{model}" in m
        assert f"projection_error.fput.{model}" in m
        assert f"rollout_seconds.fput.{model}" in m
        # the learned Hamiltonian stays bounded along latent rollouts (10x the training
        # horizon): Störmer-Verlet conserves a modified Hamiltonian, so H_θ oscillates by
        # O((ω h)²) (test_hamiltonian checks conservation at a small step); with the potential
        # scaled by the data's frequency the smoke model's ω h is larger (0.12 measured here;
        # 0.006 on the quick FPUT run, 0.46 on the quick wave where ω h nears 2)
        assert m[f"learned_energy_drift.fput.{model}"] <= 0.25
    assert 0 <= m["psd_projection_error.fput"] < 1
    assert m["latent_dim.fput"] == 4
    assert m["symplecticity_defect.fput.rohnn"] < 1e-10  # exact by construction, after training
    for name in ("error_growth", "energy", "latent_trajectories"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    stages = sorted(p.name for p in (out / "stages").iterdir())
    assert stages == ["fput-psd_galerkin.json", *(f"fput-rohnn-s{i}.json" for i in (0, 1))]
    # PSD-Galerkin: the reference PSD + HNN can at best learn, deterministic (SE 0)
    assert 0 < m["rollout_error.fput.psd_galerkin.h1"] < 1
    assert m["seed_se.rollout_error.fput.psd_galerkin.h1"] == 0.0
    assert 0 <= m["projection_error_h1.fput.rohnn"] <= m["projection_error.fput.rohnn"] + 1
    assert json.loads((out / "config.json").read_text())["fput_n"] == 8
    # a second run into the same folder loads every unit
    assert main(["run", "ro-hnn", "--profile", "smoke", "--out", str(out)]) == 0
    assert load_results(out / "results.json")["metrics"] == m


def test_bad_overrides_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "ro-hnn", "--profile", "smoke", "--set", "systems=pendulum"]) != 0
    assert "unknown systems" in capsys.readouterr().err
    assert main(["run", "ro-hnn", "--profile", "smoke", "--set", "arch.latent_dof=0"]) != 0
    assert "latent_dof" in capsys.readouterr().err


def test_missing_data_file_exits_2_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["run", "ro-hnn", "--profile", "smoke", "--out", str(out)]
    assert main([*argv, "--set", "data_file=/nonexistent.npz"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_bench_smoke_compares_at_equal_accuracy_and_with_the_full_hnn(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "ro-hnn", "--profile", "smoke", "--out", str(out)]) == 0
    m = load_results(out / "results.json")["metrics"]
    for n in ("n8", "n16"):
        for key in (
            "rollout_speedup",
            "rollout_speedup_equal_accuracy",
            "rollout_speedup_vs_full_hnn",
            f"bench_rollout_error.{n}.rohnn",
            f"bench_rollout_error.{n}.full_hnn",
        ):
            assert (key if key.startswith("bench_") else f"{key}.{n}") in m
        # the equal-accuracy reference is never finer than the default reference
        assert 1 <= m[f"equal_accuracy_substeps.{n}"] <= m[f"reference_substeps.{n}"]
        err = m[f"bench_rollout_error.{n}.equal_accuracy_reference"]
        rohnn = m[f"bench_rollout_error.{n}.rohnn"]
        assert err <= rohnn or m[f"equal_accuracy_substeps.{n}"] == m[f"reference_substeps.{n}"]


def test_models_per_system() -> None:
    from icml26.ro_hnn.config import PROFILES, RunConfig

    quick = PROFILES["quick"]
    assert quick.models_for("fput") == ("rohnn", "rohnn_l2")  # the energy-term ablation
    assert quick.models_for("wave") == ("rohnn", "psd_hnn")  # the comparison with PSD
    assert RunConfig().models_for("cloth") == ("rohnn", "psd_hnn", "ae_node", "full_hnn")
    with pytest.raises(ValueError, match="baseline_systems"):
        RunConfig(baseline_systems=("pendulum",))
