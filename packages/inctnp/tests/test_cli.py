"""A smoke run of ``icml26 run inctnp`` and bad overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.inctnp.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def test_smoke_run_writes_the_contract_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "inctnp",
                "--profile",
                "smoke",
                "--out",
                str(out),
                "--set",
                "groups=gp",
                "--set",
                "steps=5",
            ]
        )
        == 0
    )
    check_paper(PAPER, out)
    results = load_results(out / "results.json")
    m = results["metrics"]
    for task in ("gp_rbf", "gp_matern52", "gp_periodic"):
        for model in ("tnp", "inctnp", "gp_oracle"):
            assert f"nll.{task}.{model}" in m
            assert f"rmse.{task}.{model}" in m
            assert f"implicit_bayes_gap.{task}.{model}" in m
            assert m[f"exchangeability_kl.{task}.{model}"] >= -0.05  # a KL, up to MC error
        assert (
            m[f"nll.{task}.gp_oracle"] < m[f"nll.{task}.tnp"]
        )  # 5 training steps cannot beat the oracle
    for key in (
        "update_ms.tnp.n16",
        "update_ms.inctnp.n32",
        "speedup.n32",
        "scaling_exponent.inctnp",
    ):
        assert key in m
    assert {c["id"] for c in results["claims"]} == {
        "matches_tnp",
        "linear_updates",
        "sequential_speedup",
        "implicit_bayes",
        "implicit_bayes_spread",
    }
    assert (out / "plots" / "latency_vs_n.png").exists()
    assert (out / "gp.inctnp.safetensors").exists()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("groups=gp,mnist", "groups must be"),
        ("ctx_sizes=0,4", "ctx_sizes"),
        ("groups=csv", "csv_path"),
        ("csv_path=/nonexistent.csv", "used only by the csv group"),
        ("csv_target=y", "used only by the csv group"),
        ("bayes_perms=2", "bayes_perms must be >= 3"),
    ],
)
def test_bad_config_is_refused(
    override: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        main(
            ["run", "inctnp", "--profile", "smoke", "--out", str(tmp_path / "o"), "--set", override]
        )
        == 2
    )
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_missing_csv_is_refused_before_writing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "inctnp", "--profile", "smoke", "--out", str(tmp_path / "o")]
    argv += ["--set", "groups=csv", "--set", "csv_path=/nonexistent.csv", "--set", "csv_target=y"]
    assert main(argv) == 2
    assert "not an existing file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
