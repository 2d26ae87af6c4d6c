"""The controls of issue 26: random selection, the paired z, and claims that can fail."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml26.rmft import paper
from icml26.rmft.experiment import Z_MIN_INSTANCES, paired_z
from icml26.rmft.paper import PAPER
from icml26.rmft.selection import select, select_random


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def test_paired_z_is_undecided_without_spread_or_instances() -> None:
    base = np.arange(20.0)
    assert math.isnan(paired_z(base, base - 1.0))  # constant improvement: se = 0, not +-99
    assert math.isnan(paired_z(base[:3], base[:3] - [1.0, 2.0, 0.5]))  # too few pairs
    rng = np.random.default_rng(0)
    after = base - 1.0 + rng.normal(0, 0.5, 20)
    assert paired_z(base, after) > 2
    assert paired_z(after, base) < -2


def test_z_threshold_is_the_one_the_claims_state() -> None:
    assert paper._Z_MIN == Z_MIN_INSTANCES


def test_random_selection_ignores_regret_and_keeps_per_group() -> None:
    regrets = np.tile(np.arange(8.0), 50)  # every group's best rollout is its first
    rng = np.random.default_rng(1)
    keep = select_random(regrets, 2, group_size=8, rng=rng)
    assert keep.size == 100
    assert np.all(np.bincount(keep // 8, minlength=50) == 2)
    assert regrets[keep].mean() > 2  # lowest-regret selection would give 0.5
    low = select("lowest_regret", regrets, 2, group_size=8, rng=rng)
    assert regrets[low].mean() == 0.5
    with pytest.raises(ValueError, match="selection"):
        select("best", regrets, 2, group_size=8, rng=rng)
    with pytest.raises(ValueError, match="keep"):
        select_random(regrets, 9, group_size=8, rng=rng)


@pytest.mark.parametrize(
    ("cid", "name"),
    [
        ("rmft_beats_greedy_base", "rmft_vs_base_greedy"),
        ("rmft_beats_random_selection", "rmft_vs_random_select"),
    ],
)
def test_control_claims_can_fail(cid: str, name: str) -> None:
    claim = _claim(cid)
    ok = {f"regret_ratio_by_axis.train.{name}": 0.8, f"improvement_z_by_axis.train.{name}": 3.0}
    assert claim.evaluate(ok)["holds"] is True
    worse = {**ok, f"regret_ratio_by_axis.train.{name}": 1.05}
    assert claim.evaluate(worse)["holds"] is False
    noise = {**ok, f"improvement_z_by_axis.train.{name}": 1.0}
    assert claim.evaluate(noise)["holds"] is False
    undecided = {**ok, f"improvement_z_by_axis.train.{name}": None}
    assert claim.evaluate(undecided)["holds"] is None


def test_llm_claim_needs_the_controls_too() -> None:
    claim = _claim("llm_rmft_improves")
    ok = {
        f"{k}_by_axis.train.{m}": v
        for m in ("llm", "llm_vs_base_greedy", "llm_vs_random_select")
        for k, v in (("regret_ratio", 0.8), ("improvement_z", 3.0))
    }
    assert claim.evaluate(ok)["holds"] is True
    assert (
        claim.evaluate({**ok, "regret_ratio_by_axis.train.llm_vs_base_greedy": 1.2})["holds"]
        is False
    )
    assert claim.applies_to("full")
    assert not claim.applies_to("quick")
