"""Learning progress on dreamed worlds (``curriculum_stays_learnable``) and its null run: a
frozen agent (PPO with lr = 0) must make exactly zero progress, so the claim fails there."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

from icml26.dicode import DiCodeCurriculum, MutationDreamer, SlotStats, target_program
from icml26.dicode.config import RunConfig
from icml26.dicode.paper import PAPER
from icml26.dicode.ppo import PPO
from icml26.dicode.program import compile_program
from icml26.dicode.progress import measure_goal_success
from icml26.dicode.summary import summarise
from icml26.dicode.tech import ACHIEVEMENT_DEPTH
from icml26.dicode.training import Evaluator, ppo_settings, train_unit
from icml26.shared.testing import placebo_problems

CLAIM = next(c for c in PAPER.claims if c.id == "curriculum_stays_learnable")

# the smoke profile's PPO shapes (its compiled functions are reused), one env per slot: 8
# slots, 2 on the target, 3 children a round; 3 rounds: children born after rounds 1 and 2
SMALL = RunConfig(
    n_envs=8,
    rollout=16,
    updates_per_chunk=2,
    hidden=16,
    envs_per_slot=1,
    total_steps=3 * 8 * 16 * 2,
    eval_every=1,
    eval_episodes=4,
    final_eval_episodes=8,
)


class FrozenPPO:
    """The null run's agent: PPO whose updates are thrown away (it still plays and is
    measured, with the same compiled functions)."""

    def __init__(self, ppo: PPO) -> None:
        self._ppo = ppo

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ppo, name)

    def train_chunk(self, runner: Any, worlds: Any, reset: Any) -> tuple[Any, Any]:
        new, stats = self._ppo.train_chunk(runner, worlds, reset)
        return new.replace(params=runner.params, opt_state=runner.opt_state), stats


def _units(ppo: Any, seeds: tuple[int, ...]) -> dict[str, list[dict]]:
    evaluator = Evaluator(ppo, SMALL.eval_episodes)
    return {
        m: [train_unit(m, s, SMALL, ppo, evaluator, MutationDreamer()) for s in seeds]
        for m in ("dicode", "dicode_random")
    }


@pytest.fixture(scope="module")
def frozen_units(small_ppo: PPO) -> dict[str, list[dict]]:
    """The null run ``frozen_agent``: the same loop, a policy that never changes."""
    assert small_ppo.settings == ppo_settings(SMALL)
    return _units(FrozenPPO(small_ppo), (0, 1))


def test_a_frozen_agent_makes_exactly_zero_progress(frozen_units: dict[str, list[dict]]) -> None:
    for units in frozen_units.values():
        for unit in units:
            probed = [e for e in unit["archive"] if e["success_birth"] is not None]
            assert unit["progress_worlds"] == len(probed) > 0
            assert all(e["success_final"] == e["success_birth"] for e in probed)
            assert unit["learning_progress"] == 0.0
            # only children dreamed before the last round are probed (roots never)
            assert all(e["parent"] is not None for e in probed)
            assert all(e["born"] < SMALL.rounds for e in probed)


def test_the_claim_fails_on_its_null_run(frozen_units: dict[str, list[dict]]) -> None:
    null = summarise(frozen_units, SMALL)
    assert null["learning_progress.dicode"] == 0.0
    assert null["learning_progress_gain_over_random"] == 0.0
    assert CLAIM.evaluate(null)["holds"] is False
    # a run whose children were learnt: the claim holds there and its null check passes
    learnt = {
        "learning_progress.dicode": 0.2,
        "learning_progress.dicode.se": 0.02,
        "learning_progress_gain_over_random": 0.1,
        "learning_progress_gain_over_random.se": 0.03,
    }
    assert CLAIM.evaluate(learnt)["holds"] is True
    assert placebo_problems(CLAIM, learnt, "quick", nulls={"frozen_agent": null}) == []
    # without the null run the placebo cannot be checked
    assert placebo_problems(CLAIM, learnt, "quick")


def test_progress_keys_pair_by_seed() -> None:
    def unit(seed: int, progress: float) -> dict:
        return {
            "seed": seed,
            "returns": [1.0],
            "curve_steps": [0, 1],
            "curve_return": [0.0, 1.0],
            "achievement_success": dict.fromkeys(ACHIEVEMENT_DEPTH, 0.0),
            "frontier_fraction": 0.5,
            "learning_progress": progress,
            "dreamer": "offline_mutation",
            "dreamed": 1,
            "valid": 1,
            "archive_size": 2,
            "train_seconds": 1.0,
            "train_steps": 1,
        }

    units = {
        "dicode": [unit(0, 0.3), unit(1, 0.5), unit(2, 0.1)],
        # listed in another order: pairing is by seed, not by position
        "dicode_random": [unit(2, 0.0), unit(0, 0.1), unit(1, 0.2)],
    }
    m = summarise(units, SMALL)
    assert m["learning_progress.dicode"] == pytest.approx(0.3)
    assert m["learning_progress_gain_over_random"] == pytest.approx(0.2)
    diffs = np.asarray([0.2, 0.3, 0.1])
    assert m["learning_progress_gain_over_random.se"] == pytest.approx(
        diffs.std(ddof=1) / np.sqrt(3)
    )


def test_goal_success_reads_each_world_goal_and_refuses_bad_batches(small_ppo: PPO) -> None:
    ppo = small_ppo
    evaluator = Evaluator(ppo, SMALL.eval_episodes)
    params = ppo.init(jax.random.PRNGKey(0), evaluator.cache.batch([target_program()], 8)).params
    # walled in by water, any 'do' drinks: an untrained policy solves collect_drink, and
    # never collects a diamond (the target's goal)
    easy = compile_program(
        "WORLD = {'goal': 'collect_drink', 'zombie_spawn': 0.0}\n"
        "def build(world):\n"
        + "".join(
            f"    world.place('water', {x}, {y})\n" for x, y in ((1, 0), (-1, 0), (0, 1), (0, -1))
        )
    )
    key = jax.random.PRNGKey(3)
    first = measure_goal_success(evaluator, params, [easy, target_program()], key)
    assert first == measure_goal_success(evaluator, params, [easy, target_program()], key)
    assert first == [1.0, 0.0]
    # the order of the programs is the order of the figures
    assert measure_goal_success(evaluator, params, [target_program(), easy], key) == [0.0, 1.0]
    with pytest.raises(ValueError, match="1 to 4 programs"):
        measure_goal_success(evaluator, params, [], key)
    with pytest.raises(ValueError, match="1 to 4 programs"):
        measure_goal_success(evaluator, params, [easy] * 5, key)


def _fixed_success(program: object) -> float:
    """A non-learning agent: deeper goals are harder, starting items help (review 44z)."""
    depth = ACHIEVEMENT_DEPTH[program.goal] - 0.5 * sum(c > 0 for c in program.start_inventory)
    return 0.0 if program.goal == "collect_diamond" else 0.9 * float(np.exp(-0.5 * max(depth, 0)))


def _frontier_fraction(selection: str, seed: int) -> float:
    rng = np.random.default_rng(seed)
    cur = DiCodeCurriculum(
        MutationDreamer(), [target_program()], n_slots=8, target_slots=2, selection=selection
    )
    for _ in range(24):
        programs = cur.worlds(rng)
        cur.observe(
            [SlotStats(8, float(rng.binomial(8, _fixed_success(p))), 0.0, 0.0) for p in programs]
        )
        cur.end_round({}, rng)
    return cur.frontier_fraction()


def test_frontier_fraction_is_a_mechanism_not_a_claim() -> None:
    """Why the frontier fraction is no longer a claim: learnability selection keeps more of
    the archive on the frontier even for an agent that never learns."""
    learn = np.mean([_frontier_fraction("learnability", s) for s in range(3)])
    uniform = np.mean([_frontier_fraction("uniform", s) for s in range(3)])
    assert learn > uniform + 0.1
