"""The JAX crafting world: functional, jittable and vmappable (gymnax style).

Every world of the curriculum is the same jitted code fed a different :class:`WorldParams`
pytree of fixed shapes (map size, resource densities, starting inventory, zombie spawn rate
and damage, day length, episode length, achievement rewards, the goal, and up to
:data:`MAX_PLACEMENTS` explicit block placements from a program's ``build`` function), so a
newly dreamed world never triggers a recompile.

The dynamics follow Crafter / Craftax-Classic in miniature: a ``MAX_SIZE x MAX_SIZE`` grid
(cells beyond ``map_size`` are bedrock), an agent with a facing direction, an inventory, four
vitals (health, food, drink, energy), a day/night cycle, up to :data:`MAX_ZOMBIES` zombies that
chase and hit the agent, and the tech tree of :mod:`icml26.dicode.tech`. The reward of a step is
``Σ_a rewards[a] · [a unlocked this step]``; every achievement unlocks at most once an episode.
An episode ends on death, on timeout, or when the world's goal achievement is unlocked (the
task solved), as in the official DiCode code, so success rates come from finished tasks.

The observation is symbolic: a one-hot ``(2R+1) x (2R+1)`` local view of blocks plus a zombie
channel, the inventory, the vitals, the facing direction, sleeping and daylight.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from icml26.dicode.tech import ACHIEVEMENTS, ACTIONS, BLOCKS, ITEMS, RESOURCES

__all__ = [
    "MAX_PLACEMENTS",
    "MAX_SIZE",
    "MAX_ZOMBIES",
    "N_ACTIONS",
    "OBS_SIZE",
    "VIEW_RADIUS",
    "EnvState",
    "WorldParams",
    "generate_map",
    "observe",
    "reset",
    "stack_params",
    "step",
    "step_auto_reset",
]

MAX_SIZE = 16
VIEW_RADIUS = 3
MAX_ZOMBIES = 3
MAX_PLACEMENTS = 8
MAX_COUNT = 9
VITAL_MAX = 9.0
ZOMBIE_HEALTH = 5.0
ZOMBIE_COOLDOWN = 5

N_BLOCKS = len(BLOCKS)
N_ITEMS = len(ITEMS)
N_ACH = len(ACHIEVEMENTS)
N_ACTIONS = len(ACTIONS)
_VIEW = 2 * VIEW_RADIUS + 1
OBS_SIZE = _VIEW * _VIEW * (N_BLOCKS + 1) + N_ITEMS + 4 + 4 + 2

_B = {name: i for i, name in enumerate(BLOCKS)}
_I = {name: i for i, name in enumerate(ITEMS)}
_A = {name: i for i, name in enumerate(ACHIEVEMENTS)}
_ACT = {name: i for i, name in enumerate(ACTIONS)}
_RESOURCE_BLOCKS = jnp.asarray([_B[r] for r in RESOURCES], dtype=jnp.int32)
# left, right, up, down as (dx, dy); index = facing
_DIRS = jnp.asarray([[-1, 0], [1, 0], [0, -1], [0, 1]], dtype=jnp.int32)


@struct.dataclass
class WorldParams:
    """One world, lowered from a program to fixed-shape arrays (see :mod:`icml26.dicode.program`).

    Attributes:
        map_size: side of the playable square, ``6..MAX_SIZE``.
        density: generation probability per cell of each of :data:`~icml26.dicode.tech.RESOURCES`.
        start_inventory: item counts at reset.
        zombie_spawn: spawn probability per step (by day; x3 at night).
        zombie_damage: health lost per zombie hit (x2 while asleep).
        day_length: steps of one day/night cycle (night = last 30%).
        episode_length: steps before the episode ends.
        rewards: reward of unlocking each achievement.
        goal: index of the achievement that defines success on this world.
        place_block, place_dx, place_dy, place_valid: the ``build`` function's placements,
            offsets from the spawn point.
    """

    map_size: jax.Array
    density: jax.Array
    start_inventory: jax.Array
    zombie_spawn: jax.Array
    zombie_damage: jax.Array
    day_length: jax.Array
    episode_length: jax.Array
    rewards: jax.Array
    goal: jax.Array
    place_block: jax.Array
    place_dx: jax.Array
    place_dy: jax.Array
    place_valid: jax.Array


@struct.dataclass
class EnvState:
    """The state of one episode."""

    map: jax.Array  # (MAX_SIZE, MAX_SIZE) int32 block ids, indexed [x, y]
    pos: jax.Array  # (2,) int32
    facing: jax.Array  # () int32, index into _DIRS
    inventory: jax.Array  # (N_ITEMS,) int32
    vitals: jax.Array  # (4,) float32: health, food, drink, energy
    sleeping: jax.Array  # () bool
    achievements: jax.Array  # (N_ACH,) bool
    zombie_pos: jax.Array  # (MAX_ZOMBIES, 2) int32
    zombie_alive: jax.Array  # (MAX_ZOMBIES,) bool
    zombie_health: jax.Array  # (MAX_ZOMBIES,) float32
    zombie_cooldown: jax.Array  # (MAX_ZOMBIES,) int32
    t: jax.Array  # () int32
    episode_return: jax.Array  # () float32


def stack_params(params: list[WorldParams]) -> WorldParams:
    """A batch of worlds (leading axis) for ``vmap``."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *params)


