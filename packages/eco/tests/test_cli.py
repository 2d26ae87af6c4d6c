"""The ``icml26`` CLI end to end on the ``smoke`` profiles, and config validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.eco.config import BenchConfig, ECOConfig
from icml26.eco.paper import PAPER
from icml26.eco.report import markdown_tables
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper

SMALL = [
    "--set",
    "workloads=mlp,moe_lm",
    "--set",
    "schemes=master_fp8_rtn,naive_fp8_rtn,eco_fp8_rtn",
]


def test_run_smoke_writes_results_plots_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "eco", "--profile", "smoke", "--out", str(out), *SMALL]) == 0
    check_paper(PAPER, out)
    results = load_results(out / "results.json")
    m = results["metrics"]
    for w in ("moe_lm",):
        for s in ("master_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn"):
            for key in ("final_loss", "val_loss", "loss_gap_vs_master", "peak_memory_mb"):
                assert f"{key}.{w}.{s}" in m
    assert m["loss_gap_vs_master.moe_lm.master_fp8_rtn"] == 0.0
    assert 8.9 < m["static_bytes_per_param.eco_fp8_rtn"] < 9.2  # 1 B weights + 8 B moments
    assert 12.9 < m["static_bytes_per_param.master_fp8_rtn"] < 13.2  # + 4 B master
    assert "val_loss.lr_sweep.naive_fp8_rtn.lr1" in m
    assert {c["id"] for c in results["claims"]} == {c.id for c in PAPER.claims}
    for name in ("loss_curves", "pareto", "lr_sweep"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    # a second run into the same folder resumes from the checkpoint and reproduces the metrics
    assert main(["run", "eco", "--profile", "smoke", "--out", str(out), *SMALL]) == 0
    again = load_results(out / "results.json")["metrics"]
    assert again == m
    table = markdown_tables(results)
    assert "| `eco_fp8_rtn` | 9.0" in table
    assert "lr=0.01" in table
    memory = json.loads((out / "memory.json").read_text())
    assert memory["static_bytes_per_param_measured_on"] == "moe_lm"


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "eco", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    m = load_results(out / "results.json")["metrics"]
    assert m["step_time_ratio.master_fp8_rtn"] == 1.0
    assert m["step_time_ratio.eco_fp8_rtn"] > 0
    assert 0.6 < m["memory_ratio.eco_fp8_vs_master_fp8"] < 0.75


def test_bad_overrides_and_configs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert (
        main(
            [
                "run",
                "eco",
                "--profile",
                "smoke",
                "--out",
                str(tmp_path / "x"),
                "--set",
                "schemes=eco_fp4_rtn",
            ]
        )
        == 2
    )
    assert "unknown schemes" in capsys.readouterr().err
    with pytest.raises(ValueError, match="int4_group_size must be an even"):
        ECOConfig(int4_group_size=3)
    with pytest.raises(ValueError, match="workloads"):
        ECOConfig(workloads=("vision",))
    with pytest.raises(ValueError, match="lm_lr must be > 0"):
        ECOConfig(lm_lr=0.0)
    with pytest.raises(ValueError, match="reference"):
        BenchConfig(schemes=("eco_fp8_rtn",), reference="master_fp8_rtn")


def test_missing_text_file_fails_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "eco",
            "--profile",
            "smoke",
            "--out",
            str(tmp_path / "y"),
            "--set",
            "workloads=dense_lm",
            "--set",
            f"text_file={tmp_path / 'nope.txt'}",
            "--set",
            "sweep_lrs=[]",
        ]
    )
    assert code == 1
    assert "does not exist" in capsys.readouterr().err
