"""The CLI end to end on the smoke profile, resuming, the bench, and bad configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icml26.lean_slt.config import RunConfig
from icml26.lean_slt.paper import PAPER
from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_paper


def test_smoke_run_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "lean-slt", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results, strict=True)
    m = results["metrics"]
    for p in ("finite_iid", "euclidean_ball", "l1_ball", "brownian"):
        for k in ("bound", "mc_sup", "lo", "hi", "ratio"):
            assert f"dudley.{p}.{k}" in m
        assert m[f"dudley.{p}.ratio"] >= 1  # Dudley's theorem, as a test
    for f in ("norm", "max", "softmax", "dist_to_set"):
        assert m[f"concentration.{f}.max_excess"] <= m[f"concentration.{f}.mc_error"]
    for s in ("linear", "l1", "l1_dim_hard", "l1_dim_sparse_oracle", "l0"):
        assert f"ls_rate.{s}.exponent" in m
        assert f"ls_rate.{s}.theory_exponent" in m
    for d in (2, 10, 100):
        assert m[f"maurey.d{d}.log_packing"] <= m[f"maurey.d{d}.log_bound"]
        assert f"maurey.d{d}.log_greedy" in m
    assert m["checks.failed"] == 0
    for name in ("dudley_bound_vs_mc", "concentration_tails", "ls_rates", "maurey"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 0
    rows = json.loads((out / "theorem_map.json").read_text())["rows"]
    assert any(r["lean_name"] == "dudley" for r in rows)
    assert "| process |" in (out / "tables.md").read_text()
    # a second run into the same folder resumes every part from the checkpoint
    assert main(["run", "lean-slt", "--profile", "smoke", "--out", str(out)]) == 0
    again = load_results(out / "results.json")["metrics"]
    assert again["dudley.l1_ball.mc_sup"] == m["dudley.l1_ball.mc_sup"]


def test_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "lean-slt", "--profile", "smoke", "--out", str(out)]) == 0
    results = load_results(out / "results.json")
    check_paper(PAPER, results, strict=True)
    assert results["metrics"]["bench.greedy_same_net"] == 1
    assert results["metrics"]["bench.integral_rel_diff"] < 1e-3


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("parts", ("dudley", "proofs"), "unknown parts"),
        ("processes", ("levy",), "unknown processes"),
        ("dudley_sizes", (10,), "at least two distinct"),
        ("dudley_sizes", (1, 10), "integer >= 2"),
        ("sigma", -1.0, "sigma must be a finite number > 0"),
        ("maurey_eps", 0.0, "maurey_eps must be a finite number > 0"),
        ("linear_sizes", (5, 50), "exceed linear_dim"),
        ("l0_dim", 60, "l0_dim <= 40"),
    ],
)
def test_config_validation(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(**{field: value})  # type: ignore[arg-type]


def test_cli_rejects_bad_override(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "never"
    assert main(["run", "lean-slt", "--set", "sigma=-2", "--out", str(out)]) == 2
    assert "sigma" in capsys.readouterr().err
    assert not out.exists()