def generate_map(key: jax.Array, params: WorldParams) -> tuple[jax.Array, jax.Array]:
    """The world generator: ``(map, spawn)`` for one world (jittable, one compile for all worlds).

    Each cell of the playable square draws one uniform number and takes the first resource
    whose cumulative density exceeds it (grass otherwise); the spawn cell is grass; then the
    program's placements are written at their offsets from the spawn (clipped to the square).
    """
    size = params.map_size
    u = jax.random.uniform(key, (MAX_SIZE, MAX_SIZE))
    cum = jnp.cumsum(params.density)
    first = jnp.sum(u[..., None] >= cum, axis=-1)  # index of the first bin containing u
    block = jnp.where(
        first < len(RESOURCES),
        _RESOURCE_BLOCKS[jnp.minimum(first, len(RESOURCES) - 1)],
        _B["grass"],
    )
    xs = jnp.arange(MAX_SIZE)
    inside = (xs[:, None] < size) & (xs[None, :] < size)
    block = jnp.where(inside, block, _B["wall"])
    spawn = jnp.stack([size // 2, size // 2]).astype(jnp.int32)
    px = jnp.clip(spawn[0] + params.place_dx, 0, size - 1)
    py = jnp.clip(spawn[1] + params.place_dy, 0, size - 1)
    on_spawn = (px == spawn[0]) & (py == spawn[1])
    keep = params.place_valid & ~on_spawn
    # invalid placements write the cell's current value back (a no-op)
    current = block[px, py]
    block = block.at[px, py].set(jnp.where(keep, params.place_block, current))
    block = block.at[spawn[0], spawn[1]].set(_B["grass"])
    return block.astype(jnp.int32), spawn


def reset(key: jax.Array, params: WorldParams) -> tuple[jax.Array, EnvState]:
    """A fresh episode of ``params``: ``(observation, state)``."""
    world_map, spawn = generate_map(key, params)
    state = EnvState(
        map=world_map,
        pos=spawn,
        facing=jnp.int32(3),
        inventory=jnp.clip(params.start_inventory, 0, MAX_COUNT).astype(jnp.int32),
        vitals=jnp.full((4,), VITAL_MAX, dtype=jnp.float32),
        sleeping=jnp.bool_(False),
        achievements=jnp.zeros((N_ACH,), dtype=bool),
        zombie_pos=jnp.zeros((MAX_ZOMBIES, 2), dtype=jnp.int32),
        zombie_alive=jnp.zeros((MAX_ZOMBIES,), dtype=bool),
        zombie_health=jnp.zeros((MAX_ZOMBIES,), dtype=jnp.float32),
        zombie_cooldown=jnp.zeros((MAX_ZOMBIES,), dtype=jnp.int32),
        t=jnp.int32(0),
        episode_return=jnp.float32(0.0),
    )
    return observe(state, params), state


def _is_night(t: jax.Array, params: WorldParams) -> jax.Array:
    phase = jnp.mod(t, params.day_length).astype(jnp.float32) / params.day_length
    return phase > 0.7


def observe(state: EnvState, params: WorldParams) -> jax.Array:
    """The flat symbolic observation (length :data:`OBS_SIZE`)."""
    r = VIEW_RADIUS
    padded = jnp.pad(state.map, r, constant_values=_B["wall"])
    view = jax.lax.dynamic_slice(padded, (state.pos[0], state.pos[1]), (_VIEW, _VIEW))
    blocks = jax.nn.one_hot(view, N_BLOCKS, dtype=jnp.float32)
    rel = state.zombie_pos - state.pos[None, :] + r  # (Z, 2)
    grid = jnp.arange(_VIEW)
    zombies = jnp.sum(
        (grid[None, :, None] == rel[:, 0, None, None])
        & (grid[None, None, :] == rel[:, 1, None, None])
        & state.zombie_alive[:, None, None],
        axis=0,
    ).astype(jnp.float32)
    local = jnp.concatenate([blocks, zombies[..., None]], axis=-1).reshape(-1)
    night = _is_night(state.t, params).astype(jnp.float32)
    extra = jnp.concatenate(
        [
            state.inventory.astype(jnp.float32) / MAX_COUNT,
            state.vitals / VITAL_MAX,
            jax.nn.one_hot(state.facing, 4, dtype=jnp.float32),
            jnp.stack([state.sleeping.astype(jnp.float32), 1.0 - night]),
        ]
    )
    return jnp.concatenate([local, extra])


def _nearby(world_map: jax.Array, pos: jax.Array, block: int) -> jax.Array:
    """Whether ``block`` is in the 3x3 square around ``pos``."""
    padded = jnp.pad(world_map, 1, constant_values=_B["wall"])
    area = jax.lax.dynamic_slice(padded, (pos[0], pos[1]), (3, 3))
    return jnp.any(area == block)


def _in_map(p: jax.Array) -> jax.Array:
    return jnp.all((p >= 0) & (p < MAX_SIZE))


def step(
    key: jax.Array, state: EnvState, action: jax.Array, params: WorldParams
) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[str, jax.Array]]:
    """One environment step: ``(obs, state, reward, done, info)`` (no reset; see
    :func:`step_auto_reset`). ``info["unlocked"]`` flags the achievements unlocked this step."""
    k_spawn_p, k_spawn_x, k_move, k_rand = jax.random.split(key, 4)
    inv = state.inventory
    vit = state.vitals
    world_map = state.map
    sleeping = state.sleeping
    action = jnp.where(sleeping, _ACT["noop"], action)
    unlock = jnp.zeros((N_ACH,), dtype=bool)

    # --- movement: left/right/up/down turn the agent and move it onto free grass
    is_move = (action >= _ACT["left"]) & (action <= _ACT["down"])
    facing = jnp.where(is_move, action - _ACT["left"], state.facing)
    ahead = state.pos + _DIRS[facing]
    ahead_c = jnp.clip(ahead, 0, MAX_SIZE - 1)
    ahead_ok = _in_map(ahead)
    ahead_block = jnp.where(ahead_ok, world_map[ahead_c[0], ahead_c[1]], _B["wall"])
    zombie_here = state.zombie_alive & jnp.all(state.zombie_pos == ahead_c[None, :], axis=-1)
    zombie_ahead = jnp.any(zombie_here) & ahead_ok
    can_walk = ahead_ok & (ahead_block == _B["grass"]) & ~zombie_ahead
    pos = jnp.where(is_move & can_walk, ahead_c, state.pos)

    # --- "do": collect, drink, eat, or hit a zombie in front
    do = action == _ACT["do"]
    hit = do & zombie_ahead
    damage = jnp.maximum(
        1.0,
        jnp.maximum(
            2.0 * (inv[_I["wood_sword"]] > 0),
            jnp.maximum(3.0 * (inv[_I["stone_sword"]] > 0), 5.0 * (inv[_I["iron_sword"]] > 0)),
        ),
    )
    z_health = state.zombie_health - jnp.where(hit & zombie_here, damage, 0.0)
    killed = state.zombie_alive & (z_health <= 0)
    z_alive = state.zombie_alive & ~killed
    unlock = unlock.at[_A["defeat_zombie"]].set(jnp.any(killed))

    act_on = do & ~zombie_ahead & ahead_ok
    b = ahead_block
    has = {n: inv[_I[n]] > 0 for n in ITEMS}
    got_wood = act_on & (b == _B["tree"])
    got_stone = act_on & (b == _B["stone"]) & has["wood_pickaxe"]
    got_coal = act_on & (b == _B["coal"]) & has["wood_pickaxe"]
    got_iron = act_on & (b == _B["iron"]) & has["stone_pickaxe"]
    got_diamond = act_on & (b == _B["diamond"]) & has["iron_pickaxe"]
    drank = act_on & (b == _B["water"])
    ate = act_on & (b == _B["cow"])
    mined = got_stone | got_coal | got_iron | got_diamond | ate
    world_map = world_map.at[ahead_c[0], ahead_c[1]].set(
        jnp.where(mined, _B["grass"], world_map[ahead_c[0], ahead_c[1]])
    )
    gains = jnp.zeros((N_ITEMS,), dtype=jnp.int32)
    for name, flag in (
        ("wood", got_wood),
        ("stone", got_stone),
        ("coal", got_coal),
        ("iron", got_iron),
        ("diamond", got_diamond),
    ):
        gains = gains.at[_I[name]].add(flag.astype(jnp.int32))
        unlock = unlock.at[_A[f"collect_{name}"]].set(flag)
    unlock = unlock.at[_A["collect_drink"]].set(drank)
    unlock = unlock.at[_A["eat_cow"]].set(ate)
    vit = vit.at[2].add(jnp.where(drank, 1.0, 0.0))
    vit = vit.at[1].add(jnp.where(ate, 6.0, 0.0))

    # --- placing: on free grass in front (stone also on water)
    free_ahead = ahead_ok & ~zombie_ahead & ((b == _B["grass"]) | (b == _B["water"]))
    grass_ahead = free_ahead & (b == _B["grass"])
    near_table = _nearby(state.map, state.pos, _B["table"])
    near_furnace = _nearby(state.map, state.pos, _B["furnace"])
    put_table = (action == _ACT["place_table"]) & grass_ahead & has["wood"]
    put_stone = (action == _ACT["place_stone"]) & free_ahead & has["stone"]
    put_furnace = (action == _ACT["place_furnace"]) & grass_ahead & has["stone"] & near_table
    placed = jnp.select(
        [put_table, put_stone, put_furnace],
        [jnp.int32(_B["table"]), jnp.int32(_B["stone"]), jnp.int32(_B["furnace"])],
        world_map[ahead_c[0], ahead_c[1]],
    )
    world_map = world_map.at[ahead_c[0], ahead_c[1]].set(placed)
    costs = jnp.zeros((N_ITEMS,), dtype=jnp.int32)
    costs = costs.at[_I["wood"]].add(put_table.astype(jnp.int32))
    costs = costs.at[_I["stone"]].add((put_stone | put_furnace).astype(jnp.int32))
    unlock = unlock.at[_A["place_table"]].set(put_table)
    unlock = unlock.at[_A["place_stone"]].set(put_stone)
    unlock = unlock.at[_A["place_furnace"]].set(put_furnace)

    # --- crafting near a table (iron tools also need a furnace); consumes the inputs
    recipes = (
        ("wood_pickaxe", ("wood",), False),
        ("stone_pickaxe", ("wood", "stone"), False),
        ("iron_pickaxe", ("wood", "coal", "iron"), True),
        ("wood_sword", ("wood",), False),
        ("stone_sword", ("wood", "stone"), False),
        ("iron_sword", ("wood", "coal", "iron"), True),
    )
    for tool, inputs, furnace in recipes:
        ok = (action == _ACT[f"make_{tool}"]) & near_table
        if furnace:
            ok = ok & near_furnace
        for item in inputs:
            ok = ok & has[item]
        for item in inputs:
            costs = costs.at[_I[item]].add(ok.astype(jnp.int32))
        gains = gains.at[_I[tool]].add(ok.astype(jnp.int32))
        unlock = unlock.at[_A[f"make_{tool}"]].set(ok)
    inv = jnp.clip(inv - costs + gains, 0, MAX_COUNT)

    # --- sleep, vitals and health
    start_sleep = action == _ACT["sleep"]
    sleeping = sleeping | start_sleep
    vit = vit.at[1].add(-1.0 / 30.0)
    vit = vit.at[2].add(-1.0 / 20.0)
    vit = vit.at[3].add(jnp.where(sleeping, 0.25, -1.0 / 40.0))
    vit = vit.at[1:].set(jnp.clip(vit[1:], 0.0, VITAL_MAX))
    woke = sleeping & (vit[3] >= VITAL_MAX)
    unlock = unlock.at[_A["wake_up"]].set(woke)
    sleeping = sleeping & ~woke
    fine = (vit[1] > 0) & (vit[2] > 0) & (vit[3] > 0)
    vit = vit.at[0].add(jnp.where(fine, 0.1, -0.2))

    # --- zombies: spawn (more at night), chase, hit with a cooldown
    night = _is_night(state.t, params)
    rate = params.zombie_spawn * jnp.where(night, 3.0, 1.0)
    cell = jax.random.randint(k_spawn_x, (2,), 0, params.map_size)
    far = jnp.sum(jnp.abs(cell - pos)) >= 3
    free_slot = ~z_alive
    slot = jnp.argmax(free_slot)
    spawn = (
        (jax.random.uniform(k_spawn_p) < rate)
        & jnp.any(free_slot)
        & (world_map[cell[0], cell[1]] == _B["grass"])
        & far
    )
    spawn_mask = (jnp.arange(MAX_ZOMBIES) == slot) & spawn
    z_pos = jnp.where(spawn_mask[:, None], cell[None, :], state.zombie_pos)
    z_alive = z_alive | spawn_mask
    z_health = jnp.where(spawn_mask, ZOMBIE_HEALTH, z_health)
    z_cd = jnp.where(spawn_mask, ZOMBIE_COOLDOWN, jnp.maximum(state.zombie_cooldown - 1, 0))

    delta = pos[None, :] - z_pos
    along_x = jnp.abs(delta[:, 0]) >= jnp.abs(delta[:, 1])
    chase = jnp.where(
        along_x[:, None],
        jnp.stack([jnp.sign(delta[:, 0]), jnp.zeros_like(delta[:, 0])], axis=-1),
        jnp.stack([jnp.zeros_like(delta[:, 1]), jnp.sign(delta[:, 1])], axis=-1),
    )
    wander = _DIRS[jax.random.randint(k_rand, (MAX_ZOMBIES,), 0, 4)]
    move = jnp.where(jax.random.uniform(k_move, (MAX_ZOMBIES, 1)) < 0.7, chase, wander)
    target = jnp.clip(z_pos + move, 0, MAX_SIZE - 1)
    walkable = (world_map[target[:, 0], target[:, 1]] == _B["grass"]) & ~jnp.all(
        target == pos[None, :], axis=-1
    )
    z_pos = jnp.where((walkable & z_alive)[:, None], target, z_pos)
    adjacent = z_alive & (jnp.sum(jnp.abs(z_pos - pos[None, :]), axis=-1) == 1)
    attack = adjacent & (z_cd == 0)
    hurt = jnp.sum(attack) * params.zombie_damage * jnp.where(sleeping, 2.0, 1.0)
    vit = vit.at[0].add(-hurt)
    sleeping = sleeping & ~(hurt > 0)
    z_cd = jnp.where(attack, ZOMBIE_COOLDOWN, z_cd)
    vit = vit.at[0].set(jnp.minimum(vit[0], VITAL_MAX))

    new = unlock & ~state.achievements
    achievements = state.achievements | new
    reward = jnp.sum(params.rewards * new.astype(jnp.float32))
    t = state.t + 1
    # the episode ends on death, on timeout, or when the world's task (its goal) is solved
    done = (vit[0] <= 0) | (t >= params.episode_length) | achievements[params.goal]
    state = EnvState(
        map=world_map,
        pos=pos,
        facing=facing,
        inventory=inv,
        vitals=vit,
        sleeping=sleeping,
        achievements=achievements,
        zombie_pos=z_pos,
        zombie_alive=z_alive,
        zombie_health=z_health,
        zombie_cooldown=z_cd,
        t=t,
        episode_return=state.episode_return + reward,
    )
    info = {"unlocked": new}
    return observe(state, params), state, reward, done, info


def step_auto_reset(
    key: jax.Array, state: EnvState, action: jax.Array, params: WorldParams
) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[str, Any]]:
    """:func:`step`, then a fresh episode where it ended. ``info`` carries the finished
    episode's ``achievements`` and ``return`` (read them where ``done``)."""
    k_step, k_reset = jax.random.split(key)
    obs, next_state, reward, done, info = step(k_step, state, action, params)
    obs_r, state_r = reset(k_reset, params)
    info = {
        **info,
        "achievements": next_state.achievements,
        "return": next_state.episode_return,
        "goal_success": next_state.achievements[params.goal],
    }
    state_out = jax.tree_util.tree_map(lambda r, s: jnp.where(done, r, s), state_r, next_state)
    return jnp.where(done, obs_r, obs), state_out, reward, done, info
