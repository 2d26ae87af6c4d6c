"""Learnability, the archive's frontier and lineage, and the schedulers' slot layouts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.dicode.baselines import ACCEL, PLR, DomainRandomisation, TargetOnly
from icml26.dicode.curriculum import Archive, DiCodeCurriculum, SlotStats, learnability
from icml26.dicode.dreamer import MutationDreamer
from icml26.dicode.program import compile_program, target_program


def test_learnability_endpoints_and_peak() -> None:
    assert learnability(0.0) == 0.0
    assert learnability(1.0) == 0.0
    assert learnability(0.5) == 0.25
    grid = np.linspace(0, 1, 101)
    assert grid[np.argmax(learnability(grid))] == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        learnability(1.5)


@given(st.floats(0.0, 1.0))
def test_learnability_is_symmetric_and_bounded(p: float) -> None:
    assert learnability(p) == pytest.approx(learnability(1.0 - p), abs=1e-12)
    assert 0.0 <= learnability(p) <= 0.25


def _easy(goal: str) -> object:
    return compile_program(f"WORLD = {{'goal': '{goal}'}}")


def test_frontier_and_lineage_scores() -> None:
    archive = Archive()
    root = archive.add(target_program(), parent=None, born=0)
    kid = archive.add(_easy("collect_wood"), parent=root.id, born=1)  # type: ignore[arg-type]
    solved = archive.add(_easy("place_table"), parent=root.id, born=1)  # type: ignore[arg-type]
    root.update(SlotStats(10, 0, 0, 0), 0, 0.5)
    kid.update(SlotStats(10, 5, 0, 0), 1, 0.5)
    solved.update(SlotStats(10, 10, 0, 0), 1, 0.5)
    assert [e.id for e in archive.frontier()] == [kid.id]
    assert archive.lineage_score(root, 1.0) == pytest.approx(0.0 + (0.25 + 0.0) / 2)
    kid.update(SlotStats(10, 10, 0, 0), 2, 0.5)  # decayed: (2.5 + 10) / (5 + 10)
    assert kid.success_rate == pytest.approx(12.5 / 15)


def test_dicode_slots_and_archive_growth() -> None:
    rng = np.random.default_rng(0)
    cur = DiCodeCurriculum(MutationDreamer(), [target_program()], n_slots=6, target_slots=2)
    for r in range(4):
        worlds = cur.worlds(rng)
        assert len(worlds) == 6
        assert worlds[0] == worlds[1] == target_program()
        cur.observe([SlotStats(4, float(rng.integers(0, 5)), 0.1, 1.0) for _ in worlds])
        cur.end_round({}, rng)
        assert cur.round == r + 1
    assert len(cur.archive) == 1 + cur.valid
    # dreaming is capped by the slots that can evaluate children: 2 a round here (4 free slots)
    assert cur.new_capacity == 2
    assert cur.dreamed == 4 * cur.new_capacity
    assert 0.0 <= cur.frontier_fraction() <= 1.0
    assert cur.history[-1]["archive_size"] == len(cur.archive)
    with pytest.raises(ValueError, match="selection"):
        DiCodeCurriculum(
            MutationDreamer(), [target_program()], n_slots=2, target_slots=1, selection="best"
        )


def test_learnability_selection_prefers_the_frontier() -> None:
    rng = np.random.default_rng(0)
    cur = DiCodeCurriculum(MutationDreamer(), [target_program()], n_slots=8, target_slots=0)
    hopeless, half = (
        cur.archive.entries[0],
        cur.archive.add(_easy("collect_wood"), parent=0, born=0),
    )  # type: ignore[arg-type]
    hopeless.update(SlotStats(10, 0, 0, 0), 0, 1.0)
    half.update(SlotStats(10, 5, 0, 0), 0, 1.0)
    picks = cur._pick(cur.archive.evaluated(), 400, rng)
    assert picks.count(half.id) > 0.95 * 400
    cur.selection = "uniform"
    picks = cur._pick(cur.archive.evaluated(), 400, rng)
    assert 0.35 * 400 < picks.count(half.id) < 0.65 * 400


def test_baseline_schedulers() -> None:
    rng = np.random.default_rng(0)
    target = target_program()
    assert TargetOnly(target, 4).worlds(rng) == [target] * 4
    dr = DomainRandomisation(target, 4, 1).worlds(rng)
    assert dr[0] == target
    assert len(set(dr[1:])) == 3
    for cls in (PLR, ACCEL):
        plr = cls(target, 6, 2, buffer_size=5)
        for _ in range(6):
            ws = plr.worlds(rng)
            assert ws[:2] == [target, target]
            assert len(ws) == 6
            plr.observe([SlotStats(1, 0, float(rng.random()), 0) for _ in ws])
            plr.end_round({}, rng)
        assert 0 < len(plr.buffer) <= 5
        p = plr._replay_distribution()
        assert p.sum() == pytest.approx(1.0)
        best = int(np.argmax([lv.score for lv in plr.buffer]))
        stale = np.asarray([plr.round - lv.last_seen for lv in plr.buffer])
        if np.all(stale == stale[0]):
            assert int(np.argmax(p)) == best


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((float("nan"), 0.0, 0.0, 0.0), "episodes"),
        ((4.0, float("inf"), 0.0, 0.0), "successes"),
        ((4.0, 1.0, float("nan"), 0.0), "positive_value_loss"),
        ((4.0, 1.0, 0.0, float("-inf")), "returns"),
        ((-1.0, 0.0, 0.0, 0.0), "episodes"),
        ((4.0, 5.0, 0.0, 0.0), "successes"),
        ((4.0, -1.0, 0.0, 0.0), "successes"),
    ],
)
def test_slot_stats_rejects_bad_values(args: tuple[float, ...], field: str) -> None:
    with pytest.raises(ValueError, match=rf"SlotStats\.{field}"):
        SlotStats(*args)


def test_slot_stats_accepts_edges() -> None:
    SlotStats(0.0, 0.0, 0.0, 0.0)
    SlotStats(4.0, 4.0, 0.0, -3.0)


class _EditDreamer:
    """A dreamer that applies one fixed edit to each parent (identity: a no-op mutation)."""

    name = "edit"

    def __init__(self, edit: object = None) -> None:
        self.edit = edit

    def dream(self, context: object, n: int, rng: np.random.Generator) -> list[object]:
        from icml26.dicode.dreamer import Dream

        out = []
        for i in range(n):
            parent = context.parents[i % len(context.parents)][0]  # type: ignore[attr-defined]
            child = parent if self.edit is None else self.edit(parent)  # type: ignore[operator]
            src = child.source()
            out.append(Dream(src, compile_program(src), operator="edit"))
        return out


def _one_round(cur: DiCodeCurriculum) -> None:
    rng = np.random.default_rng(0)
    worlds = cur.worlds(rng)
    cur.observe([SlotStats(4, 2, 0.1, 1.0) for _ in worlds])
    cur.end_round({}, rng)


def _halve_density(p: object) -> object:
    import dataclasses

    return dataclasses.replace(p, density=tuple(d / 2 for d in p.density))  # type: ignore[arg-type, attr-defined]


def test_noop_child_is_rejected_as_duplicate() -> None:
    cur = DiCodeCurriculum(_EditDreamer(), [target_program()], n_slots=6, target_slots=2)
    _one_round(cur)
    assert cur.dreamed == 2
    assert cur.rejections == {"duplicate": 2}
    assert cur.valid == 0
    assert len(cur.archive) == 1
    # a real edit of our world is kept
    cur = DiCodeCurriculum(
        _EditDreamer(_halve_density), [target_program()], n_slots=6, target_slots=2
    )
    _one_round(cur)
    assert cur.rejections == {}
    assert cur.valid == 2
    assert len(cur.archive) == 3


def test_duplicate_under_the_craftax_lowering() -> None:
    craftax_target = pytest.importorskip("icml26.dicode.craftax_target")
    if not craftax_target.craftax_available():
        pytest.skip("craftax not installed")
    # Craftax has no resource densities: halving them is a no-op there
    cur = DiCodeCurriculum(
        _EditDreamer(_halve_density),
        [target_program()],
        n_slots=6,
        target_slots=2,
        lower=craftax_target.lower_to_craftax,
    )
    _one_round(cur)
    assert cur.rejections == {"duplicate": 2}
    assert len(cur.archive) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"children_per_round": 0}, "children_per_round"),
        ({"decay": 5.0}, "decay"),
        ({"decay": 0.0}, "decay"),
        ({"frontier": (0.9, 0.1)}, "frontier"),
        ({"frontier": (-0.1, 0.5)}, "frontier"),
        ({"lineage_weight": -1.0}, "lineage_weight"),
        ({"lineage_weight": float("nan")}, "lineage_weight"),
        ({"roots": []}, "roots"),
        ({"n_slots": 0, "target_slots": 0}, "n_slots"),
        ({"min_episodes": 0}, "min_episodes"),
    ],
)
def test_curriculum_refuses_bad_settings(kwargs: dict, message: str) -> None:
    args = {"roots": [target_program()], "n_slots": 8, "target_slots": 2} | kwargs
    roots = args.pop("roots")
    with pytest.raises(ValueError, match=message):
        DiCodeCurriculum(MutationDreamer(), roots, **args)


def test_observe_needs_one_stat_per_slot() -> None:
    cur = DiCodeCurriculum(MutationDreamer(), [target_program()], n_slots=4, target_slots=1)
    with pytest.raises(ValueError, match="call worlds"):
        cur.observe([SlotStats(1, 0, 0, 0)] * 4)
    cur.worlds(np.random.default_rng(0))
    with pytest.raises(ValueError, match="3 slot stats for 4 slots"):
        cur.observe([SlotStats(1, 0, 0, 0)] * 3)


def test_a_child_counts_as_evaluated_after_min_episodes() -> None:
    rng = np.random.default_rng(0)
    cur = DiCodeCurriculum(
        MutationDreamer(), [target_program()], n_slots=4, target_slots=1, min_episodes=4
    )
    cur.worlds(rng)
    cur.observe([SlotStats(4, 2, 0, 0)] * 4)  # the root in every slot: p = 1/2
    cur.end_round({}, rng)
    assert cur.dreamed == 1
    assert len(cur.archive) == 2
    programs = cur.worlds(rng)
    child = cur.archive.entries[1]
    assert programs[1] == child.program  # the queued child got the first open slot
    # one finished episode, a success: measured (selection sees it) but not yet evaluated
    cur.observe([SlotStats(0, 0, 0, 0), SlotStats(1, 1, 0, 0), *[SlotStats(0, 0, 0, 0)] * 2])
    assert child.success_rate == 1.0
    assert child in cur.archive.evaluated()
    assert child not in cur.archive.evaluated(cur.min_episodes)
    assert cur.frontier_fraction() == 1.0  # the root alone (p = 0.5) counts
    # three more episodes, one success: evaluated now, p = 2/4 (decayed counts)
    cur.observe([SlotStats(0, 0, 0, 0), SlotStats(3, 1, 0, 0), *[SlotStats(0, 0, 0, 0)] * 2])
    assert child in cur.archive.evaluated(cur.min_episodes)
    assert child.finished == 4


def test_accel_counts_a_failed_edit_once() -> None:
    class Broken(MutationDreamer):
        def mutate(self, *a: object, **k: object) -> tuple[str, str]:
            return "import os\n", "bad"

    accel = ACCEL(target_program(), 4, 1, warmup=1, edit_prob=1.0)
    accel.editor = Broken()
    rng = np.random.default_rng(0)
    accel.worlds(rng)  # empty buffer: 3 random levels
    accel.observe([SlotStats(1, 0, 0.5, 0)] * 4)
    accel.end_round({}, rng)
    accel.worlds(rng)  # warm buffer: every new level is a failed edit, then a random level
    new_levels = accel.proposed - 3
    assert accel.edits_proposed == new_levels > 0
    assert accel.edits_valid == 0
    assert accel.valid == accel.proposed  # each level made is counted once (random: valid)


def test_valid_rate_counts_duplicates_as_valid_programs() -> None:
    from icml26.dicode.summary import archive_figures

    unit = {
        "dreamed": 10,
        "valid": 5,
        "rejections": {"duplicate": 3, "invalid": 2},
        "frontier_fraction": 0.5,
        "archive_size": 6,
        "archive_evaluated": 6,
        "archive": [{"parent": None, "goal": "collect_diamond"}]
        + [{"parent": 0, "goal": g} for g in ("eat_cow",) * 4 + ("place_table",)],
    }
    fig = archive_figures([unit])
    assert fig["program_valid_rate"] == pytest.approx(0.8)  # 5 kept + 3 duplicates of 10
    assert fig["program_duplicate_rate"] == pytest.approx(0.3)
    assert fig["goal_concentration"] == pytest.approx(0.8)  # 4 of 5 children: eat_cow
