"""The run's budget: a defender runs all its seeds or none, estimated from measured stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.magic.budget import StageBudget
from icml26.shared import RunDir


def _run(tmp_path: Path, stages: dict[str, float]) -> RunDir:
    rd = RunDir(tmp_path)
    for name, wall in stages.items():
        rd.log_metrics(stage=name, wall_s=wall, cpu_s=wall)
    return rd


def test_nothing_measured_fits_and_no_budget_fits_everything(tmp_path: Path) -> None:
    assert StageBudget(_run(tmp_path, {}), 0.01).fits("magic", [0, 1, 2])
    rd = _run(tmp_path / "b", {"magic-seed0": 1e6})
    assert StageBudget(rd, 0).fits("static", [0, 1, 2])


def test_estimate_from_own_stages_else_the_longest_other(tmp_path: Path) -> None:
    rd = _run(
        tmp_path,
        {
            "judge": 500.0,
            "warm0": 100.0,
            "magic-seed0": 300.0,
            "magic-seed1": 500.0,
            "static-seed0": 50.0,
        },
    )
    b = StageBudget(rd, 60)
    assert b.estimate("magic", 1, 0) == pytest.approx(400.0)  # its own mean
    assert b.estimate("static", 2, 0) == pytest.approx(100.0)
    assert b.estimate("base", 2, 1) == pytest.approx(2 * 500.0 + 100.0)  # unmeasured: longest
    assert b.fits("static", [1, 2])
    assert not StageBudget(rd, 5).fits("magic", [2])  # 400 s > 300 s left
    assert StageBudget(rd, 5).fits("magic", [])  # nothing left to run


def test_bad_budget(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="minutes"):
        StageBudget(RunDir(tmp_path), -1)


def test_warm_weights_refuse_unknown_parts() -> None:
    from icml26.magic.policies import Policies, load_warm

    empty = Policies(None, None, {})
    with pytest.raises(ValueError, match="names no adapter"):
        load_warm(empty, {"lora_A.weight": 0})
    with pytest.raises(ValueError, match="need"):
        load_warm(empty, {"attacker::w": 0})
