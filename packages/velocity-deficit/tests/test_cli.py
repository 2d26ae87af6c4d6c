"""The smoke profile through the umbrella CLI (claims checked on its keys), the bench, resume,
the README tables, and bad config values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from icml26.shared.cli import main
from icml26.shared.results import load_results
from icml26.shared.testing import check_claims, check_paper
from icml26.velocity_deficit.config import RunConfig, dataset_name
from icml26.velocity_deficit.paper import PAPER
from icml26.velocity_deficit.tables import render, write_readme_block


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("smoke") / "run"
    assert main(["run", "velocity-deficit", "--profile", "smoke", "--out", str(out)]) == 0
    return out


def test_smoke_run_writes_the_keys_the_claims_read(smoke_run: Path) -> None:
    check_paper(PAPER, smoke_run)
    m = load_results(smoke_run / "results.json")["metrics"]
    # smoke writes quick's keys: every rule of quick's claims names metrics it has, and decides
    assert check_claims(PAPER.claims, m, "quick") == []
    for key in (
        "velocity_ratio.gmm2.fit.baseline.t0",
        "velocity_ratio.digits.short.baseline.t0p95",
        "velocity_ratio_exact.gmm16.t0p5",
        "velocity_ratio_exact.digits.t0p1",  # the empirical field up to empirical_t_max
        "learned_vs_exact.gmm16.fit.baseline.t0",
        "fd.digits.fit.ssc.nfe50",
        "fd.gmm16.short.mafm_ssc.nfe5",
        "fd.gmm2.fit.baseline.nfe100",  # the baseline's reference budget
        "fd_gain_lcb.gmm16.short.ssc.nfe50",
        "fd_gain_vs_ref.digits.short.ssc_naive.nfe50",
        "fd_floor.digits",
        "loglik_gap.gmm2.fit.ssc.nfe50",
        "mafm_val.gmm16.short.l1",
        "ssc_gamma0.gmm16.fit.mafm",
        "deficit_slope_vs_dim.fit.learned",
        "fm_excess_loss.gmm16.fit.baseline",
        "velocity_ratio_exact_data.gmm16.t0p1",  # what SSC and MAFM are sized from
        "sw_gain_ucb.gmm16.short.ssc.nfe50",
        "sw_gain_vs_ref_ucb.digits.short.ssc.nfe50",
        "fd_floor_se.gmm16",
        "fd.gmm16.short.mafm_paper.nfe50",  # the paper's MAFM (rho = 1)
        "mafm_paper_val.gmm16.short.l1",
        "fd_floor_sd.gmm16",
        "fd_floor_sets.digits",
        # the placebos: real variants with their own keys
        "fd_gain_lcb.gmm16.short.ssc_random.nfe50",
        "sw_gain_vs_ref_ucb.digits.short.ssc_random.nfe50",
        "ssc_random_gamma0.gmm2.fit.baseline",
        "fd_gain_lcb.gmm16.short.mafm_random.nfe50",
        "sw_gain_ucb.gmm16.short.mafm_paper_random.nfe50",
        "mafm_random_lambda.gmm16.short",
        "deficit_slope_vs_dim_ucb.short.learned",
    ):
        assert key in m, key
    assert "fd.gmm2.fit.mafm.nfe50" not in m  # MAFM only on `compare`
    assert "fd.gmm2.fit.ssc.nfe100" not in m  # the long budget is the baseline's only
    assert "velocity_ratio_exact.digits.t0p5" not in m  # beyond the empirical field's range
    assert "velocity_ratio_exact_data.gmm16.t0p5" not in m  # SSC reads no oracle beyond t_max
    # the training rows' field stands in for the mixture's closed form where it is used
    for t in ("t0", "t0p1"):
        data, oracle = (
            m[f"velocity_ratio_exact_data.gmm16.{t}"],
            m[f"velocity_ratio_exact.gmm16.{t}"],
        )
        assert data == pytest.approx(oracle, rel=0.03)
    assert m["fd_floor_se.gmm16"] > 0
    # four disjoint held-out sets of 64 rows (n_val 256): the SE is the SD over sqrt(4)
    assert m["fd_floor_sets.digits"] == 4.0
    assert m["fd_floor_se.gmm16"] == pytest.approx(m["fd_floor_sd.gmm16"] / 2)
    assert m["fd_gain.gmm2.fit.baseline.nfe50"] == 0.0
    assert not any(k.startswith("deficit_slope_vs_dim") and k.endswith(".exact") for k in m)
    # the placebo variants differ from the method they stand in for (not a copy of it)
    assert m["fd.gmm16.short.ssc_random.nfe50"] != m["fd.gmm16.short.ssc.nfe50"]
    assert m["fd.gmm16.short.mafm_random.nfe50"] != m["fd.gmm16.short.mafm.nfe50"]


def test_smoke_ssc_is_sized_from_the_paired_deficit(smoke_run: Path) -> None:
    """gamma(0) of a chosen deficit schedule is R_exact(0) / R_learned(0), seed by seed."""
    per_seed = json.loads((smoke_run / "per_seed.json").read_text())
    m = load_results(smoke_run / "results.json")["metrics"]
    assert set(per_seed) == {
        f"{d}.{r}" for d in ("gmm2", "gmm16", "digits") for r in ("fit", "short")
    }
    checked = 0
    for key, seeds in per_seed.items():
        name, regime = key.split(".")
        assert len(seeds) == 2
        for s in seeds:
            g0 = s[f"ssc_gamma0.{name}.{regime}.baseline"]
            if s[f"ssc_identity.{name}.{regime}.baseline"] == 1.0:
                assert g0 == 1.0
                continue
            # sized from the data's R_exact (never the mixture's closed-form field)
            exact = m[f"velocity_ratio_exact_data.{name}.t0"]
            assert g0 == pytest.approx(exact / s[f"velocity_ratio.{name}.{regime}.baseline.t0"])
            naive = s[f"ssc_naive_gamma0.{name}.{regime}.baseline"]
            assert naive == pytest.approx(1 / s[f"velocity_ratio.{name}.{regime}.baseline.t0"])
            checked += 1
    assert checked > 0


def test_smoke_resumes_and_renders(smoke_run: Path, tmp_path: Path) -> None:
    before = load_results(smoke_run / "results.json")["metrics"]
    assert main(["run", "velocity-deficit", "--profile", "smoke", "--out", str(smoke_run)]) == 0
    again = load_results(smoke_run / "results.json")["metrics"]
    assert again["fd.digits.short.ssc.nfe50"] == before["fd.digits.short.ssc.nfe50"]
    plots = {p.name for p in (smoke_run / "plots").iterdir()}
    assert {
        "velocity_ratio_vs_t.png",
        "ssc_gain_vs_deficit.png",
        "quality_vs_nfe_digits.png",
        "samples_digits.png",
    } <= plots
    assert "| gmm16 | short | ssc |" in render(smoke_run)
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- tables:begin -->\nSTALE-BLOCK\n<!-- tables:end -->\nb\n")
    write_readme_block(readme, render(smoke_run, compact=True))
    body = readme.read_text()
    assert "STALE-BLOCK" not in body
    assert body.startswith("a\n<!-- tables:begin -->\nGenerated by `python -m icml26")
    assert "| digits | short | " in body
    assert body.endswith("<!-- tables:end -->\nb\n")
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    with pytest.raises(ValueError, match="no <!-- tables:begin -->"):
        write_readme_block(bare, "t")


def test_smoke_bench(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "velocity-deficit", "--profile", "smoke", "--out", str(out)]) == 0
    check_paper(PAPER, out)
    res = json.loads((out / "results.json").read_text())
    assert res["metrics"]["ssc_overhead_ratio"] > 0
    assert "throughput.heun.nfe4" in res["metrics"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("nfe=0,5", "NFE must be >= 1"),
        ("lr=0", "lr must be > 0"),
        ("datasets=cifar", "unknown dataset"),
        ("compare=mnist", "not in datasets"),
        ("regimes=fit,tiny", "regimes must be distinct names"),
        ("mafm_lambdas=0", "lambda = 0 is the baseline"),
        ("ratio_times=0.5", "start at 0.0"),
        ("seeds=0", "seeds must be >= 1"),
        ("select_nfe=3", "must be one of nfe"),
        ("short.train_steps=0", "train_steps must be >= 1"),
        ("n_val=100", "n_val=100 must be >= 2 * n_samples"),
    ],
)
def test_bad_config_exits_2(
    override: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "velocity-deficit", "--profile", "smoke", "--out", str(tmp_path / "x")]
    assert main([*argv, *(arg for one in override.split() for arg in ("--set", one))]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_config_validation_direct() -> None:
    with pytest.raises(ValueError, match="device"):
        RunConfig(device="tpu")
    with pytest.raises(ValueError, match="ratio_times"):
        RunConfig(ratio_times=(1.0,))


def test_user_dataset_names_are_safe_and_stable(tmp_path: Path) -> None:
    specs = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        np.save(tmp_path / folder / "x.npy", np.zeros((10, 2), dtype=np.float32))
        specs.append(f"npy:{tmp_path / folder / 'x.npy'}")
    names = [dataset_name(s) for s in specs]
    assert len(set(names)) == 2
    assert names == [dataset_name(s) for s in specs]
    assert all(n.startswith("user_x_") and "." not in n and "/" not in n for n in names)


def test_user_dataset_paths_checked_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "x.npy", np.zeros((30, 2)))
    bad = [
        (f"datasets=npy:{tmp_path / 'missing.npy'}", "not an existing .npy file"),
        (f"datasets=images:{tmp_path / 'x.npy'}", "not an existing folder"),
        (f"datasets=npy:{tmp_path / 'x.npy'},npy:{tmp_path}/./x.npy", "name the same data"),
    ]
    for override, message in bad:
        out = tmp_path / "run"
        argv = ["run", "velocity-deficit", "--profile", "smoke", "--out", str(out)]
        assert main([*argv, "--set", override, "--set", "compare="]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()
