"""The issue's fixes: episodes end on task success, slots keep their world for a full
episode, every dreamed child is evaluated before it counts, ``frontier_fraction`` over
evaluated entries only."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

from icml26.dicode.baselines import PLR, DomainRandomisation
from icml26.dicode.curriculum import DiCodeCurriculum, SlotStats
from icml26.dicode.dreamer import MutationDreamer, seed_programs
from icml26.dicode.program import compile_program, target_program
from icml26.dicode.tech import ACTIONS
from icml26.dicode.training import hold_slots


def test_episode_ends_when_the_goal_is_solved(world_fns: dict[str, Any]) -> None:
    # a tree right of the spawn and "collect_wood" as the goal: one 'do' solves the task
    source = (
        "WORLD = {'goal': 'collect_wood', 'zombie_spawn': 0.0, 'episode_length': 400,"
        " 'density': {'tree': 0.0, 'stone': 0.0, 'coal': 0.0, 'iron': 0.0}}\n"
        "def build(world):\n    world.place('tree', 1, 0)\n"
    )
    params = compile_program(source).params()
    _, state = world_fns["reset"](jax.random.PRNGKey(0), params)
    state = state.replace(facing=np.int32(1))  # face right, toward the tree
    _, state2, reward, done, _ = world_fns["step"](
        jax.random.PRNGKey(1), state, ACTIONS.index("do"), params
    )
    assert bool(state2.achievements.any())
    assert float(reward) > 0
    assert bool(done), "the solved task must end the episode"
    # the same world with another goal keeps going
    other = compile_program(source.replace("collect_wood", "collect_diamond")).params()
    _, s_o = world_fns["reset"](jax.random.PRNGKey(0), other)
    s_o = s_o.replace(facing=np.int32(1))
    _, _, _, done_o, _ = world_fns["step"](jax.random.PRNGKey(1), s_o, ACTIONS.index("do"), other)
    assert not bool(done_o)


def test_hold_slots_until_every_env_finished_an_episode() -> None:
    since = np.asarray([1, 2, 0, 3, 1, 1], dtype=float)  # 3 slots x 2 envs
    assert hold_slots(since, 3) == [False, True, False]
    with pytest.raises(ValueError, match="split"):
        hold_slots(np.zeros(5), 3)


def _curriculum(**kw: Any) -> DiCodeCurriculum:
    return DiCodeCurriculum(
        MutationDreamer(), seed_programs(), n_slots=8, target_slots=2, children_per_round=4, **kw
    )


def test_held_slots_keep_their_world_in_every_scheduler() -> None:
    rng = np.random.default_rng(0)
    keep = [False, False, True, False, True, False, False, True]
    for sched in (
        _curriculum(),
        PLR(target_program(), 8, 2),
        DomainRandomisation(target_program(), 8, 2),
    ):
        first = sched.worlds(rng)
        sched.observe([SlotStats(1.0, 0.0, 0.1, 0.0) for _ in first])
        sched.end_round({}, rng)
        second = sched.worlds(rng, keep=keep)
        for i, k in enumerate(keep):
            if k:
                assert second[i] is first[i] or second[i] == first[i]
        assert second[:2] == [target_program()] * 2


def test_every_dreamed_child_is_evaluated_and_frontier_counts_only_evaluated() -> None:
    rng = np.random.default_rng(1)
    cur = _curriculum(min_episodes=4)  # a slot's round measures 4 episodes below
    rounds = 24
    for _ in range(rounds):
        programs = cur.worlds(rng)
        # every slot finishes episodes this round (no hold): success ~ 50%
        cur.observe([SlotStats(4.0, float(rng.integers(0, 5)), 0.1, 1.0) for _ in programs])
        cur.end_round({}, rng)
    born_before_last = [e for e in cur.archive.entries if e.born < rounds]
    evaluated = cur.archive.evaluated(cur.min_episodes)
    assert all(e in evaluated for e in born_before_last), [
        (e.id, e.born) for e in born_before_last if e.success_rate is None
    ]
    assert cur.dreamed > 0
    assert len(cur.archive) > len(seed_programs())
    # add unevaluated children: the fraction must not move
    before = cur.frontier_fraction()
    for _ in range(5):
        cur.archive.add(target_program(), parent=0, born=rounds + 1)
    assert cur.frontier_fraction() == pytest.approx(before)
    lo, hi = cur.frontier_bounds
    assert before == pytest.approx(
        len(cur.archive.frontier(lo, hi, cur.min_episodes)) / len(evaluated)
    )


def test_dreaming_waits_while_children_are_queued() -> None:
    rng = np.random.default_rng(0)  # a stream whose 3 children are all new worlds
    cur = _curriculum()
    cur.worlds(rng)
    cur.observe([SlotStats(4.0, 2.0, 0.1, 1.0) for _ in range(8)])
    cur.end_round({}, rng)
    assert cur.dreamed == cur.new_capacity  # 3 dreamed, not 4
    assert cur.rejections == {}
    assert len(cur.queue()) == cur.new_capacity
    # every non-target slot held: nothing new is played, so nothing new is dreamed
    cur.worlds(rng, keep=[False, False] + [True] * 6)
    cur.observe([SlotStats(0.0, 0.0, 0.1, 0.0) for _ in range(8)])
    before = cur.dreamed
    cur.end_round({}, rng)
    assert cur.dreamed == before


class _FlakyEditor(MutationDreamer):
    """Every other edit is out of range (a density of 5)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def mutate(self, program: Any, rng: Any, profile: Any, k: int = 1) -> tuple[str, str]:
        self.calls += 1
        if self.calls % 2:
            return "WORLD = {'density': {'tree': 5.0}}\n", "bad"
        return "WORLD = {'goal': 'collect_wood'}\n", "ok"


