"""The ``icml26`` CLI end to end on the ``smoke`` profiles, and config validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.eco.config import BenchConfig, RunConfig
from icml26.eco.models import LMConfig, TinyLM
from icml26.eco.paper import PAPER
from icml26.eco.tables import readme_tables
from icml26.shared.cli import main
from icml26.shared.readme import update_readme
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def test_run_smoke_writes_results_plots_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "eco", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)  # strict: every claim decided, none holding under its placebo
    results = load_results(out / "results.json")
    m = results["metrics"]
    for w in ("dense_lm", "moe_lm", "mlp"):
        for s in ("master_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn"):
            for key in ("final_loss", "val_loss", "loss_gap_vs_master", "val_loss_mean"):
                assert f"{key}.{w}.{s}" in m
            assert m[f"peak_memory_mb.{w}.{s}"] > m[f"static_memory_mb.{w}.{s}"] > 0
        assert m[f"gap_se.{w}.eco_fp8_rtn"] is not None  # two paired seeds
        assert m[f"recovered.{w}.naive_fp8_rtn"] == 0.0
    assert m["loss_gap_vs_master.moe_lm.master_fp8_rtn"] == 0.0
    # roles: embeddings, norms, biases, router stay float32 (12 B), matrices 1 + 8 B
    assert 9.0 < m["static_bytes_per_param.eco_fp8_rtn"] < 12.0
    assert m["static_bytes_per_param.eco_fp8_rtn"] < m["static_bytes_per_param.master_fp8_rtn"]
    assert "val_loss.moe_lm.eco_int4_sr" in m  # an extra scheme at the first seed
    assert "lr_sweep.gap_at_min_lr_se.eco_fp8_rtn" in m
    for abl in ("scale_at_injection", "quantize_all", "error_buffer", "delayed_scale"):
        assert f"final_loss.mlp.eco_fp8_rtn.{abl}" in m
        assert m[f"ablation.mlp.eco_fp8_rtn.{abl}.gap_se"] is not None
    assert (
        m["ablation.mlp.eco_fp8_rtn.quantize_all.master"]
        != m["ablation.mlp.eco_fp8_rtn.default.master"]
    )
    assert {c["id"] for c in results["claims"]} == {c.id for c in PAPER.claims}
    for name in ("loss_curves", "pareto", "lr_sweep", "ablations", "recovery"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    memory = json.loads((out / "memory.json").read_text())
    assert memory["static_bytes_per_param_measured_on"] == "moe_lm"
    assert memory["moe_lm"]["eco_fp8_rtn"]["peak"]["transient"] > 0
    # a second run into the same folder loads every stage and reproduces the metrics
    assert main(["run", "eco", "--profile", "smoke", "--out", str(out)]) == 0
    assert load_results(out / "results.json")["metrics"] == m
    tables = readme_tables(results)
    assert "| `eco_fp8_rtn` |" in tables
    assert "`scale_at_injection`" in tables
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- results:begin -->\nSTALE\n<!-- results:end -->\nrest\n")
    update_readme("eco", out, readme)  # what `icml26 readme eco RUN_DIR` does
    new = readme.read_text()
    assert "STALE" not in new
    assert "eco_near_lossless_fp8" in new
    assert "| `eco_fp8_rtn` |" in new
    assert "eco_near_lossless_fp8" in (tmp_path / "RESULTS.md").read_text()


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "eco", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    m = load_results(out / "results.json")["metrics"]
    for scheme in ("master_fp8_rtn", "eco_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn_reference"):
        assert m[f"step_time_ratio_min.{scheme}"] <= m[f"step_time_ratio.{scheme}"]
        assert m[f"step_time_ratio.{scheme}"] <= m[f"step_time_ratio_max.{scheme}"]
        assert m[f"train_step_ms.{scheme}"] >= m[f"step_time_ms.{scheme}"]
    for base in ("adamw_foreach", "adamw_fused"):  # every AdamW implementation, ratios to each
        assert m[f"step_time_ms.{base}"] > 0
        assert m[f"step_time_ratio_vs_{base}.eco_fp8_rtn"] > 0
    assert "| `eco_fp8_rtn_reference` |" in readme_tables(load_results(out / "results.json"))
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
    assert m["n_params"] == sum(p.numel() for p in lm.parameters())
    assert 0.6 < m["memory_ratio.eco_fp8_vs_master_fp8"] < 0.85


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
        RunConfig(int4_group_size=3)
    with pytest.raises(ValueError, match="workloads"):
        RunConfig(workloads=("vision",))
    with pytest.raises(ValueError, match="seeds must be distinct"):
        RunConfig(seeds=())
    with pytest.raises(ValueError, match="lm_lr must be > 0"):
        RunConfig(lm_lr=0.0)
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


@pytest.mark.slow  # compiles the fused kernels (tens of seconds on the CPU)
def test_bench_smoke_with_the_fused_step(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    argv = ["bench", "eco", "--profile", "smoke", "--out", str(out), "--set", "fused=true"]
    assert main(argv) == 0
    m = load_results(out / "results.json")["metrics"]
    assert m["step_time_ms.eco_fp8_rtn_fused"] > 0
    assert (out / "plots" / "step_time.png").stat().st_size > 0
