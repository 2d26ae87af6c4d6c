"""The run's plan and its figures, checked by hand on made-up records."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from icml26.eco.config import RunConfig
from icml26.eco.jobs import plan
from icml26.eco.study import loglog_slope, pareto_metrics, summarise

CFG = RunConfig(
    seeds=(0, 1, 2),
    workloads=("mlp",),
    schemes=("master_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn"),
    extra_schemes=(),
    sweep_lrs=(),
    ablations=("scale_at_injection",),
    ablation_workloads=("mlp",),
    ablation_schemes=("eco_fp8_rtn",),
    ablation_seeds=(0, 1, 2),
)

VAL = {  # validation loss by (scheme, ablation, seed)
    ("master_fp8_rtn", "default"): [1.00, 1.10, 0.90],
    ("naive_fp8_rtn", "default"): [1.20, 1.32, 1.17],
    ("eco_fp8_rtn", "default"): [1.05, 1.12, 0.93],
    ("eco_fp8_rtn", "scale_at_injection"): [1.06, 1.14, 0.95],
}


def _record(val: float, static: float) -> dict:
    return {
        "losses": [2.0, val],
        "final_loss": val + 0.1,
        "val_loss": val,
        "memory": {"total": static, "bytes_per_param": static / 100},
        "peak": {"static": static, "transient": 50.0, "peak": static + 50.0},
        "step_seconds": 0.0,
        "n_params": 100,
        "extra": {},
    }


def _records(cfg: RunConfig) -> tuple[list, list]:
    jobs = plan(cfg)
    records = []
    for job in jobs:
        static = 1300.0 if job.scheme.startswith("master") else 900.0
        records.append(_record(VAL[(job.scheme, job.ablation)][job.seed], static))
    return jobs, records


def test_plan_trains_each_job_once_and_pairs_the_seeds() -> None:
    jobs = plan(CFG)
    stages = [j.stage for j in jobs]
    assert len(stages) == len(set(stages))
    # 3 schemes x 3 seeds, plus the ablated ECO at each seed; defaults shared with the main part
    assert len(jobs) == 9 + 3
    assert {j.seed for j in jobs} == {0, 1, 2}
    peaks = [j for j in jobs if j.measure_peak]
    assert {j.seed for j in peaks} == {0}
    assert all(j.stage.replace("-", "").replace("_", "").isalnum() for j in jobs)


def test_paired_gaps_recovery_and_ablation_by_hand() -> None:
    jobs, records = _records(CFG)
    m = summarise(CFG, jobs, records)
    gaps = [
        (e - r) / r
        for e, r in zip(
            VAL[("eco_fp8_rtn", "default")], VAL[("master_fp8_rtn", "default")], strict=True
        )
    ]
    mean = sum(gaps) / 3
    se = math.sqrt(sum((g - mean) ** 2 for g in gaps) / 2) / math.sqrt(3)
    assert m["gap"]["mlp"]["eco_fp8_rtn"] == pytest.approx(mean)
    assert m["gap_se"]["mlp"]["eco_fp8_rtn"] == pytest.approx(se)
    assert m["gap_ub"]["mlp"]["eco_fp8_rtn"] == pytest.approx(mean + 2 * se)
    naive = [
        (n - r) / r
        for n, r in zip(
            VAL[("naive_fp8_rtn", "default")], VAL[("master_fp8_rtn", "default")], strict=True
        )
    ]
    # the ratio of mean paired gaps; delta-method variance of R = mean(g) / mean(g_naive):
    # (s_g² - 2 R s_g,n + R² s_n²) / (n mean(g_naive)²), from the sample (co)variances
    ratio = float(np.mean(gaps) / np.mean(naive))
    cov = np.cov(np.array([gaps, naive]), ddof=1)
    var = (cov[0, 0] - 2 * ratio * cov[0, 1] + ratio**2 * cov[1, 1]) / (3 * np.mean(naive) ** 2)
    assert m["recovered"]["mlp"]["eco_fp8_rtn"] == pytest.approx(1 - ratio)
    assert m["recovered_se"]["mlp"]["eco_fp8_rtn"] == pytest.approx(math.sqrt(var))
    assert m["recovered"]["mlp"]["naive_fp8_rtn"] == 0.0
    assert m["vs_naive"]["mlp"]["eco_fp8_rtn"] == pytest.approx(np.mean(naive) - np.mean(gaps))
    assert m["vs_naive"]["mlp"]["naive_fp8_rtn"] == 0.0 == m["vs_naive_lb"]["mlp"]["naive_fp8_rtn"]
    assert m["loss_gap_vs_master"]["mlp"]["eco_fp8_rtn"] == pytest.approx(gaps[0])
    assert m["peak_memory_mb"]["mlp"]["eco_fp8_rtn"] == pytest.approx(950.0 / 2**20)
    row = m["ablation"]["mlp"]["eco_fp8_rtn"]["scale_at_injection"]
    deltas = [
        a - b
        for a, b in zip(
            VAL[("eco_fp8_rtn", "scale_at_injection")], VAL[("eco_fp8_rtn", "default")], strict=True
        )
    ]
    assert row["delta"] == pytest.approx(sum(deltas) / 3)
    assert row["master"] == pytest.approx(1.0)  # master unaffected: its default runs
    assert m["final_loss"]["mlp"]["eco_fp8_rtn.scale_at_injection"] == pytest.approx(
        sum(VAL[("eco_fp8_rtn", "scale_at_injection")]) / 3 + 0.1
    )


def test_pareto_compares_only_points_below_master_memory() -> None:
    main = {
        "static_memory_mb": {
            "moe_lm": {"master_fp8_rtn": 13.0, "eco_fp8_rtn": 9.0, "eco_int4_rtn": 13.5}
        }
    }
    paired = {"gap_ub": {"moe_lm": {"eco_fp8_rtn": 0.03, "eco_int4_rtn": 0.01}}}
    out = pareto_metrics(main, paired)["moe_lm"]
    assert out["gap_at_lower_memory"] == {"eco_fp8_rtn": 0.03}  # int4 has no master: skipped
    assert out["points_at_lower_memory"] == 1


def test_loglog_slope_of_a_power_law() -> None:
    lrs = [1e-2, 3e-3, 1e-3]
    assert loglog_slope(lrs, [0.1 * (lr / 1e-2) ** -1.0 for lr in lrs]) == pytest.approx(-1.0)
    assert math.isnan(loglog_slope(lrs, [1.0, -1.0, 2.0]))


def test_seeds_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="seeds must be distinct"):
        replace(CFG, seeds=(0, 0))


def test_no_recovery_is_reported_where_naive_removal_loses_nothing() -> None:
    flat = dict(VAL)
    flat[("naive_fp8_rtn", "default")] = [1.01, 1.08, 0.91]  # within noise of master weights
    jobs = plan(CFG)
    records = [_record(flat[(j.scheme, j.ablation)][j.seed], 900.0) for j in jobs]
    m = summarise(CFG, jobs, records)
    assert "mlp" not in m.get("recovered", {})
    assert "eco_fp8_rtn" in m["gap"]["mlp"]  # the gaps themselves are still reported
