"""A smoke run of ``icml26 run nppr``, its claims, resuming, and bad overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.nppr.paper import PAPER, eps_tag
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper

MODELS = ("cnn_std", "cnn_at")


def test_smoke_run_writes_the_contract_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "nppr", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    m = results["metrics"]
    keys = []
    for model in MODELS:
        keys += [f"clean_acc.{model}", f"nppr_over_pr.{model}", f"pr.tuned.{model}"]
        keys += [f"ar.{a}.{model}" for a in ("pgd", "autoattack")]
        keys += [f"pr.{d}.{model}" for d in ("uniform", "gaussian", "laplace")]
        keys += [f"nppr.{f}.{model}" for f in ("none", "x", "y", "xy")]
        for e in (0.05, 0.1):
            keys += [
                f"{k}.{model}.{eps_tag(e)}"
                for k in ("ar.pgd", "pr.uniform", "pr.gaussian", "pr.laplace", "nppr.none")
            ]
    for key in keys:
        if not key.startswith("nppr_over_pr"):
            assert m[f"{key}.lo"] <= m[key] <= m[f"{key}.hi"], key
        assert 0.0 <= m[key] <= (10.0 if key.startswith("nppr_over") else 1.0), key
    assert "pr.uniform.cnn_std.eps0p05.lo" in m
    check_paper(PAPER, out)
    from icml26.nppr.report import markdown_tables

    table = markdown_tables(results)
    assert "`cnn_std`" in table
    assert "eps 0.05" in table
    assert "| `ordering` |" in table
    for plot in ("metrics_vs_eps", "perturbation_samples", "mixture_weights"):
        assert (out / "plots" / f"{plot}.png").is_file()
    assert (out / "models" / "cnn_at.safetensors").is_file()
    # resuming the finished run re-measures nothing and gives the same metrics
    stages = sorted(p.name for p in (out / "checkpoints").glob("*.metrics.json"))
    assert stages == sorted(f"{m}.{s}.metrics.json" for m in MODELS for s in ("headline", "sweep"))
    assert main(["run", "nppr", "--profile", "smoke", "--out", str(out)]) == 0
    again = json.loads((out / "results.json").read_text())["metrics"]
    assert again == m


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("eps=0", "eps must be in (0, 1)"),
        ("eps=-0.1", "eps must be in (0, 1)"),
        ("forms=none,z", "forms must be"),
        ("models=mlp_std", "model name"),
        ("data_path=/nonexistent.npz", "data_path is used only by"),
        ("dataset=npz", "needs data_path"),
        ("model_path=/nonexistent.safetensors", "does not exist"),
        ("k=0", "k"),
        ("at_method=trades", "at_method"),
    ],
)
def test_bad_config_is_refused(
    override: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "o"
    assert main(["run", "nppr", "--profile", "smoke", "--out", str(out), "--set", override]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow  # ~15 s more of imports and training; `nox -s slow-nppr` runs it
def test_bench_smoke_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "bench"
    assert main(["bench", "nppr", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out, kind="bench")
    m = load_results(out / "results.json")["metrics"]
    for name in ("pr", "pgd", "nppr"):
        assert m[f"forward_passes.{name}"] > 0
        assert m[f"inputs_needed.{name}"] >= 1


def test_paper_object_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, icml26.nppr.paper; print('torch' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"


def test_eps_tag() -> None:
    assert eps_tag(0.1) == "eps0p1"
    assert eps_tag(0.05) == "eps0p05"
    assert eps_tag(0.3) == "eps0p3"
