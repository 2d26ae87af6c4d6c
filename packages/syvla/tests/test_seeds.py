"""Separate seed streams: RL and evaluation episodes never start in a demonstration's room
(our custom levels and minigrid's registry levels)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from minigrid.core.constants import OBJECT_TO_IDX

from icml26.syvla import data
from icml26.syvla.config import BABYAI_LEVELS
from icml26.syvla.data import VecEnv, collect_demos
from icml26.syvla.levels import make_level


def _start_states(env: VecEnv, resets: int) -> set[bytes]:
    """(view, mission) of the episode starts of ``resets`` resets of ``env`` (the first one is
    the first episode of every slot, where the seed collision showed)."""
    starts: set[bytes] = set()
    for _ in range(resets):
        env.reset()
        starts |= {env.views[i].tobytes() + env.missions[i].encode() for i in range(env.n)}
    return starts


def test_no_rl_or_evaluation_start_state_equals_a_demonstration_start() -> None:
    demos = collect_demos(40, "train", 13, seed=0)
    assert demos.starts is not None
    assert len(demos.starts) == demos.solved > 30
    demo_starts = {
        demos.views[s].tobytes() + demos.missions[s].encode() for s in demos.starts.tolist()
    }
    assert len(demo_starts) == len(demos.starts)
    for stream in ("rl", "eval"):
        starts = _start_states(VecEnv(8, "train", 13, seed=0, stream=stream), 5)
        assert len(starts) == 40
        assert not starts & demo_starts, stream
    # the check can fail: the same stream replays the same rooms
    a = _start_states(VecEnv(4, "train", 13, seed=0, stream="rl"), 1)
    b = _start_states(VecEnv(4, "train", 13, seed=0, stream="rl"), 1)
    assert a == b


def _full_grid(env: Any, size: int) -> np.ndarray:
    """The whole room at the step (``grid.encode()``, the agent's cell as minigrid's
    ``FullyObsWrapper`` marks it): a registry level's partial view does not identify a room."""
    grid = env.grid.encode()
    grid[env.agent_pos[0], env.agent_pos[1]] = (OBJECT_TO_IDX["agent"], 0, env.agent_dir)
    assert grid.shape == (size, size, 3), grid.shape
    return grid


@pytest.mark.parametrize("level", BABYAI_LEVELS)
def test_registry_level_rl_and_evaluation_rooms_are_not_demonstration_rooms(
    level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = make_level(level).width  # one room: the grid is square
    monkeypatch.setattr(data, "observe", _full_grid)  # what collect_demos records
    demos = collect_demos(12, "train", size, seed=0, levels=(level,))
    assert demos.starts is not None
    assert len(demos.starts) == demos.solved >= 6
    demo_starts = {
        demos.views[s].tobytes() + demos.missions[s].encode() for s in demos.starts.tolist()
    }
    assert len(demo_starts) == len(demos.starts)
    for stream in ("rl", "eval"):
        env = VecEnv(4, "train", size, seed=0, stream=stream, levels=(level,), observer=_full_grid)
        starts = _start_states(env, 3)
        assert len(starts) == 12
        assert not starts & demo_starts, (level, stream)
    # the check can fail: the demonstrations' own stream replays the same rooms
    again = collect_demos(12, "train", size, seed=0, levels=(level,))
    assert again.starts is not None
    assert {again.views[s].tobytes() + again.missions[s].encode() for s in again.starts} == (
        demo_starts
    )
