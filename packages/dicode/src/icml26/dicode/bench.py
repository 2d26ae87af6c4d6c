"""``icml26 bench dicode``: world and PPO throughput, recompiles after warm-up, the dreamer's
cost, Craftax-Classic. A dreamed edit the sandbox rejects is counted, never replaced."""

from __future__ import annotations

import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from icml26.dicode.config import BenchConfig
from icml26.dicode.craftax_target import craftax_available, craftax_bench
from icml26.dicode.curriculum import DiCodeCurriculum, SlotStats
from icml26.dicode.dreamer import MutationDreamer, random_program
from icml26.dicode.ppo import PPO, PPOSettings, compiled_versions
from icml26.dicode.program import ProgramError, WorldProgram, compile_program, target_program
from icml26.dicode.training import ParamsCache, setup_compilation_cache
from icml26.dicode.world import N_ACTIONS, reset, step_auto_reset
from icml26.shared import RunDir, log

__all__ = ["bench", "compiled_edit", "time_dream_rounds"]


def compiled_edit(
    dreamer: MutationDreamer,
    parent: WorldProgram,
    rng: np.random.Generator,
    failed: dict[str, int],
    attempts: int = 20,
) -> WorldProgram:
    """A dreamed edit of ``parent`` that compiles; each rejected edit is counted in ``failed``
    (by reason), never replaced by the parent.

    Args:
        dreamer: the edit operator.
        parent: the program to edit.
        rng: the edit stream.
        failed: rejection counts, updated in place.
        attempts: edits tried before giving up.

    Returns:
        The first edit that compiles.

    Raises:
        RuntimeError: if ``attempts`` edits in a row are rejected.
    """
    for _ in range(attempts):
        try:
            return compile_program(dreamer.mutate(parent, rng, {}, k=2)[0])
        except ProgramError as exc:
            failed[exc.reason] = failed.get(exc.reason, 0) + 1
    raise RuntimeError(f"bench: {attempts} edits in a row were rejected ({failed})")


