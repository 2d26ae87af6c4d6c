"""The real Craftax-Classic (``craftax`` on PyPI) as the full profile's target.

Craftax-Classic's ``EnvParams`` has no resource densities, starting inventory or reward
settings, so a world program is lowered onto it in three parts (:func:`lower_to_craftax`):

* ``EnvParams``: ``max_timesteps`` = the program's ``episode_length``, ``day_length``, and the
  zombie spawn chances scaled by ``zombie_spawn`` relative to the target program's;
* a post-reset edit of Craftax's own generated state: the starting inventory and the
  ``build`` placements (written next to the player; ``cow`` placements are dropped, Craftax
  cows are mobs);
* the reward: ``Σ_a rewards[a] · [a unlocked]`` over Craftax's 22 achievements (the four that
  our world lacks, sapling/plant/skeleton, keep reward 1).

Map size and densities are *not* lowered (Craftax generates its 64x64 map with fractal noise).
This is *not* standard Craftax-Classic, so its returns are not comparable with published ones:
the target program caps episodes at its 400 steps (Craftax: ``max_timesteps`` 10,000), and the
reward drops Craftax's ``0.1 * Δhealth`` term, so ``return`` on the target is the number of
achievements unlocked in a 400-step episode. Compiles take minutes on
2 cores: JAX's persistent compilation cache is used and nothing here runs in the default tests.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from icml26.dicode.ppo import PPO, EnvSpec
from icml26.dicode.program import MAX_PLACEMENTS, WorldProgram, target_program
from icml26.dicode.summary import archive_figures, paired_return_gains
from icml26.dicode.tech import ACHIEVEMENTS, ITEMS
from icml26.dicode.training import Evaluator, make_dreamer, ppo_settings, train_units
from icml26.shared import RunDir, log
from icml26.shared.stats import mean_se

__all__ = [
    "CRAFTAX_METHODS",
    "craftax_available",
    "craftax_bench",
    "craftax_env",
    "craftax_metrics",
    "craftax_stage",
    "lower_to_craftax",
]

CRAFTAX_ACHIEVEMENTS = (
    "collect_wood",
    "place_table",
    "eat_cow",
    "collect_sapling",
    "collect_drink",
    "make_wood_pickaxe",
    "make_wood_sword",
    "place_plant",
    "defeat_zombie",
    "collect_stone",
    "place_stone",
    "eat_plant",
    "defeat_skeleton",
    "make_stone_pickaxe",
    "make_stone_sword",
    "wake_up",
    "place_furnace",
    "collect_coal",
    "collect_iron",
    "collect_diamond",
    "make_iron_pickaxe",
    "make_iron_sword",
)
#: The methods trained on Craftax-Classic (the other baselines run only in our world).
CRAFTAX_METHODS = ("ppo_target", "dicode")
_BLOCKS = {  # our block -> Craftax-Classic BlockType value
    "grass": 2,
    "water": 3,
    "stone": 4,
    "tree": 5,
    "coal": 8,
    "iron": 9,
    "diamond": 10,
    "table": 11,
    "furnace": 12,
}


def craftax_available() -> bool:
    try:
        import craftax.craftax_classic.envs.craftax_symbolic_env  # noqa: F401
    except ImportError:
        return False
    return True


def _require() -> None:
    if not craftax_available():
        raise ImportError(
            "Craftax-Classic needs the craftax package: pip install 'icml26-dicode[craftax]'"
        )


def lower_to_craftax(program: WorldProgram) -> Any:
    """The program as a Craftax pytree ``{"env_params", "inventory", "place_*", "rewards",
    "goal"}`` of NumPy leaves (fixed shapes: one compile for every world)."""
    _require()
    from craftax.craftax_classic.envs.craftax_state import EnvParams

    base = EnvParams()
    target = target_program()
    scale = program.zombie_spawn / max(target.zombie_spawn, 1e-9)
    env_params = base.replace(
        max_timesteps=np.int32(program.episode_length),
        day_length=np.int32(program.day_length),
        always_diamond=np.bool_(base.always_diamond),
        zombie_health=np.int32(base.zombie_health),
        cow_health=np.int32(base.cow_health),
        skeleton_health=np.int32(base.skeleton_health),
        mob_despawn_distance=np.int32(base.mob_despawn_distance),
        spawn_cow_chance=np.float32(base.spawn_cow_chance),
        spawn_zombie_base_chance=np.float32(base.spawn_zombie_base_chance * scale),
        spawn_zombie_night_chance=np.float32(base.spawn_zombie_night_chance * scale),
        spawn_skeleton_chance=np.float32(base.spawn_skeleton_chance),
    )
    inventory = np.zeros(12, np.int32)  # Craftax order: ITEMS with sapling after diamond
    names = (*ITEMS[:5], "sapling", *ITEMS[5:])
    for item, count in zip(ITEMS, program.start_inventory, strict=True):
        inventory[names.index(item)] = count
    block = np.zeros(MAX_PLACEMENTS, np.int32)
    dx = np.zeros(MAX_PLACEMENTS, np.int32)
    dy = np.zeros(MAX_PLACEMENTS, np.int32)
    valid = np.zeros(MAX_PLACEMENTS, bool)
    for j, (b, x, y) in enumerate(program.placements):
        if b in _BLOCKS:
            block[j], dx[j], dy[j], valid[j] = _BLOCKS[b], x, y, True
    ours = dict(zip(ACHIEVEMENTS, program.rewards, strict=True))
    rewards = np.asarray([ours.get(a, 1.0) for a in CRAFTAX_ACHIEVEMENTS], np.float32)
    return {
        "env_params": env_params,
        "inventory": inventory,
        "place_block": block,
        "place_dx": dx,
        "place_dy": dy,
        "place_valid": valid,
        "rewards": rewards,
        "goal": np.int32(CRAFTAX_ACHIEVEMENTS.index(program.goal)),
    }


def craftax_env(reset_ratio: int = 16) -> Any:
    """An :class:`~icml26.dicode.ppo.EnvSpec` over Craftax-Classic-Symbolic with lowered worlds
    (``n_envs / reset_ratio`` fresh worlds generated per batched step: optimistic resets)."""
    _require()
    from craftax.craftax_classic.envs.craftax_state import Inventory
    from craftax.craftax_classic.envs.craftax_symbolic_env import (
        CraftaxClassicSymbolicEnvNoAutoReset,
    )

    env = CraftaxClassicSymbolicEnvNoAutoReset()
    obs_size = int(env.observation_space(env.default_params).shape[0])
    names = (*ITEMS[:5], "sapling", *ITEMS[5:])

    @struct.dataclass
    class State:
        inner: Any
        episode_return: jax.Array

    def edit(st: Any, world: dict[str, Any]) -> tuple[jax.Array, State]:
        """The program's post-reset edits of a generated Craftax state."""
        inv = Inventory(**{n: world["inventory"][i] for i, n in enumerate(names)})
        size = st.map.shape[0]
        px = jnp.clip(st.player_position[0] + world["place_dx"], 0, size - 1)
        py = jnp.clip(st.player_position[1] + world["place_dy"], 0, size - 1)
        keep = world["place_valid"] & ~(
            (px == st.player_position[0]) & (py == st.player_position[1])
        )
        new_map = st.map.at[px, py].set(jnp.where(keep, world["place_block"], st.map[px, py]))
        st = st.replace(inventory=inv, map=new_map)
        return env.get_obs(st), State(st, jnp.float32(0.0))

    def reset(key: jax.Array, world: dict[str, Any]) -> tuple[jax.Array, State]:
        _, st = env.reset_env(key, world["env_params"])
        return edit(st, world)

    def step(key: jax.Array, s: State, action: jax.Array, world: dict[str, Any]) -> Any:
        obs, st, _, done, _ = env.step_env(key, s.inner, action, world["env_params"])
        new = st.achievements & ~s.inner.achievements
        reward = jnp.sum(world["rewards"] * new.astype(jnp.float32))
        done = done | st.achievements[world["goal"]]  # the task solved ends the episode
        return obs, State(st, s.episode_return + reward), reward, done, {"unlocked": new}

    def finish(
        done: jax.Array, fresh: tuple[jax.Array, State], stepped: Any, goal_success: jax.Array
    ) -> Any:
        """Where ``done``: the fresh episode's obs and state, and ``info`` with the finished
        episode's achievements, return and goal success (one env or a batch)."""
        obs, nxt, reward, done, info = stepped
        info = {
            **info,
            "achievements": nxt.inner.achievements,
            "return": nxt.episode_return,
            "goal_success": goal_success,
        }

        def choose(r: jax.Array, x: jax.Array) -> jax.Array:
            return jnp.where(done.reshape(done.shape + (1,) * (x.ndim - done.ndim)), r, x)

        obs_r, state_r = fresh
        return choose(obs_r, obs), jax.tree_util.tree_map(choose, state_r, nxt), reward, done, info

    def step_auto_reset(key: jax.Array, s: State, action: jax.Array, world: dict[str, Any]) -> Any:
        k_step, k_reset = jax.random.split(key)
        stepped = step(k_step, s, action, world)
        goal = stepped[1].inner.achievements[world["goal"]]
        return finish(stepped[3], reset(k_reset, world), stepped, goal)

    generation_params = env.default_params  # generation reads no field a program changes

    def batch_step_auto_reset(key: jax.Array, s: State, action: jax.Array, worlds: Any) -> Any:
        """Optimistic resets: ``n / reset_ratio`` worlds are generated per step and shared by
        the environments that finished (then edited per program), instead of one per env."""
        n = action.shape[0]
        k = max(1, n // reset_ratio)
        k_step, k_reset, k_pick = jax.random.split(key, 3)
        stepped = jax.vmap(step)(jax.random.split(k_step, n), s, action, worlds)
        base = jax.vmap(lambda kk: env.reset_env(kk, generation_params)[1])(
            jax.random.split(k_reset, k)
        )
        pick = jax.random.randint(k_pick, (n,), 0, k)
        fresh = jax.vmap(edit)(jax.tree_util.tree_map(lambda x: x[pick], base), worlds)
        achieved = stepped[1].inner.achievements
        goal = jnp.take_along_axis(achieved, worlds["goal"][:, None], axis=1)[:, 0]
        return finish(stepped[3], fresh, stepped, goal)

    return EnvSpec(
        name="craftax_classic",
        obs_size=obs_size,
        n_actions=int(env.num_actions),
        achievement_names=CRAFTAX_ACHIEVEMENTS,
        reset=reset,
        step=step,
        step_auto_reset=step_auto_reset,
        episode_return=lambda s: s.episode_return,
        achievements=lambda s: s.inner.achievements,
        batch_step_auto_reset=batch_step_auto_reset,
    )


def craftax_bench(config: Any) -> dict[str, float]:
    """Compile time and vmapped random-action steps per second of Craftax-Classic."""
    spec = craftax_env()
    world = lower_to_craftax(target_program())
    n = config.craftax_batch
    worlds = jax.tree_util.tree_map(lambda x: np.repeat(np.asarray(x)[None], n, axis=0), world)

    @jax.jit
    def rollout(key: jax.Array) -> Any:
        k0, k1 = jax.random.split(key)
        _, state = jax.vmap(spec.reset)(jax.random.split(k0, n), worlds)

        def body(s: Any, k: jax.Array) -> Any:
            ka, ke = jax.random.split(k)
            a = jax.random.randint(ka, (n,), 0, spec.n_actions)
            _, s, r, _, _ = spec.step_batch(ke, s, a, worlds)
            return s, r.sum()

        return jax.lax.scan(body, state, jax.random.split(k1, config.craftax_steps))[1]

    start = time.perf_counter()
    jax.block_until_ready(rollout(jax.random.PRNGKey(0)))
    compile_s = time.perf_counter() - start
    best = float("inf")
    for i in range(config.repeats):
        start = time.perf_counter()
        jax.block_until_ready(rollout(jax.random.PRNGKey(i + 1)))
        best = min(best, time.perf_counter() - start)
    log(
        f"bench: Craftax-Classic {n * config.craftax_steps / best:.0f} steps/s (compile {compile_s:.0f}s)"
    )
    return {
        "compile_seconds.craftax_classic": compile_s,
        "env_steps_per_second.craftax_classic": n * config.craftax_steps / best,
    }


def craftax_stage(config: Any, run_dir: RunDir) -> dict[str, Any]:
    """``ppo_target`` and ``dicode`` (``craftax_seeds`` seeds, ``craftax_steps`` steps each) on
    Craftax-Classic; returns ``craftax.return.<method>`` (mean over seeds) with ``.se``, and
    the paired gains ``craftax.return_gain.<method>.over.ppo_target`` with ``.se`` (seed
    ``k`` of both methods shares the PPO initialisation key and the evaluation key, so the
    same held-out maps: :func:`~icml26.dicode.training.train_unit`).

    The curriculum is the same DiCode loop; its programs are lowered onto Craftax.
    """
    if not craftax_available():
        raise ImportError(
            "craftax=true needs Craftax-Classic: pip install 'icml26-dicode[craftax]'"
        )
    spec = craftax_env()
    cfg = _craftax_config(config)
    ppo = PPO(ppo_settings(cfg), env=spec)
    evaluator = Evaluator(ppo, cfg.eval_episodes, lower=lower_to_craftax)
    units = train_units(
        CRAFTAX_METHODS,
        config.craftax_seeds,
        cfg,
        run_dir,
        ppo,
        evaluator,
        make_dreamer(cfg),
        prefix="craftax.",
        log_rounds=False,
        probe_progress=False,  # Craftax episodes are costly: the probe runs only in our world
    )
    return craftax_metrics(units, cfg)


def craftax_metrics(units: dict[str, list[dict[str, Any]]], config: Any) -> dict[str, Any]:
    """The ``craftax.*`` keys from the Craftax units (see :func:`craftax_stage`).

    Args:
        units: per method, one unit dict per seed (``seed`` and held-out ``returns``).
        config: the Craftax units' config (the step budget).

    Returns:
        ``craftax.return.<method>`` (``.se``), achievement success rates, steps per second,
        the paired gains ``craftax.return_gain.<method>.over.ppo_target`` (``.se``), and for
        DiCode its archive (:func:`~icml26.dicode.summary.archive_figures`):
        ``craftax.frontier_fraction.dicode``, ``craftax.archive_size.dicode``,
        ``craftax.archive_evaluated.dicode``, ``craftax.goal_concentration.dicode`` (each with
        ``.se``), ``craftax.program_valid_rate.dicode`` and
        ``craftax.program_duplicate_rate.dicode`` (children that lower to their parent's
        Craftax world: most mutation operators edit what Craftax cannot express).
    """
    metrics: dict[str, Any] = {}
    for method, us in units.items():
        per_seed = [float(np.mean(u["returns"])) for u in us]
        metrics[f"craftax.return.{method}"] = float(np.mean(per_seed))
        if len(per_seed) > 1:
            metrics[f"craftax.return.{method}.se"] = float(mean_se(per_seed).se)
        for a in ("collect_iron", "collect_diamond", "make_iron_pickaxe", "make_stone_pickaxe"):
            metrics[f"craftax.achievement_success.{a}.{method}"] = float(
                np.mean([u["achievement_success"][a] for u in us])
            )
        for name, value in archive_figures(us).items():
            head, _, tail = name.partition(".")
            metrics[f"craftax.{head}.{method}" + (f".{tail}" if tail else "")] = value
        seconds = sum(u["train_seconds"] for u in us)
        if seconds > 0:
            metrics[f"craftax.steps_per_second.{method}"] = (
                sum(u["train_steps"] for u in us) / seconds
            )
    metrics |= {f"craftax.{k}": v for k, v in paired_return_gains(units).items()}
    metrics["craftax.env_steps_per_method"] = float(config.rounds * config.steps_per_round)
    return metrics


def _craftax_config(config: Any) -> Any:
    return dataclasses.replace(
        config,
        n_seeds=1,
        total_steps=config.craftax_steps,
        final_eval_episodes=config.eval_episodes * 2,
        craftax=False,
    )
