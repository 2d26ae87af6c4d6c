"""The splits: out-of-distribution splits share no combination with training; the expert
solves every split; bad level names fail clearly."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from minigrid.utils.baby_ai_bot import BabyAIBot

from icml26.syvla.config import BABYAI_LEVELS
from icml26.syvla.data import VecEnv, collect_demos
from icml26.syvla.levels import (
    ACTION_NAMES,
    HELD_OUT_COMBOS,
    LEVELS,
    SPLITS,
    TEMPLATES,
    egocentric_view,
    make_env,
    make_level,
    observe,
    partial_view,
    split_spec,
)

TRAIN = SPLITS["train"]


def _template_regex(template: str) -> re.Pattern[str]:
    return re.compile("^" + template.format(color=r"(\w+)", type=r"(\w+)") + "$")


def test_held_out_combos_cover_every_colour_and_type_in_training() -> None:
    shown = TRAIN.combos_shown()
    assert not shown & set(HELD_OUT_COMBOS)
    assert {c for c, _ in HELD_OUT_COMBOS} <= {c for c, _ in shown}
    assert {t for _, t in HELD_OUT_COMBOS} <= {t for _, t in shown}


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**20), level=st.sampled_from(sorted(LEVELS)))
def test_ood_episodes_share_no_combination_with_training(seed: int, level: str) -> None:
    train_templates = [_template_regex(t) for t in TEMPLATES[level]["train"]]
    # ood_combo: the target is a held-out combination, never shown in training
    env = make_env(level, "ood_combo")
    env.reset(seed=seed)
    assert env.target in HELD_OUT_COMBOS
    assert env.target not in TRAIN.combos_shown()
    objs = {
        (o.color, o.type)
        for o in env.grid.grid
        if o is not None and o.type in ("ball", "box", "key")
    }
    assert env.target in objs
    # ood_language: the mission matches no training template
    env = make_env(level, "ood_language")
    env.reset(seed=seed)
    assert not any(r.match(env.mission) for r in train_templates)
    assert env.target in TRAIN.combos_shown()
    # ood_layout: a room size training never uses
    env = make_env(level, "ood_layout")
    env.reset(seed=seed)
    assert env.width != TRAIN.room_size
    # train: a training template and a training combination
    env = make_env(level, "train")
    env.reset(seed=seed)
    assert any(r.match(env.mission) for r in train_templates)
    assert env.target in TRAIN.combos_shown()


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_expert_bot_solves_every_split(split: str) -> None:
    demos = collect_demos(12, split, 13, seed=3)
    assert demos.solved == demos.episodes == 12
    assert len(demos) == len(demos.missions) > 0


def test_bot_success_is_a_real_check() -> None:
    """An episode cut short by its time limit is not counted as solved."""
    env = make_env("goto", "train")
    env.reset(seed=0)
    env.max_steps = 1
    bot = BabyAIBot(env)
    _, reward, term, trunc, _ = env.step(int(bot.replan()))
    assert trunc or (term and reward > 0)


def test_egocentric_view_puts_the_cell_ahead_of_the_agent_above_the_centre() -> None:
    env = make_env("goto", "train")
    for seed in range(20):
        env.reset(seed=seed)
        view = egocentric_view(env, 13)
        ahead = env.grid.get(*env.front_pos)
        code = 1 if ahead is None else ahead.encode()[0]
        assert view[5, 6, 0] == code  # centre (6, 6); ahead = one row up
        assert view.shape == (13, 13, 3)


def test_unknown_level_and_split_fail_clearly() -> None:
    with pytest.raises(ValueError, match="unknown level 'putnext'"):
        make_env("putnext", "train")
    with pytest.raises(ValueError, match="unknown split 'ood_colour'"):
        split_spec("ood_colour")
    assert np.all([s.max_steps > 0 for s in SPLITS.values()])


def test_registry_levels_play_through_vecenv_and_the_bot() -> None:
    """The ``babyai`` profile's levels: minigrid's registry ids, the bot's demonstrations and
    lockstep rooms read through the partial view (no view is a demonstration's)."""
    level = BABYAI_LEVELS[0]
    demos = collect_demos(4, "train", 13, seed=0, levels=(level,))
    assert demos.solved == 4
    assert all(m.startswith("go to") for m in demos.missions)
    env = VecEnv(3, "train", 13, seed=0, stream="rl", levels=(level,))
    env.reset()
    assert env.views.shape == (3, 13, 13, 3)
    assert not {v.tobytes() for v in env.views} & {v.tobytes() for v in demos.views}
    rewards, dones, _ = env.step(np.zeros(3, dtype=np.int64))
    assert rewards.shape == dones.shape == (3,)
    with pytest.raises(ValueError, match="unknown level 'BabyAI-NoSuchLevel-v0'"):
        make_level("BabyAI-NoSuchLevel-v0")


def test_the_three_standard_levels_need_pickup_and_drop_and_the_bot_solves_them() -> None:
    """GoToLocal, PickupLoc, PutNextLocal: the bot solves every episode with the policy's
    five actions; PickupLoc uses ``pickup``, PutNextLocal ``pickup`` and ``drop``."""
    assert BABYAI_LEVELS == (
        "BabyAI-GoToLocal-v0",
        "BabyAI-PickupLoc-v0",
        "BabyAI-PutNextLocal-v0",
    )
    assert ACTION_NAMES == ("left", "right", "forward", "pickup", "drop")
    used = {}
    for level in BABYAI_LEVELS:
        demos = collect_demos(6, "train", 13, seed=1, levels=(level,))
        assert demos.solved == 6
        used[level] = set(demos.actions.tolist())
    assert ACTION_NAMES.index("pickup") not in used["BabyAI-GoToLocal-v0"]
    assert ACTION_NAMES.index("pickup") in used["BabyAI-PickupLoc-v0"]
    assert {3, 4} <= used["BabyAI-PutNextLocal-v0"]


def test_partial_view_agrees_with_the_full_view_on_every_visible_cell() -> None:
    """minigrid's 7 x 7 partial view, placed in the 13 x 13 frame, equals the independently
    computed full egocentric view on every cell the agent sees (the agent's own cell aside:
    it shows the carried object), and nothing behind the agent is visible."""
    env = make_level("BabyAI-PutNextLocal-v0")
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(15):
        env.reset(seed=seed)
        for _ in range(6):
            part, full = partial_view(env, 13), egocentric_view(env, 13)
            visible = part[..., 0] > 0
            visible[6, 6] = False
            assert np.array_equal(part[visible], full[visible])
            assert not part[7:].any()
            assert not part[:, :3].any()
            assert not part[:, 10:].any()
            seen += int(visible.sum())
            env.step(int(rng.integers(0, 3)))
    assert seen > 15 * 6 * 10
    assert np.array_equal(observe(env, 13), partial_view(env, 13))
    ours = make_env("goto", "train")
    ours.reset(seed=0)
    assert np.array_equal(observe(ours, 13), egocentric_view(ours, 13))
    with pytest.raises(ValueError, match="does not fit"):
        partial_view(env, 11)
