"""A smoke run of ``icml26 run nppr``: the contract keys, its claims under their placebos,
resuming from the stages, bad overrides."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from icml26.nppr.config import eps_tag
from icml26.nppr.paper import PAPER
from icml26.nppr.tables import readme_tables, sweep_table
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper

MODELS = ("cnn_std", "cnn_at")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nppr") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ICML26_QUIET", "1")
        assert main(["run", "nppr", "--profile", "smoke", "--out", str(out)]) == 0
    return out


def _contract_keys() -> list[str]:
    keys = []
    for model in MODELS:
        keys += [f"clean_acc.{model}", f"pr.tuned.{model}", f"pr.min.{model}"]
        keys += [f"ar.{a}.{model}" for a in ("pgd", "apgd_square", "min")]
        keys += [f"pr.{d}.{model}" for d in ("uniform", "gaussian", "laplace")]
        keys += [f"pr.{d}_official.{model}" for d in ("uniform", "gaussian")]
        keys += [f"uap.{k}.{model}" for k in ("universal", "per_class", "best")]
        keys += [f"nppr.{f}.{model}" for f in ("none", "x", "y", "xy", "best")]
        for e in (0.05, 0.1):
            keys += [
                f"{k}.{model}.{eps_tag(e)}"
                for k in ("ar.pgd", "pr.uniform", "pr.gaussian", "pr.laplace", "nppr.none")
            ]
    return keys


def test_smoke_run_writes_the_contract_keys(smoke_run: Path) -> None:
    m = load_results(smoke_run / "results.json")["metrics"]
    for key in _contract_keys():
        assert m[f"{key}.lo"] <= m[key] <= m[f"{key}.hi"], key
        assert 0.0 <= m[key] <= 1.0, key
    for model in MODELS:
        assert f"cc.nppr.best.{model}" in m  # the official averaging convention beside ours
        assert m[f"neff.best.{model}"] >= 1.0
        assert m[f"n_inputs.ar_apgd_square.{model}"] == 10
        for fam in ("nppr_best", "pr_min", "ar_min", "uap_best"):
            assert f"se.{fam}.{model}" in m
    assert m["replicates"] == 2
    assert "mean.at_gain.nppr_best.cnn" in m
    assert not any("autoattack" in k for k in m)  # renamed: ar.apgd_square


def test_smoke_run_claims_and_placebos(smoke_run: Path) -> None:
    check_paper(PAPER, smoke_run)  # strict: nppr is migrated
    table = readme_tables(load_results(smoke_run / "results.json"))
    assert "`cnn_std`" in table
    assert "eps 0.05" in sweep_table(load_results(smoke_run / "results.json"))
    assert "official: U(-1, 1) / randn, clipped" in table
    assert "no floor: NPPR" in table
    for plot in ("metrics_vs_eps", "perturbation_samples", "mixture_weights"):
        assert (smoke_run / "plots" / f"{plot}.png").is_file()


def test_resuming_a_finished_run_redoes_nothing(smoke_run: Path) -> None:
    stages = sorted(p.stem for p in (smoke_run / "stages").iterdir())
    expected = [f"{s}_{m}_r{r}" for s in ("measure", "train") for m in MODELS for r in (0, 1)]
    assert sorted(s for s in stages if not s.startswith("sweep")) == sorted(expected)
    before = json.loads((smoke_run / "results.json").read_text())["metrics"]
    stamps = {p.name: p.stat().st_mtime_ns for p in (smoke_run / "stages").iterdir()}
    assert main(["run", "nppr", "--profile", "smoke", "--out", str(smoke_run)]) == 0
    assert json.loads((smoke_run / "results.json").read_text())["metrics"] == before
    assert {p.name: p.stat().st_mtime_ns for p in (smoke_run / "stages").iterdir()} == stamps


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("eps=0", "eps must be in (0, 1)"),
        ("eps=-0.1", "eps must be in (0, 1)"),
        ("forms=none,z", "forms must be"),
        ("models=mlp_std", "model name"),
        ("data_path=/nonexistent.npz", "data_path is used only by"),
        ("dataset=cifar10", "needs data_path"),
        ("model_path=/nonexistent.safetensors", "does not exist"),
        ("k=0", "k"),
        ("replicates=0", "replicates"),
        ("weight_floor=1", "weight_floor"),
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
    code = "import sys, icml26.nppr.paper, icml26.nppr; print('torch' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"


def test_eps_tag() -> None:
    assert eps_tag(0.1) == "eps0p1"
    assert eps_tag(0.05) == "eps0p05"
    assert eps_tag(0.3) == "eps0p3"
