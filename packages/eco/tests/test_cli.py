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
            for key in ("final_loss", "val_loss", "loss_gap_vs_master", "held_memory_mb"):
                assert f"{key}.{w}.{s}" in m
    assert m["loss_gap_vs_master.moe_lm.master_fp8_rtn"] == 0.0
    assert 8.9 < m["static_bytes_per_param.eco_fp8_rtn"] < 9.2  # 1 B weights + 8 B moments
    assert 12.9 < m["static_bytes_per_param.master_fp8_rtn"] < 13.2  # + 4 B master
    assert "val_loss.lr_sweep.naive_fp8_rtn.lr1" in m
    # the ablation stage (smoke: ECO-FP8-RTN on the MLP, seeds 0 and 1)
    for abl in ("no_decay", "error_buffer", "delayed_scale", "inject_then_rescale"):
        assert f"final_loss.mlp.eco_fp8_rtn.{abl}" in m
        assert m[f"ablation.mlp.eco_fp8_rtn.{abl}.gap_se"] is not None  # two paired seeds
    assert "final_loss.mlp.eco_fp8_rtn" in m  # the main-stage key is kept beside them
    default = "ablation.mlp.eco_fp8_rtn.default"
    assert m[f"{default}.master"] != m["final_loss.mlp.master_fp8_rtn"]  # a 2-seed mean
    assert {c["id"] for c in results["claims"]} == {c.id for c in PAPER.claims}
    for name in ("loss_curves", "pareto", "lr_sweep", "ablations"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    # a second run into the same folder resumes from the checkpoint and reproduces the metrics
    assert main(["run", "eco", "--profile", "smoke", "--out", str(out), *SMALL]) == 0
    again = load_results(out / "results.json")["metrics"]
    assert again == m
    table = markdown_tables(results)
    assert "| `eco_fp8_rtn` | 9.0" in table
    assert "lr=0.01" in table
    assert "`eco_fp8_rtn` on `mlp`" in table
    assert "| `error_buffer` |" in table
    memory = json.loads((out / "memory.json").read_text())
    assert memory["static_bytes_per_param_measured_on"] == "moe_lm"


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "eco", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    m = load_results(out / "results.json")["metrics"]
    for scheme in ("master_fp8_rtn", "eco_fp8_rtn", "naive_fp8_rtn"):  # over torch's AdamW
        ratio = m[f"step_time_ratio.{scheme}"]
        assert ratio == pytest.approx(
            m[f"step_time_ms.{scheme}"] / m["step_time_ms.adamw"], rel=1e-9
        )
    # the smoke bench's first scheme is quantized (its weights released): n_params still counts
    from icml26.eco.models import LMConfig, TinyLM

    cfg = PAPER.bench_profiles["smoke"]
    lm = TinyLM(
        LMConfig(
            seq_len=cfg.seq_len,
            d_model=cfg.d_model,
            n_layers=cfg.n_layers,
            n_heads=cfg.n_heads,
            d_ff=cfg.d_ff,
            n_experts=cfg.n_experts,
            top_k=cfg.top_k,
        )
    )
    assert cfg.schemes[0] != "fp32"
    assert m["n_params"] == sum(p.numel() for p in lm.parameters())
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


def test_missing_or_unused_text_file_exits_2_before_writing(
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
    assert code == 2
    assert "not an existing file" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()
    argv = ["run", "eco", "--profile", "smoke", "--out", str(tmp_path / "y")]
    argv += ["--set", "workloads=mlp", "--set", "sweep_workload=logreg"]
    assert main([*argv, "--set", f"text_file={tmp_path / 'nope.txt'}"]) == 2
    assert "read only by the language models" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()
