"""The claims' rules decide both ways on figures a run could produce, and each one fails when
naive removal takes ECO's place (its placebo)."""

from __future__ import annotations

from typing import Any

import pytest

from icml26.eco.paper import BENCH_CLAIMS, CLAIMS
from icml26.shared.testing import placebo_problems

BY_ID = {c.id: c for c in CLAIMS}


def _near_lossless(eco_gap: float, naive_gap: float = 0.08) -> dict[str, float]:
    m: dict[str, float] = {}
    for w in ("dense_lm", "moe_lm"):
        m[f"gap_ub.{w}.eco_fp8_rtn"] = eco_gap
        m[f"gap_ub.{w}.naive_fp8_rtn"] = naive_gap
    return m


def _pareto(eco_gap: float, eco_vs_naive_lb: float, naive_gap: float = 0.05) -> dict[str, float]:
    return {
        "pareto.moe_lm.gap_at_lower_memory.eco_fp8_rtn": eco_gap,
        "pareto.moe_lm.gap_at_lower_memory.naive_fp8_rtn": naive_gap,
        "vs_naive_lb.moe_lm.eco_fp8_rtn": eco_vs_naive_lb,
        "vs_naive_lb.moe_lm.naive_fp8_rtn": 0.0,  # naive removal against itself: exactly 0
    }


def _recovery(eco_lb: float) -> dict[str, float]:
    m = {}
    for w in ("dense_lm", "moe_lm", "mlp"):
        for f in ("fp8", "int4"):
            m[f"recovered_lb.{w}.eco_{f}_rtn"] = eco_lb
            m[f"recovered_lb.{w}.naive_{f}_rtn"] = 0.0  # naive removal recovers nothing
    return m


def _sweep(naive: tuple[float, float], eco: tuple[float, float]) -> dict[str, float]:
    return {
        "lr_sweep.gap_at_max_lr.naive_fp8_rtn": naive[0],
        "lr_sweep.gap_at_min_lr.naive_fp8_rtn": naive[1],
        "lr_sweep.gap_at_min_lr_se.naive_fp8_rtn": 0.01,
        "lr_sweep.gap_at_max_lr.eco_fp8_rtn": eco[0],
        "lr_sweep.gap_at_min_lr.eco_fp8_rtn": eco[1],
        "lr_sweep.gap_at_min_lr_se.eco_fp8_rtn": 0.01,
    }


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("eco_near_lossless_fp8", _near_lossless(0.015), _near_lossless(0.03)),
    ("pareto_shift_rtn", _pareto(0.015, 0.01), _pareto(0.015, -0.001)),
    # a near-lossless ECO that does not beat naive removal (naive near-lossless too) fails
    ("pareto_shift_rtn", _pareto(0.015, 0.01), _pareto(0.03, 0.01)),
    ("eco_recovers_naive_loss", _recovery(0.6), _recovery(0.4)),
    ("naive_error_inverse_lr", _sweep((0.1, 1.0), (0.02, 0.03)), _sweep((0.1, 0.2), (0.02, 0.03))),
]


@pytest.mark.parametrize(
    ("claim_id", "holding", "failing"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_each_claim_decides_both_ways_and_fails_under_its_placebo(
    claim_id: str, holding: dict[str, Any], failing: dict[str, Any]
) -> None:
    claim = BY_ID[claim_id]
    assert claim.evaluate(holding)["holds"] is True
    assert claim.evaluate(failing)["holds"] is False
    assert placebo_problems(claim, holding, "quick") == []  # naive in ECO's place fails it


def test_every_run_claim_declares_a_placebo_and_bench_claims_a_floor() -> None:
    assert {c.id for c in CLAIMS} == {case[0] for case in CASES}
    assert all(c.kind == "comparative" and c.placebo for c in CLAIMS)
    assert all(c.kind == "absolute" and c.floor for c in BENCH_CLAIMS)
