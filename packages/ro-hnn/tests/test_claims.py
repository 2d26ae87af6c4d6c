"""The changed claims can be false: the issue's own figures (h10 1.10 vs 1.15 inside a seed
spread of 0.14-0.16, both worse than the mean) must not count as a win."""

from __future__ import annotations

import pytest

from icml26.ro_hnn.paper import PAPER

SYSTEMS = ("fput", "cloth")


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def _metrics(model: float, baseline: float, sd_model: float, sd_base: float, base: str) -> dict:
    out = {}
    for s in SYSTEMS:
        out[f"rollout_error.{s}.rohnn.h10"] = model
        out[f"rollout_error.{s}.{base}.h10"] = baseline
        out[f"seed_std.rollout_error.{s}.rohnn.h10"] = sd_model
        out[f"seed_std.rollout_error.{s}.{base}.h10"] = sd_base
    return out


@pytest.mark.parametrize(
    ("cid", "base"),
    [
        ("long_horizon_beats_unconstrained", "ae_node"),
        ("beats_psd", "psd_hnn"),
        ("scales_beyond_full_hnn", "full_hnn"),
    ],
)
def test_long_horizon_claims_need_a_floor_and_a_margin(cid: str, base: str) -> None:
    claim = _claim(cid)
    assert claim.evaluate(_metrics(0.3, 0.8, 0.05, 0.1, base))["holds"] is True
    # the case: both worse than the mean, gap inside the seed spread
    assert claim.evaluate(_metrics(1.10, 1.15, 0.16, 0.14, base))["holds"] is False
    # a clear gap, but both worse than predicting the mean state: no accuracy, no claim
    assert claim.evaluate(_metrics(1.05, 3.0, 0.05, 0.1, base))["holds"] is False
    # accurate, but the gap is inside the spread
    assert claim.evaluate(_metrics(0.30, 0.40, 0.06, 0.06, base))["holds"] is False


def test_generalisation_needs_an_accurate_model() -> None:
    claim = _claim("generalises")
    ok = {"generalisation_gap.fput.rohnn": 1.1, "rollout_error.fput.rohnn.h1": 0.2}
    assert claim.evaluate(ok)["holds"] is True
    bad = {**ok, "rollout_error.fput.rohnn.h1": 0.96}  # ratio of two failures
    assert claim.evaluate(bad)["holds"] is False


def test_exact_symplecticity_is_a_test_not_a_claim() -> None:
    assert "symplectic_by_construction" not in {c.id for c in PAPER.claims}
