"""Lowering world programs onto Craftax-Classic (no Craftax compile: that is full-profile work)."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.dicode.craftax_target import CRAFTAX_ACHIEVEMENTS, craftax_available, lower_to_craftax
from icml26.dicode.program import compile_program, target_program

pytestmark = pytest.mark.skipif(not craftax_available(), reason="craftax not installed")


def test_target_lowers_to_plain_craftax_classic() -> None:
    from craftax.craftax_classic.envs.craftax_state import EnvParams

    world = lower_to_craftax(target_program())
    base = EnvParams()
    assert np.all(world["rewards"] == 1.0)
    assert not world["place_valid"].any()
    assert np.all(world["inventory"] == 0)
    assert float(world["env_params"].spawn_zombie_base_chance) == pytest.approx(
        base.spawn_zombie_base_chance
    )
    assert int(world["env_params"].max_timesteps) == target_program().episode_length
    assert CRAFTAX_ACHIEVEMENTS[int(world["goal"])] == "collect_diamond"


def test_program_edits_map_to_craftax_fields() -> None:
    prog = compile_program(
        "WORLD = {'start_inventory': {'stone_pickaxe': 1, 'iron': 2}, 'zombie_spawn': 0.0,"
        " 'rewards': {'collect_iron': 3.0}, 'goal': 'collect_iron'}\n"
        "def build(world):\n    world.place('furnace', 1, 0)\n    world.place('cow', 0, 1)\n"
    )
    world = lower_to_craftax(prog)
    # Craftax's inventory order has sapling after diamond
    assert world["inventory"][3] == 2
    assert world["inventory"][7] == 1
    assert world["inventory"].sum() == 3
    assert world["place_valid"].tolist()[:2] == [True, False]  # cows are mobs in Craftax
    assert world["place_block"][0] == 12
    assert world["rewards"][CRAFTAX_ACHIEVEMENTS.index("collect_iron")] == 3.0
    assert float(world["env_params"].spawn_zombie_base_chance) == 0.0


@pytest.mark.slow
def test_craftax_spec_steps_with_edited_worlds() -> None:
    """Compiles Craftax-Classic (minutes on 2 cores): the lowered edits appear in its state."""
    import jax
    import jax.numpy as jnp

    from icml26.dicode.craftax_target import craftax_env

    spec = craftax_env(reset_ratio=2)
    prog = compile_program(
        "WORLD = {'start_inventory': {'wood': 3}}\ndef build(world):\n    world.place('table', 1, 0)\n"
    )
    world = lower_to_craftax(prog)
    worlds = jax.tree_util.tree_map(lambda x: np.repeat(np.asarray(x)[None], 2, axis=0), world)
    _, state = jax.vmap(spec.reset)(jax.random.split(jax.random.PRNGKey(0), 2), worlds)
    assert np.all(np.asarray(state.inner.inventory.wood) == 3)
    pos = np.asarray(state.inner.player_position)[0]
    assert int(np.asarray(state.inner.map)[0, pos[0] + 1, pos[1]]) == 11  # CRAFTING_TABLE
    obs, state, reward, done, _ = jax.jit(spec.step_batch)(
        jax.random.PRNGKey(1), state, jnp.zeros(2, jnp.int32), worlds
    )
    assert obs.shape == (2, spec.obs_size)
    assert reward.shape == done.shape == (2,)


@pytest.mark.slow
def test_a_craftax_step_that_solves_the_goal_ends_the_episode() -> None:
    """Trees on the four sides of the spawn: one DO collects wood. With the goal collect_wood
    the episode ends (and a fresh one starts); with the goal collect_diamond it goes on."""
    import jax
    import jax.numpy as jnp

    from icml26.dicode.craftax_target import craftax_env

    spec = craftax_env(reset_ratio=2)
    trees = "".join(
        f"    world.place('tree', {x}, {y})\n" for x, y in ((1, 0), (-1, 0), (0, 1), (0, -1))
    )
    lowered = [
        lower_to_craftax(
            compile_program(
                f"WORLD = {{'goal': '{goal}', 'zombie_spawn': 0.0}}\ndef build(world):\n{trees}"
            )
        )
        for goal in ("collect_wood", "collect_diamond")
    ]
    worlds = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *lowered)
    _, state = jax.vmap(spec.reset)(jax.random.split(jax.random.PRNGKey(0), 2), worlds)
    do = jnp.full(2, 5, jnp.int32)  # Craftax's Action.DO
    wood = CRAFTAX_ACHIEVEMENTS.index("collect_wood")
    batched = jax.jit(spec.step_batch)(jax.random.PRNGKey(1), state, do, worlds)
    one_by_one = jax.jit(jax.vmap(spec.step_auto_reset))(
        jax.random.split(jax.random.PRNGKey(1), 2), state, do, worlds
    )
    for _, nxt, reward, done, info in (batched, one_by_one):
        assert np.asarray(done).tolist() == [True, False]
        assert np.asarray(info["goal_success"]).tolist() == [True, False]
        assert np.asarray(info["achievements"])[:, wood].tolist() == [True, True]
        assert np.asarray(reward).tolist() == [1.0, 1.0]
        # the finished episode was replaced by a fresh one; the other goes on
        assert not np.asarray(nxt.inner.achievements)[0].any()
        assert np.asarray(nxt.inner.achievements)[1, wood]
        assert float(np.asarray(nxt.episode_return)[1]) == 1.0
