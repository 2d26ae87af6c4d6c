"""One (method, seed) training unit: PPO under a world scheduler, evaluated on the target.

:func:`make_scheduler` builds DiCode or a baseline; :func:`train_unit` runs the rounds
(``scheduler.worlds -> PPO.train_chunk -> scheduler.observe -> evaluate -> scheduler.end_round``),
checkpoints the learner with orbax and the scheduler with an atomic pickle every
``checkpoint_every`` rounds (a killed run resumes from the last one), and evaluates on
held-out target worlds: the target program with map seeds from a stream never used in
training.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from icml26.dicode.baselines import ACCEL, PLR, DomainRandomisation, TargetOnly
from icml26.dicode.config import RunConfig
from icml26.dicode.curriculum import DiCodeCurriculum, SlotStats
from icml26.dicode.dreamer import (
    Dreamer,
    LLMDreamer,
    MutationDreamer,
    llm_backend,
    seed_programs,
)
from icml26.dicode.ppo import PPO, PPOSettings, Runner
from icml26.dicode.program import WorldProgram, target_program
from icml26.dicode.tech import ACHIEVEMENTS
from icml26.shared.atomic import atomic_path

__all__ = [
    "EVAL_STREAM",
    "Evaluator",
    "ParamsCache",
    "hold_slots",
    "make_dreamer",
    "make_scheduler",
    "ppo_settings",
    "train_unit",
]

#: Fold-in tag of the held-out evaluation key stream (training keys never use it).
EVAL_STREAM = 1_000_003


def ppo_settings(config: RunConfig) -> PPOSettings:
    return PPOSettings(
        n_envs=config.n_envs,
        rollout=config.rollout,
        epochs=config.epochs,
        minibatches=config.minibatches,
        hidden=config.hidden,
        lr=config.lr,
        updates_per_chunk=config.updates_per_chunk,
        policy=config.policy,
    )


def make_dreamer(config: RunConfig) -> Dreamer:
    """The offline mutation dreamer, or an LLM dreamer through ``icml26.shared.llm``."""
    if config.dreamer == "offline_mutation":
        return MutationDreamer()
    backend = llm_backend(
        config.llm_model, endpoint=config.llm_endpoint, endpoint_model=config.llm_endpoint_model
    )
    return LLMDreamer(backend, format=config.llm_format, max_tokens=config.llm_max_tokens or None)


def make_scheduler(method: str, config: RunConfig, dreamer: Dreamer, lower: Any = None) -> Any:
    """The scheduler of ``method``; ``lower`` (program -> played world) lets DiCode reject
    children that lower to their parent's world (``None``: our crafting world)."""
    target = target_program()
    n, t = config.n_slots, config.target_slots
    if method == "ppo_target":
        return TargetOnly(target, n)
    if method == "domain_randomisation":
        return DomainRandomisation(target, n, t)
    if method == "plr":
        return PLR(target, n, t)
    if method == "accel":
        return ACCEL(target, n, t)
    if method in ("dicode", "dicode_random"):
        return DiCodeCurriculum(
            dreamer,
            seed_programs(),
            n_slots=n,
            target_slots=t,
            children_per_round=config.children_per_round,
            selection="learnability" if method == "dicode" else "uniform",
            lineage_weight=config.lineage_weight,
            lower=lower,
        )
    raise ValueError(f"unknown method {method!r}")


def _crafting_lower(program: WorldProgram) -> Any:
    from icml26.dicode.world import WorldParams

    return WorldParams(**program.arrays())


class ParamsCache:
    """Stacked world pytrees for a list of programs (each program lowered once).

    Args:
        lower: program -> pytree of NumPy arrays (default: the crafting world's
            ``WorldParams``; :func:`icml26.dicode.craftax_target.lower_to_craftax` for Craftax).
    """

    def __init__(self, lower: Any = _crafting_lower) -> None:
        self.lower = lower
        self._lowered: dict[WorldProgram, Any] = {}

    def batch(self, programs: list[WorldProgram], repeat: int) -> Any:
        rows = []
        for p in programs:
            if p not in self._lowered:
                self._lowered[p] = self.lower(p)
            rows.append(self._lowered[p])
        return jax.tree_util.tree_map(
            lambda *xs: jnp.asarray(np.repeat(np.stack(xs), repeat, axis=0)), *rows
        )


