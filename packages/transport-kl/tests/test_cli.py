"""The paper through the umbrella CLI: smoke run, config validation, light paper import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper
from icml26.transport_kl.config import RunConfig
from icml26.transport_kl.paper import PAPER


def test_smoke_run_writes_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "transport-kl", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out, strict=True)
    res = load_results(out / "results.json")
    m = res["metrics"]
    for key in (
        "closed_form_error.kl",
        "closed_form_error.wkl",
        "closed_form_error.kwkl",
        "degeneration.gaussian.kl.growth",
        "degeneration.student_t.wkl.growth",
        "front.kappa0p01.spread3.wkl.gap",
        "front.kappa1.spread3.wkl.upper",
        "front.kappa0p01.spread10.lqr.oracle_gap",
        "cond_R.kappa0p01.spread3.kl",
        "kalman.prox_step_error",
    ):
        assert key in m, key
    assert m["degeneration.gaussian.kl.growth"] > 1e10
    assert m["degeneration.gaussian.wkl.growth"] == pytest.approx(1.0)
    for key, value in m.items():  # closed forms = flow definitions (a test, not a claim)
        if key.startswith("closed_form_error."):
            assert value < 1e-6, key
    # kappa = 1: KL is plain LQR, the evaluation's optimum, so WKL cannot beat it
    for spread in ("3", "10"):
        assert abs(m[f"front.kappa1.spread{spread}.kl.oracle_gap"]) < 1e-4
        assert m[f"front.kappa1.spread{spread}.wkl.gap"] >= -1e-4
    for div in ("kl", "wkl", "kwkl"):  # plain LQR is the evaluation's optimum
        assert m[f"front.kappa0p01.spread3.{div}.oracle_gap"] >= -1e-3
    assert "| 0.01 | " in (out / "tables.md").read_text()  # the grid, one row per kappa
    for name in ("divergence_vs_eps", "control_fronts"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    # resuming into the same folder reuses the finished stages
    assert main(["run", "transport-kl", "--profile", "smoke", "--out", str(out)]) == 0
    assert load_results(out / "results.json")["metrics"] == m


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "transport-kl", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out, strict=True)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dim", 0, "dim must be an integer >= 1"),
        ("gamma", 1.5, "gamma must be in"),
        ("eps_grid", (1.0,), "eps_grid needs at least two values"),
        ("lam", -1.0, "lam must be a finite number > 0"),
        ("kalman_ensemble", 20, "kalman_ensemble must be <= kalman_dim"),
        ("systems", 2, "systems must be an integer >= 3"),
        ("kappa", 0.0, "kappa must be in"),
    ],
)
def test_bad_config_values(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(**{field: value})


def test_cli_rejects_bad_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "transport-kl", "--profile", "smoke", "--set", "gamma=2"]) != 0


def test_paper_module_does_not_import_jax() -> None:
    code = "import sys, icml26.transport_kl.paper; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
