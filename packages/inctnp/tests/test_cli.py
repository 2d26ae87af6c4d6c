"""A smoke run of ``icml26 run inctnp`` and bad overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.inctnp.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.migration import UNMIGRATED
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def _stages(out: Path) -> list[str]:
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [r["stage"] for r in rows if "stage" in r]


def test_smoke_run_writes_the_contract_keys_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
    out = tmp_path / "run"
    assert main(["run", "inctnp", "--profile", "smoke", "--out", str(out)]) == 0
    assert "inctnp" not in UNMIGRATED
    check_paper(PAPER, out, strict=True)
    results = load_results(out / "results.json")
    m = results["metrics"]
    for task in ("gp_rbf", "gp_matern52", "gp_periodic"):
        for regime in ("targets", "converged"):
            for model in ("tnp", "inctnp", "gp_oracle", "gp_prior"):
                assert f"nll.{task}.{regime}.{model}" in m
                assert f"rmse_se.{task}.{regime}.{model}" in m
            assert m[f"nll.{task}.{regime}.gp_oracle"] < m[f"nll.{task}.{regime}.tnp"]
        for model in ("tnp", "inctnp", "gp_oracle", "gp_prior"):
            assert m[f"exchangeability_kl.{task}.{model}"] >= -0.05  # a KL, up to MC error
        assert m[f"exchangeability_kl.{task}.gp_prior"] == 0.0  # ignores the order (and data)
    for regime in ("targets", "converged"):
        assert m[f"gap.nll.{regime}.tnp"] == 0.0
        assert m[f"gap_se.nll.{regime}.inctnp"] > 0
    assert m["targets_seen.gp.inctnp"] > m["targets_seen.gp.tnp"]  # same steps, more targets
    assert m["budget_step.gp.tnp"] > m["budget_step.gp.inctnp"]  # TNP-D needs more steps
    for key in ("update_ms_q75.tnp.n16", "update_ms.inctnp.n64", "speedup_low.n64"):
        assert key in m
    assert {c["id"] for c in results["claims"]} == {c.id for c in PAPER.claims}
    for name in ("latency_vs_n", "nll_vs_context", "training", "streaming_examples"):
        assert (out / "plots" / f"{name}.png").exists()
    assert (out / "gp.inctnp.safetensors").exists()
    # a killed run resumes at its first unfinished stage
    first = _stages(out)
    (out / "stages" / "eval-gp-1.json").unlink()
    assert main(["run", "inctnp", "--profile", "smoke", "--out", str(out)]) == 0
    assert _stages(out)[len(first) :] == ["eval-gp-1"]
    again = load_results(out / "results.json")["metrics"]
    assert {
        k: v
        for k, v in again.items()
        if "update_ms" not in k and "speedup" not in k and "scaling" not in k
    } == {
        k: v
        for k, v in m.items()
        if "update_ms" not in k and "speedup" not in k and "scaling" not in k
    }


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
