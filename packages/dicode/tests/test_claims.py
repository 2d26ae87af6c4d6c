"""The comparative return claims read paired differences over seeds; their placebos fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.dicode.config import BASELINES
from icml26.dicode.paper import PAPER
from icml26.dicode.summary import paired_return_gains

CLAIMS = {c.id: c for c in PAPER.claims}


def _units(shift: dict[str, list[float]]) -> dict[str, list[dict[str, object]]]:
    # seeds differ a lot (1, 5, 9): an unpaired interval cannot separate a +0.5 shift
    base = [1.0, 5.0, 9.0]
    return {
        method: [
            {"seed": s, "returns": [b + d, b + d]}
            for s, (b, d) in enumerate(zip(base, shift.get(method, [0.0] * 3), strict=True))
        ]
        for method in ("dicode", *BASELINES)
    }


def test_paired_gains_match_hand_computation() -> None:
    g = paired_return_gains(_units({"dicode": [0.4, 0.5, 0.6]}))
    assert g["return_gain.dicode.over.plr"] == pytest.approx(0.5)
    assert g["return_gain.dicode.over.plr.se"] == pytest.approx(0.1 / 3**0.5)
    assert g["return_gain.plr.over.plr"] == 0.0
    assert g["return_gain.plr.over.plr.se"] == 0.0


@pytest.mark.parametrize("claim", ["beats_strongest_baseline", "learnability_selection_matters"])
def test_paired_claims_hold_and_placebos_fail(claim: str) -> None:
    m = paired_return_gains(_units({"dicode": [0.4, 0.5, 0.6]}))
    assert CLAIMS[claim].evaluate(m)["holds"] is True
    assert CLAIMS[claim].under_placebo(m)[0] is False
    # a gain within two paired SEs does not hold
    noisy = paired_return_gains(_units({"dicode": [-1.0, 0.5, 2.0]}))
    assert CLAIMS[claim].evaluate(noisy)["holds"] is False


def test_the_selection_placebo_is_not_a_self_comparison() -> None:
    """learnability_selection_matters puts domain randomisation in DiCode's place: when it
    beats dicode_random as much, the gap says the ablation is weak and the claim is undecided,
    which a self-comparison (an exact 0) could never show."""
    claim = CLAIMS["learnability_selection_matters"]
    assert claim.placebo == {"dicode": "domain_randomisation"}
    weak = paired_return_gains(
        _units({"dicode": [0.4, 0.5, 0.6], "domain_randomisation": [0.4, 0.5, 0.6]})
    )
    entry = claim.evaluate(weak)
    assert entry["placebo_holds"] is True
    assert entry["holds"] is None  # the rule holds, but so does its placebo: undecided


def test_beats_strongest_needs_every_baseline() -> None:
    m = paired_return_gains(_units({"dicode": [0.4, 0.5, 0.6], "accel": [0.5, 0.6, 0.7]}))
    assert CLAIMS["beats_strongest_baseline"].evaluate(m)["holds"] is False
    assert CLAIMS["learnability_selection_matters"].evaluate(m)["holds"] is True


def _craftax_units(shift: list[float]) -> dict[str, list[dict[str, object]]]:
    base = [2.0, 6.0, 10.0]  # seeds differ a lot: only the pairing separates the methods
    ach = {a: 0.0 for a in ("collect_iron", "collect_diamond", "make_iron_pickaxe")}
    ach["make_stone_pickaxe"] = 0.1
    return {
        method: [
            {
                "seed": s,
                "returns": [b + d, b + d],
                "achievement_success": ach,
                "train_seconds": 1.0,
                "train_steps": 100,
            }
            for s, (b, d) in enumerate(zip(base, deltas, strict=True))
        ]
        for method, deltas in (("ppo_target", [0.0] * 3), ("dicode", shift))
    }


class _Budget:
    rounds, steps_per_round = 4, 256


def test_craftax_claim_reads_paired_gains_and_its_placebo_fails() -> None:
    from icml26.dicode.craftax_target import craftax_metrics

    claim = CLAIMS["craftax_beats_ppo"]
    assert set(claim.profiles) >= {"craftax"}
    m = craftax_metrics(_craftax_units([0.4, 0.5, 0.6]), _Budget())
    assert m["craftax.return_gain.dicode.over.ppo_target"] == pytest.approx(0.5)
    assert m["craftax.return_gain.dicode.over.ppo_target.se"] == pytest.approx(0.1 / 3**0.5)
    assert m["craftax.return.dicode"] == pytest.approx(6.5)
    assert m["craftax.env_steps_per_method"] == 1024.0
    assert claim.evaluate(m)["holds"] is True
    assert claim.under_placebo(m)[0] is False  # dicode -> ppo_target: a gain of exactly 0
    # the same mean gain, noisy across seeds: within two paired SEs, it does not hold
    noisy = craftax_metrics(_craftax_units([-1.0, 0.5, 2.0]), _Budget())
    assert claim.evaluate(noisy)["holds"] is False
    # a loss does not hold either
    worse = craftax_metrics(_craftax_units([-0.6, -0.5, -0.4]), _Budget())
    assert claim.evaluate(worse)["holds"] is False


def test_craftax_archive_keys_and_curves_from_the_cached_units(tmp_path: Path) -> None:
    """The Craftax metrics and plot are recomputed from the unit files the stage caches."""
    import json

    from icml26.dicode.craftax_target import CRAFTAX_METHODS, craftax_metrics
    from icml26.dicode.figures import plot_craftax
    from icml26.dicode.training import load_units, unit_path
    from icml26.shared import RunDir

    units = _craftax_units([0.4, 0.5, 0.6])
    for k, u in enumerate(units["dicode"]):
        goals = ["collect_wood"] * (3 + k) + ["eat_cow"]
        u |= {
            "dreamed": 10,
            "valid": 6,
            "rejections": {"duplicate": 3, "invalid": 1},
            "frontier_fraction": 0.5 + 0.1 * k,
            "archive_size": 1 + len(goals),
            "archive_evaluated": len(goals),
            "archive": [{"parent": None, "goal": "collect_diamond"}]
            + [{"parent": 0, "goal": g} for g in goals],
        }
    for us in units.values():
        for u in us:
            u |= {"curve_steps": [0, 512, 1024], "curve_return": [0.0, 1.0, 2.0]}
    run_dir = RunDir(tmp_path / "run")
    (tmp_path / "run" / "units").mkdir(parents=True)
    for method, us in units.items():
        for k, u in enumerate(us):
            unit_path(run_dir, "craftax.", method, k).write_text(json.dumps(u))
    loaded = load_units(run_dir, CRAFTAX_METHODS, 3, prefix="craftax.")
    m = craftax_metrics(loaded, _Budget())
    assert m["craftax.frontier_fraction.dicode"] == pytest.approx(0.6)
    assert m["craftax.frontier_fraction.dicode.se"] == pytest.approx(0.1 / 3**0.5)
    assert m["craftax.program_duplicate_rate.dicode"] == pytest.approx(0.3)
    assert m["craftax.program_valid_rate.dicode"] == pytest.approx(0.9)
    assert m["craftax.goal_concentration.dicode"] == pytest.approx((3 / 4 + 4 / 5 + 5 / 6) / 3)
    assert m["craftax.archive_evaluated.dicode"] == pytest.approx(5.0)
    assert not any(k.startswith("craftax.frontier_fraction.ppo_target") for k in m)
    plot_craftax(run_dir, loaded)
    assert (tmp_path / "run" / "plots" / "craftax_return_curves.png").stat().st_size > 0
    with pytest.raises(FileNotFoundError, match=r"craftax\.ppo_target\.s3\.json"):
        load_units(run_dir, CRAFTAX_METHODS, 4, prefix="craftax.")