class Evaluator:
    """Target-world evaluation with one compiled function: ``episodes`` split into batches
    of ``batch`` held-out maps."""

    def __init__(self, ppo: PPO, batch: int, lower: Any = _crafting_lower) -> None:
        self.ppo = ppo
        self.batch = batch
        self.target = target_program()
        self.lower = lower
        self.worlds = ParamsCache(lower).batch([self.target], batch)

    def __call__(self, params: Any, key: jax.Array, episodes: int) -> dict[str, np.ndarray]:
        returns, ach = [], []
        for i in range(max(1, -(-episodes // self.batch))):
            out = self.ppo.evaluate(
                params, self.worlds, jax.random.fold_in(key, i), self.target.episode_length
            )
            returns.append(np.asarray(out["return"]))
            ach.append(np.asarray(out["achievements"]))
        return {"return": np.concatenate(returns), "achievements": np.concatenate(ach)}


def hold_slots(since: np.ndarray, n_slots: int) -> list[bool]:
    """Which slots must keep their world: some env of the slot has not yet finished an episode
    since the world was assigned.

    Args:
        since: finished episodes per environment since its world was assigned (slot-major).
        n_slots: number of slots (``since`` holds ``n_slots * envs_per_slot`` entries).

    Returns:
        One flag per slot.

    Raises:
        ValueError: if ``since`` does not split into ``n_slots`` equal slots.
    """
    since = np.asarray(since)
    if since.size % n_slots:
        raise ValueError(f"{since.size} environments do not split into {n_slots} slots")
    return [bool(x) for x in since.reshape(n_slots, -1).min(1) < 1]


def _profile(achievements: np.ndarray, names: tuple[str, ...] = ACHIEVEMENTS) -> dict[str, float]:
    rates = achievements.astype(float).mean(0)
    return {a: float(r) for a, r in zip(names, rates, strict=True)}


class _Checkpoint:
    """orbax for the learner's arrays + an atomic pickle for the Python-side state."""

    def __init__(self, folder: Path) -> None:
        import orbax.checkpoint as ocp

        self._ocp = ocp
        self.folder = folder.absolute()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=1, enable_async_checkpointing=False, create=True
        )
        self.manager = ocp.CheckpointManager(self.folder / "learner", options=options)

    def save(self, round_: int, runner: Runner, python_state: dict[str, Any]) -> None:
        leaves = jax.tree_util.tree_leaves(runner)
        state = {f"leaf_{i:04d}": np.asarray(x) for i, x in enumerate(leaves)}
        self.manager.save(round_, args=self._ocp.args.StandardSave(state))
        self.manager.wait_until_finished()
        target = self.folder / f"python_{round_:06d}.pkl"
        with atomic_path(target) as tmp, open(tmp, "wb") as fh:
            pickle.dump(python_state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        for old in self.folder.glob("python_*.pkl"):
            if old != target:
                old.unlink(missing_ok=True)

    def restore(self, like: Runner) -> tuple[int, Runner, dict[str, Any]] | None:
        step = self.manager.latest_step()
        if step is None:
            return None
        pkl = self.folder / f"python_{step:06d}.pkl"
        if not pkl.exists():
            return None
        state = self.manager.restore(step, args=self._ocp.args.StandardRestore())
        leaves, treedef = jax.tree_util.tree_flatten(like)
        restored = [jnp.asarray(state[f"leaf_{i:04d}"]) for i in range(len(leaves))]
        with open(pkl, "rb") as fh:
            python_state = pickle.load(fh)
        return step, jax.tree_util.tree_unflatten(treedef, restored), python_state


def train_unit(
    method: str,
    seed: int,
    config: RunConfig,
    ppo: PPO,
    evaluator: Evaluator,
    dreamer: Dreamer,
    checkpoint_dir: Path | None = None,
    on_round: Any = None,
) -> dict[str, Any]:
    """Train ``method`` with seed ``seed`` for ``config.total_steps`` steps and evaluate it.

    Args:
        method: one of :data:`~icml26.dicode.config.METHODS`.
        seed: the unit's seed (PPO init, environments, scheduler).
        config: the run's config (budget, slots, dreamer settings).
        ppo: the learner (its compiled functions are shared across units).
        evaluator: the held-out target evaluation.
        dreamer: DiCode's dreamer (unused by the baselines).
        checkpoint_dir: where to checkpoint and resume (``None``: no checkpoints).
        on_round: ``f(round, steps, loss, target_return)`` after every round.

    Returns:
        A JSON-ready dict: the return curve (``curve_steps``, ``curve_return``), the final
        held-out ``returns`` and ``achievement_success``, ``train_seconds``/``train_steps``
        (first compiled call excluded), and for DiCode the archive (lineage, success rates,
        history; ``archive_evaluated`` / ``archive_unevaluated``) and the dreamer's
        ``dreamed``/``valid`` counts.
    """
    rng = np.random.default_rng([seed, sum(map(ord, method))])
    scheduler = make_scheduler(method, config, dreamer, lower=evaluator.lower)
    cache = ParamsCache(evaluator.lower)
    names = ppo.env.achievement_names
    eps = config.envs_per_slot
    key = jax.random.PRNGKey(seed)
    eval_key = jax.random.fold_in(jax.random.PRNGKey(seed), EVAL_STREAM)
    programs = scheduler.worlds(rng)
    worlds = cache.batch(programs, eps)
    runner = ppo.init(key, worlds)
    start_round = 0
    curve_steps: list[int] = []
    curve_return: list[float] = []
    profile: dict[str, float] = {}
    timing = {"seconds": 0.0, "steps": 0}
    # finished episodes per env since its world was assigned: a slot keeps its world until
    # every env of it has finished one full episode there
    since = np.zeros(config.n_slots * eps)
    ckpt = _Checkpoint(checkpoint_dir) if checkpoint_dir is not None else None
    if ckpt is not None and (restored := ckpt.restore(runner)) is not None:
        start_round, runner, py = restored
        scheduler, rng = py["scheduler"], py["rng"]
        if isinstance(scheduler, DiCodeCurriculum):
            scheduler.dreamer = dreamer
            scheduler.lower = evaluator.lower
        curve_steps, curve_return, profile = py["curve_steps"], py["curve_return"], py["profile"]
        programs = py["programs"]
        since = np.asarray(py.get("since", since), dtype=float)
    else:
        ev = evaluator(runner.params, jax.random.fold_in(eval_key, 0), config.eval_episodes)
        curve_steps.append(0)
        curve_return.append(float(ev["return"].mean()))
        profile = _profile(ev["achievements"], names)
    previous = programs
    for r in range(start_round, config.rounds):
        if r > start_round or start_round > 0:
            programs = scheduler.worlds(rng, keep=hold_slots(since, config.n_slots))
        changed = np.repeat(
            np.asarray([a != b for a, b in zip(programs, previous, strict=True)]), eps
        )
        since[changed] = 0.0  # a changed world starts fresh episodes (reset in train_chunk)
        worlds = cache.batch(programs, eps)
        t0 = time.perf_counter()
        runner, stats = ppo.train_chunk(runner, worlds, jnp.asarray(changed))
        stats = jax.device_get(stats)
        elapsed = time.perf_counter() - t0
        if r > 0:
            timing["seconds"] += elapsed
            timing["steps"] += config.steps_per_round
        previous = programs

        def per_slot(x: np.ndarray) -> np.ndarray:
            return np.asarray(x).reshape(config.n_slots, eps).sum(1)

        since += np.asarray(stats["episodes"], dtype=float)
        episodes = per_slot(stats["episodes"])
        successes = per_slot(stats["goal_successes"])
        pvl = np.asarray(stats["positive_value_loss"]).reshape(config.n_slots, eps).mean(1)
        returns = per_slot(stats["return_sum"])
        scheduler.observe(
            [
                SlotStats(float(e), float(s), float(v), float(rt))
                for e, s, v, rt in zip(episodes, successes, pvl, returns, strict=True)
            ]
        )
        steps = (r + 1) * config.steps_per_round
        if (r + 1) % config.eval_every == 0 or r + 1 == config.rounds:
            ev = evaluator(runner.params, jax.random.fold_in(eval_key, r + 1), config.eval_episodes)
            curve_steps.append(steps)
            curve_return.append(float(ev["return"].mean()))
            profile = _profile(ev["achievements"], names)
        scheduler.end_round(profile, rng)
        if on_round is not None:
            on_round(r, steps, float(stats["loss"]), curve_return[-1])
        if ckpt is not None and ((r + 1) % config.checkpoint_every == 0) and r + 1 < config.rounds:
            ckpt.save(
                r + 1,
                runner,
                {
                    "scheduler": scheduler,
                    "rng": rng,
                    "curve_steps": curve_steps,
                    "curve_return": curve_return,
                    "profile": profile,
                    "programs": programs,
                    "since": since,
                },
            )
    final = evaluator(
        runner.params, jax.random.fold_in(eval_key, 10**6), config.final_eval_episodes
    )
    unit: dict[str, Any] = {
        "method": method,
        "seed": seed,
        "curve_steps": curve_steps,
        "curve_return": curve_return,
        "returns": final["return"].tolist(),
        "achievement_success": _profile(final["achievements"], names),
        "train_seconds": timing["seconds"],
        "train_steps": timing["steps"],
        "total_steps": config.rounds * config.steps_per_round,
    }
    if isinstance(scheduler, DiCodeCurriculum):
        unit["dreamer"] = scheduler.dreamer.name
        unit["dreamed"] = scheduler.dreamed
        unit["valid"] = scheduler.valid
        unit["rejections"] = scheduler.rejections
        unit["archive_size"] = len(scheduler.archive)
        unit["archive_evaluated"] = len(scheduler.archive.evaluated())
        unit["archive_unevaluated"] = len(scheduler.archive.pending())
        unit["frontier_fraction"] = scheduler.frontier_fraction()
        unit["history"] = scheduler.history
        unit["archive"] = [
            {
                "id": e.id,
                "parent": e.parent,
                "generation": e.generation,
                "born": e.born,
                "operator": e.operator,
                "success_rate": e.success_rate,
                "learnability": e.learnability,
                "goal": e.program.goal,
                "source": e.program.source(),
            }
            for e in scheduler.archive.entries
        ]
    elif isinstance(scheduler, PLR):
        unit["proposed"] = scheduler.proposed
        unit["valid"] = scheduler.valid
    return unit


def setup_compilation_cache(setting: str) -> str | None:
    """Point JAX's persistent compilation cache at ``setting`` (``""``: the user cache)."""
    if setting == "off":
        return None
    folder = (
        Path(setting).expanduser()
        if setting
        else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "icml26" / "jax"
    )
    folder.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return str(folder)