def test_bench_counts_rejected_edits_and_never_substitutes_the_parent() -> None:
    from icml26.dicode.bench import compiled_edit

    failed: dict[str, int] = {}
    rng = np.random.default_rng(0)
    prog = compiled_edit(_FlakyEditor(), target_program(), rng, failed)
    assert prog.goal == "collect_wood"
    assert prog != target_program()
    assert failed == {"invalid": 1}

    class _Never(_FlakyEditor):
        def mutate(self, *a: Any, **k: Any) -> tuple[str, str]:
            return "import os\n", "bad"

    with pytest.raises(RuntimeError, match="rejected"):
        compiled_edit(_Never(), target_program(), rng, failed, attempts=3)
    assert failed["forbidden"] == 3


def test_dreamer_bench_times_real_dreaming() -> None:
    from icml26.dicode.bench import time_dream_rounds

    rng = np.random.default_rng(0)
    cur = DiCodeCurriculum(
        MutationDreamer(), [target_program()], n_slots=10, target_slots=2, children_per_round=4
    )
    seconds = time_dream_rounds(cur, rng, rounds=5)
    assert seconds > 0
    assert cur.dreamed == 20  # no timed call was a no-op
    assert not cur.archive.pending()
    # a queue cap that stops dreaming is an error, not a silently faster figure
    capped = DiCodeCurriculum(
        MutationDreamer(), [target_program()], n_slots=8, target_slots=2, children_per_round=4
    )
    with pytest.raises(RuntimeError, match="dreamed 3 children"):
        time_dream_rounds(capped, rng, rounds=1)


def test_train_unit_holds_a_slot_whose_episodes_outlast_a_round(
    small_ppo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds of 32 steps, worlds whose episodes last far longer (the target: 400 steps, no
    zombies close at the start): the slots keep their worlds into the next round."""
    from icml26.dicode import training
    from icml26.dicode.config import RunConfig

    config = RunConfig(
        n_envs=8,
        rollout=16,
        updates_per_chunk=2,  # 32 steps per env and round
        hidden=16,
        envs_per_slot=1,
        total_steps=2 * 8 * 16 * 2,
        eval_every=2,
        eval_episodes=4,
        final_eval_episodes=4,
    )
    calls: list[tuple[list[bool] | None, list[Any]]] = []

    class Recording(DiCodeCurriculum):
        def worlds(self, rng: Any, keep: list[bool] | None = None) -> list[Any]:
            out = super().worlds(rng, keep)
            calls.append((keep, out))
            return out

    def make(method: str, cfg: Any, dreamer: Any, lower: Any = None) -> DiCodeCurriculum:
        return Recording(
            dreamer, seed_programs(), n_slots=cfg.n_slots, target_slots=cfg.target_slots
        )

    monkeypatch.setattr(training, "make_scheduler", make)
    evaluator = training.Evaluator(small_ppo, config.eval_episodes)
    unit = training.train_unit(
        "dicode", 0, config, small_ppo, evaluator, MutationDreamer(), probe_progress=False
    )
    assert unit["dreamed"] >= 1  # children were waiting for a slot
    (first_keep, first), (keep, second) = calls
    assert first_keep is None
    assert keep is not None
    held = [i for i in range(config.target_slots, config.n_slots) if keep[i]]
    assert len(held) >= 4, keep  # most 400-step episodes cannot end in 32 steps
    for i in held:
        assert second[i] == first[i]  # held: no dreamed child took the slot
