"""The paper through the umbrella CLI: smoke run, config validation, light paper import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper
from icml26.transport_kl.config import TransportKLConfig
from icml26.transport_kl.paper import PAPER


def test_smoke_run_writes_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "transport-kl", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    res = load_results(out / "results.json")
    m = res["metrics"]
    for key in (
        "closed_form_error.kl",
        "closed_form_error.wkl",
        "closed_form_error.kwkl",
        "value.kl.eps1",
        "value.wkl.eps1",
        "riccati_ok.kl.rho1",
        "cond_R.wkl.rho0",
        "gain_norm.kwkl.rho1",
        "spectral_radius.kl.rho1",
        "closed_loop_cost.wkl.rho0",
        "stabilised_rate.wkl",
        "closed_loop_cost.cartpole.kl",
        "max_abs_theta.kwkl",
        "kalman.prox_step_error",
        "closed_loop_cost_sweep.kl.rho0.r0",
        "cost_ratio_sweep.wkl_vs_kl.rho1.r3",
        "control_weight_sweep.r3",
    ):
        assert key in m, key
    assert m["value.kl.eps1"] > 1e10
    assert m["value.wkl.eps1"] == pytest.approx(1.0)
    ids = {c["id"]: c["holds"] for c in res["claims"]}
    assert ids["closed_forms_match_flow"] is True
    for name in (
        "divergence_vs_eps",
        "control_noise_sweep",
        "control_weight_sweep",
        "cartpole_trajectories",
    ):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    # resuming into the same folder reuses the checkpointed stages
    assert main(["run", "transport-kl", "--profile", "smoke", "--out", str(out)]) == 0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dim", 0, "dim must be an integer >= 1"),
        ("gamma", 1.5, "gamma must be in"),
        ("eps_grid", (1.0,), "eps_grid needs at least two values"),
        ("lam", -1.0, "lam must be a finite number > 0"),
        ("kalman_ensemble", 20, "kalman_ensemble must be <= kalman_dim"),
        ("control_weight_sweep", (), "control_weight_sweep needs at least one"),
        ("control_weight_sweep", (0.1, -1.0), "control_weight_sweep must be a finite number > 0"),
    ],
)
def test_bad_config_values(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TransportKLConfig(**{field: value})


def test_cli_rejects_bad_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "transport-kl", "--profile", "smoke", "--set", "gamma=2"]) != 0


def test_paper_module_does_not_import_jax() -> None:
    code = "import sys, icml26.transport_kl.paper; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
