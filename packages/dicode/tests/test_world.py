"""World invariants: inventory never negative, crafting consumes inputs, achievements unlock once."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.dicode.program import compile_program, target_program
from icml26.dicode.tech import ACHIEVEMENTS, ACTIONS, BLOCKS, ITEMS
from icml26.dicode.world import MAX_SIZE, OBS_SIZE

A = {n: i for i, n in enumerate(ACTIONS)}
B = {n: i for i, n in enumerate(BLOCKS)}
I = {n: i for i, n in enumerate(ITEMS)}  # noqa: E741

CRAFT_WORLD = """
WORLD = {"map_size": 8, "density": {}, "zombie_spawn": 0.0,
         "start_inventory": {"wood": 2, "stone": 1, "coal": 1, "iron": 1}}

def build(world):
    world.place("table", -1, 0)
    world.place("furnace", 1, 0)
    world.place("tree", 0, 1)
"""


def _act(fns: dict[str, Any], state: Any, params: Any, action: str, key: int = 0) -> Any:
    return fns["step"](jax.random.PRNGKey(key), state, jnp.int32(A[action]), params)


def test_reset_shapes_and_walls(world_fns: dict[str, Any]) -> None:
    prog = compile_program('WORLD = {"map_size": 7}')
    obs, state = world_fns["reset"](jax.random.PRNGKey(0), prog.params())
    assert obs.shape == (OBS_SIZE,)
    world_map = np.asarray(state.map)
    assert world_map.shape == (MAX_SIZE, MAX_SIZE)
    assert np.all(world_map[7:, :] == B["wall"])
    assert np.all(world_map[:, 7:] == B["wall"])
    assert np.all(world_map[:7, :7] != B["wall"])
    assert world_map[3, 3] == B["grass"]  # the spawn
    assert tuple(np.asarray(state.pos)) == (3, 3)


def test_crafting_consumes_inputs_and_unlocks_once(world_fns: dict[str, Any]) -> None:
    params = compile_program(CRAFT_WORLD).params()
    _, state = world_fns["reset"](jax.random.PRNGKey(1), params)
    inv0 = np.asarray(state.inventory)
    _, state, reward, _, info = _act(world_fns, state, params, "make_wood_pickaxe")
    inv1 = np.asarray(state.inventory)
    assert inv1[I["wood"]] == inv0[I["wood"]] - 1
    assert inv1[I["wood_pickaxe"]] == 1
    assert float(reward) == 1.0
    assert bool(info["unlocked"][ACHIEVEMENTS.index("make_wood_pickaxe")])
    _, state, reward, _, _ = _act(world_fns, state, params, "make_wood_pickaxe")
    assert np.asarray(state.inventory)[I["wood_pickaxe"]] == 2
    assert float(reward) == 0.0  # the achievement unlocks once per episode
    assert np.asarray(state.inventory)[I["wood"]] == 0
    # no wood left: the recipe fails and nothing changes
    before = np.asarray(state.inventory)
    _, state, _, _, _ = _act(world_fns, state, params, "make_stone_pickaxe")
    np.testing.assert_array_equal(np.asarray(state.inventory), before)


def test_iron_pickaxe_needs_furnace_and_consumes_three_inputs(world_fns: dict[str, Any]) -> None:
    params = compile_program(CRAFT_WORLD).params()
    _, state = world_fns["reset"](jax.random.PRNGKey(2), params)
    _, state, _, _, _ = _act(world_fns, state, params, "make_iron_pickaxe")
    inv = np.asarray(state.inventory)
    assert inv[I["iron_pickaxe"]] == 1
    assert (inv[I["wood"]], inv[I["coal"]], inv[I["iron"]]) == (1, 0, 0)
    # without the furnace nearby, the same recipe fails
    no_furnace = compile_program(CRAFT_WORLD.replace('world.place("furnace", 1, 0)', "pass"))
    _, s2 = world_fns["reset"](jax.random.PRNGKey(2), no_furnace.params())
    _, s2, _, _, _ = _act(world_fns, s2, no_furnace.params(), "make_iron_pickaxe")
    assert np.asarray(s2.inventory)[I["iron_pickaxe"]] == 0


def test_collecting_wood_from_a_tree(world_fns: dict[str, Any]) -> None:
    params = compile_program(CRAFT_WORLD).params()
    _, state = world_fns["reset"](jax.random.PRNGKey(3), params)  # facing down, tree below
    _, state, reward, _, _ = _act(world_fns, state, params, "do")
    assert np.asarray(state.inventory)[I["wood"]] == 3
    assert float(reward) == 1.0


@settings(max_examples=8, deadline=None)
@given(
    actions=st.lists(st.integers(0, len(ACTIONS) - 1), min_size=30, max_size=30),
    seed=st.integers(0, 2**16),
)
def test_random_play_keeps_invariants(
    world_fns: dict[str, Any], actions: list[int], seed: int
) -> None:
    params = target_program().params()
    _, state = world_fns["reset"](jax.random.PRNGKey(seed), params)
    total = 0.0
    for t, a in enumerate(actions):
        prev_ach = np.asarray(state.achievements)
        _, state, reward, done, info = world_fns["step"](
            jax.random.PRNGKey(seed * 100 + t), state, jnp.int32(a), params
        )
        inv = np.asarray(state.inventory)
        assert np.all(inv >= 0)
        assert np.all(inv <= 9)
        ach = np.asarray(state.achievements)
        assert np.all(ach >= prev_ach)  # achievements never un-unlock
        unlocked = np.asarray(info["unlocked"])
        assert not np.any(unlocked & prev_ach)  # and unlock at most once
        assert float(reward) == float(unlocked.sum())  # the target's unit rewards
        total += float(reward)
        vit = np.asarray(state.vitals)
        assert np.all(vit[1:] >= 0)
        assert np.all(vit <= 9)
        if bool(done):
            break
    assert total == float(np.asarray(state.achievements).sum())
    assert float(state.episode_return) == total
