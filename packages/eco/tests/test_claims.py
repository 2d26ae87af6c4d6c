"""The claims' rules decide both ways: each can be false on figures a run could produce."""

from __future__ import annotations

from typing import Any

from icml26.eco.experiment import lower_memory_gaps
from icml26.eco.paper import PAPER

CLAIMS = {c.id: c for c in PAPER.claims}


def _rec(bytes_per_param: float, val_loss: float) -> dict[str, Any]:
    return {"static_bytes_per_param": bytes_per_param, "val_loss": val_loss}


def _pareto_metrics(per: dict[str, dict[str, Any]]) -> dict[str, float]:
    gaps = lower_memory_gaps(per)
    out = {"pareto.moe_lm.eco_points_at_lower_memory": float(len(gaps))}
    out.update({f"pareto.moe_lm.eco_gap_at_lower_memory.{s}": g for s, g in gaps.items()})
    return out


def test_lower_memory_gaps_compare_eco_with_its_own_master_scheme() -> None:
    per = {
        "master_fp8_rtn": _rec(13.0, 2.00),
        "eco_fp8_rtn": _rec(9.0, 2.10),
        "master_int4_sr": _rec(12.75, 2.00),
        "eco_int4_sr": _rec(8.75, 2.01),
        "eco_fp8_sr": _rec(9.0, 1.0),  # its master scheme was not run: not compared
        "naive_fp8_rtn": _rec(9.0, 1.0),  # not ECO
    }
    gaps = lower_memory_gaps(per)
    assert set(gaps) == {"eco_fp8_rtn", "eco_int4_sr"}
    assert abs(gaps["eco_fp8_rtn"] - 0.05) < 1e-12
    assert abs(gaps["eco_int4_sr"] - 0.005) < 1e-12


def test_pareto_claim_fails_when_eco_loses_more_than_2_percent_at_lower_memory() -> None:
    claim = CLAIMS["pareto_shift_moe"]
    close = {"master_fp8_rtn": _rec(13.0, 2.00), "eco_fp8_rtn": _rec(9.0, 2.03)}
    assert claim.evaluate(_pareto_metrics(close))["holds"] is True
    far = {"master_fp8_rtn": _rec(13.0, 2.00), "eco_fp8_rtn": _rec(9.0, 2.05)}
    assert claim.evaluate(_pareto_metrics(far))["holds"] is False


def test_pareto_claim_fails_when_eco_does_not_save_memory() -> None:
    """Memory is measured, not assumed: an ECO point at or above master memory is no shift."""
    claim = CLAIMS["pareto_shift_moe"]
    same = {
        "master_fp8_rtn": _rec(9.0, 2.00),
        "eco_fp8_rtn": _rec(9.0, 1.90),
        "master_int4_rtn": _rec(8.75, 2.0),
        "eco_int4_rtn": _rec(8.5, 2.5),  # lower memory but far worse loss
    }
    assert claim.evaluate(_pareto_metrics(same))["holds"] is False