def _best(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """World and PPO throughput, recompiles after warm-up, the dreamer's cost, Craftax-Classic.

    Args:
        config: the bench's config.
        run_dir: the run folder.

    Returns:
        The bench's metrics (``bench_rejected_edits`` counts sandbox rejections).
    """
    setup_compilation_cache(config.compilation_cache)
    metrics: dict[str, Any] = {}
    rng = np.random.default_rng(config.seed)
    env_recompiles = _world_bench(config, metrics, rng)
    _ppo_bench(config, metrics, rng, env_recompiles)
    _dream_bench(config, metrics, rng)
    if config.craftax:
        if craftax_available():
            metrics.update(craftax_bench(config))
        else:
            log("bench: craftax not installed (pip install 'icml26-dicode[craftax]'); skipped")
    return metrics


def _world_bench(config: BenchConfig, metrics: dict[str, Any], rng: np.random.Generator) -> int:
    cache = ParamsCache()
    target = target_program()
    worlds = cache.batch([target], config.env_batch)
    n = config.env_batch

    @jax.jit
    def rollout(state: Any, key: jax.Array, worlds: Any) -> Any:
        def body(s: Any, k: jax.Array) -> Any:
            k_a, k_e = jax.random.split(k)
            a = jax.random.randint(k_a, (n,), 0, N_ACTIONS)
            _, s, r, _d, _ = jax.vmap(step_auto_reset)(jax.random.split(k_e, n), s, a, worlds)
            return s, r.sum()

        return jax.lax.scan(body, state, jax.random.split(key, config.env_steps))

    _, state = jax.vmap(reset)(jax.random.split(jax.random.PRNGKey(config.seed), n), worlds)
    start = time.perf_counter()
    jax.block_until_ready(rollout(state, jax.random.PRNGKey(1), worlds))
    metrics["compile_seconds.crafting_world"] = time.perf_counter() - start
    t = _best(lambda: rollout(state, jax.random.PRNGKey(2), worlds), config.repeats)
    metrics["env_steps_per_second.crafting_world"] = n * config.env_steps / t
    for _ in range(config.worlds):  # new dreamed worlds: must reuse the compiled rollout
        w = cache.batch([compile_program(random_program(rng))], n)
        jax.block_until_ready(rollout(state, jax.random.PRNGKey(3), w))
    env_recompiles = compiled_versions(rollout) - 1
    log(f"bench: world {metrics['env_steps_per_second.crafting_world']:.0f} steps/s")
    return int(env_recompiles)


def _ppo_bench(
    config: BenchConfig, metrics: dict[str, Any], rng: np.random.Generator, env_recompiles: int
) -> None:
    cache = ParamsCache()
    target = target_program()

    settings = PPOSettings(
        n_envs=config.n_envs,
        rollout=config.rollout,
        hidden=config.hidden,
        updates_per_chunk=config.ppo_updates,
    )
    ppo = PPO(settings)
    tw = cache.batch([target], settings.n_envs)
    runner = ppo.init(jax.random.PRNGKey(config.seed), tw)
    mask = jnp.zeros((settings.n_envs,), bool)
    start = time.perf_counter()
    runner, _ = ppo.train_chunk(runner, tw, mask)
    jax.block_until_ready(runner.params)
    metrics["compile_seconds.ppo_chunk"] = time.perf_counter() - start
    dreamer = MutationDreamer()
    box = {"runner": runner}

    def chunk() -> Any:
        box["runner"], stats = ppo.train_chunk(box["runner"], tw, mask)
        return stats

    t = _best(chunk, config.repeats)
    metrics["ppo_updates_per_second"] = config.ppo_updates / t
    metrics["ppo_env_steps_per_second"] = settings.steps_per_chunk / t
    failed: dict[str, int] = {}
    for i in range(config.worlds):
        prog = compiled_edit(dreamer, target, rng, failed)
        w = cache.batch([prog] * settings.n_envs, 1)
        box["runner"], _ = ppo.train_chunk(
            box["runner"], w, jnp.asarray(np.arange(settings.n_envs) % 2 == i % 2)
        )
    jax.block_until_ready(box["runner"].params)
    metrics["recompiles_after_warmup"] = float(
        compiled_versions(ppo.train_chunk) - 1 + env_recompiles
    )
    metrics["bench_rejected_edits"] = float(sum(failed.values()))
    if failed:
        log(f"bench: {sum(failed.values())} dreamed edits rejected by the sandbox: {failed}")
    log(
        f"bench: PPO {metrics['ppo_env_steps_per_second']:.0f} steps/s, recompiles {metrics['recompiles_after_warmup']:.0f}"
    )


def _dream_bench(config: BenchConfig, metrics: dict[str, Any], rng: np.random.Generator) -> None:
    """The dreamer's cost (selection + mutation + validation of 4 children) vs archive size."""
    dreamer = MutationDreamer()
    target = target_program()
    for size in config.archive_sizes:
        # 8 free slots: room to evaluate 4 children a round, so every timed round dreams 4
        cur = DiCodeCurriculum(dreamer, [target], n_slots=10, target_slots=2, children_per_round=4)
        while len(cur.archive) < size:
            e = cur.archive.add(target, parent=int(rng.integers(len(cur.archive))), born=0)
            e.update(SlotStats(10.0, float(rng.integers(0, 11)), 0.0, 0.0), 0, 1.0)
        metrics[f"dream_round_seconds.a{size}"] = time_dream_rounds(cur, rng, rounds=5)


def time_dream_rounds(cur: DiCodeCurriculum, rng: np.random.Generator, rounds: int) -> float:
    """Mean seconds of one ``end_round`` that really dreams ``children_per_round`` children.

    Between the timed calls the new children are marked evaluated (outside the timer), so the
    queue of unevaluated children never caps dreaming and no timed call is a no-op.

    Raises:
        RuntimeError: if a timed call dreamed fewer than ``children_per_round`` children.
    """
    total = 0.0
    for _ in range(rounds):
        before = cur.dreamed
        start = time.perf_counter()
        cur.end_round({}, rng)
        total += time.perf_counter() - start
        if cur.dreamed - before != cur.children_per_round:
            raise RuntimeError(
                f"dreamer bench: a round dreamed {cur.dreamed - before} children, "
                f"expected {cur.children_per_round}"
            )
        for e in cur.archive.pending():
            e.update(SlotStats(10.0, float(rng.integers(0, 11)), 0.0, 0.0), cur.round, 1.0)
    return total / rounds
