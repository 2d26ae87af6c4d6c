"""MAGIC's alternation switches when it should (the shared schedules, as MAGIC configures them)."""

from __future__ import annotations

import pytest

from icml26.magic.coevolve import make_schedule

ROLES = ["attacker", "defender"]


def _drive(schedule, metric_of):  # type: ignore[no-untyped-def]
    """Run 12 steps; ``metric_of(step, role)`` gives the logged record of each step."""
    history: list[dict] = []
    roles = []
    for step in range(12):
        [role] = schedule.roles_for_step(step, ROLES, history)
        roles.append(role)
        history.append({"role": role, **metric_of(step, role)})
    return roles


def test_every_n_steps() -> None:
    roles = _drive(make_schedule("every", every=3, asr_high=0.5, asr_low=0.1), lambda s, r: {})
    assert roles == ["attacker"] * 3 + ["defender"] * 3 + ["attacker"] * 3 + ["defender"] * 3


def test_switches_when_attack_success_crosses_the_thresholds() -> None:
    """The attacker's batch ASR climbs 0.2, 0.4, 0.6 (> 0.5: switch after its third step);
    the defender's refusal rate climbs 0.5, 0.95 (> 1 - 0.1: switch after its second)."""
    counters = {"attacker": 0, "defender": 0}

    def metric(step: int, role: str) -> dict:
        counters[role] += 1
        k = counters[role]
        if role == "attacker":
            return {"rewards/attack_success/mean": min(0.2 * k, 1.0)}
        return {"rewards/refusal/mean": 0.5 if k % 2 else 0.95}

    roles = _drive(make_schedule("metric", every=10, asr_high=0.5, asr_low=0.1, window=1), metric)
    assert roles[:5] == ["attacker"] * 3 + ["defender"] * 2
    assert roles[5] == "attacker"


def test_metric_schedule_caps_a_phase() -> None:
    roles = _drive(
        make_schedule("metric", every=4, asr_high=0.5, asr_low=0.1),
        lambda s, r: {"rewards/attack_success/mean": 0.0, "rewards/refusal/mean": 0.0},
    )
    assert roles[:9] == ["attacker"] * 4 + ["defender"] * 4 + ["attacker"]


def test_unknown_schedule() -> None:
    with pytest.raises(ValueError, match="'every' or 'metric'"):
        make_schedule("random", every=3, asr_high=0.5, asr_low=0.1)


def test_baselines_get_the_every_schedules_planned_steps_without_magic() -> None:
    from icml26.magic.config import RunConfig
    from icml26.magic.study import magic_step_counts

    every = RunConfig(schedule="every", switch_every=1, magic_steps=3)  # D, A, D
    assert magic_step_counts(every, [], 0) == (2, 1)
    assert magic_step_counts(RunConfig(schedule="every", magic_steps=0), [], 0) == (0, 0)
    attacker_first = RunConfig(schedule="every", switch_every=1, magic_steps=3, start="attacker")
    assert magic_step_counts(attacker_first, [], 0) == (1, 2)
    assert magic_step_counts(every, [{"steps": [2, 1]}], 0) == (2, 1)
    with pytest.raises(RuntimeError, match="schedule plans"):
        magic_step_counts(every, [{"steps": [1, 2]}], 0)
    metric = RunConfig(schedule="metric")
    assert magic_step_counts(metric, [{"steps": [4, 3]}], 0) == (4, 3)
    with pytest.raises(ValueError, match="run 'magic' first"):
        magic_step_counts(metric, [], 0)
