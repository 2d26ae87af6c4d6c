"""One (method, seed) training unit: PPO under a world scheduler, evaluated on the target.

:func:`make_scheduler` builds DiCode or a baseline; :func:`train_unit` runs the rounds
(``scheduler.worlds -> PPO.train_chunk -> scheduler.observe -> evaluate -> scheduler.end_round``),
checkpoints the learner with orbax and the scheduler with an atomic pickle every
``checkpoint_every`` rounds (a killed run resumes from the last one), and evaluates on
held-out target worlds: the target program with map seeds from a stream never used in
training.
"""

from __future__ import annotations

import json
import os
import pickle
import time
from dataclasses import dataclass, field
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
from icml26.dicode.progress import PROGRESS_STREAM, ProgressLog, mean_progress
from icml26.dicode.tech import ACHIEVEMENTS
from icml26.shared import RunDir, atomic_write_json, log
from icml26.shared.atomic import atomic_path

__all__ = [
    "EVAL_STREAM",
    "Evaluator",
    "ParamsCache",
    "hold_slots",
    "load_units",
    "make_dreamer",
    "make_scheduler",
    "ppo_settings",
    "train_unit",
    "train_units",
    "unit_path",
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
            # evaluated = measured over a full slot: one finished episode in each of its envs
            min_episodes=config.envs_per_slot,
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
        self.cache = ParamsCache(lower)
        self.worlds = self.cache.batch([self.target], batch)

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


@dataclass
class _UnitState:
    """What a unit carries from round to round (and checkpoints)."""

    runner: Runner
    scheduler: Any
    rng: np.random.Generator
    programs: list[WorldProgram]
    since: np.ndarray  # finished episodes per env since its world was assigned
    curve_steps: list[int] = field(default_factory=list)
    curve_return: list[float] = field(default_factory=list)
    profile: dict[str, float] = field(default_factory=dict)
    progress: ProgressLog | None = None  # DiCode's learning-progress probe (None: off)
    start_round: int = 0

    def python_state(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "rng": self.rng,
            "curve_steps": self.curve_steps,
            "curve_return": self.curve_return,
            "profile": self.profile,
            "programs": self.programs,
            "since": self.since,
            "progress": self.progress,
        }


def _start_unit(
    method: str,
    seed: int,
    config: RunConfig,
    ppo: PPO,
    evaluator: Evaluator,
    dreamer: Dreamer,
    ckpt: _Checkpoint | None,
    probe_progress: bool = True,
) -> _UnitState:
    """A fresh unit (evaluated once before training) or the one its checkpoint holds."""
    rng = np.random.default_rng([seed, sum(map(ord, method))])
    scheduler = make_scheduler(method, config, dreamer, lower=evaluator.lower)
    programs = scheduler.worlds(rng)
    worlds = ParamsCache(evaluator.lower).batch(programs, config.envs_per_slot)
    runner = ppo.init(jax.random.PRNGKey(seed), worlds)
    # a slot keeps its world until every env of it has finished one full episode there
    since = np.zeros(config.n_slots * config.envs_per_slot)
    if ckpt is not None and (restored := ckpt.restore(runner)) is not None:
        start_round, runner, py = restored
        scheduler = py["scheduler"]
        if isinstance(scheduler, DiCodeCurriculum):
            scheduler.dreamer = dreamer
            scheduler.lower = evaluator.lower
        return _UnitState(
            runner,
            scheduler,
            py["rng"],
            py["programs"],
            np.asarray(py.get("since", since), dtype=float),
            py["curve_steps"],
            py["curve_return"],
            py["profile"],
            py.get("progress"),
            start_round,
        )
    state = _UnitState(runner, scheduler, rng, programs, since)
    if probe_progress and isinstance(scheduler, DiCodeCurriculum):
        state.progress = ProgressLog(chunk=max(1, min(scheduler.new_capacity, evaluator.batch)))
    ev = evaluator(runner.params, jax.random.fold_in(_eval_key(seed), 0), config.eval_episodes)
    state.curve_steps.append(0)
    state.curve_return.append(float(ev["return"].mean()))
    state.profile = _profile(ev["achievements"], ppo.env.achievement_names)
    return state


def _eval_key(seed: int) -> jax.Array:
    """The held-out evaluation stream of ``seed``: the same for every method (paired maps)."""
    return jax.random.fold_in(jax.random.PRNGKey(seed), EVAL_STREAM)


def _progress_key(seed: int) -> jax.Array:
    """The progress probe's held-out stream of ``seed`` (never used in training)."""
    return jax.random.fold_in(jax.random.PRNGKey(seed), PROGRESS_STREAM)


def _observe(scheduler: Any, stats: dict[str, Any], config: RunConfig) -> None:
    """Feed the round's per-slot episode counts and goal successes to the scheduler."""

    def per_slot(x: Any, reduce: Any = np.sum) -> np.ndarray:
        return reduce(np.asarray(x).reshape(config.n_slots, config.envs_per_slot), axis=1)

    rows = zip(
        per_slot(stats["episodes"]),
        per_slot(stats["goal_successes"]),
        per_slot(stats["positive_value_loss"], np.mean),
        per_slot(stats["return_sum"]),
        strict=True,
    )
    scheduler.observe([SlotStats(float(e), float(s), float(v), float(r)) for e, s, v, r in rows])


def train_unit(
    method: str,
    seed: int,
    config: RunConfig,
    ppo: PPO,
    evaluator: Evaluator,
    dreamer: Dreamer,
    checkpoint_dir: Path | None = None,
    on_round: Any = None,
    *,
    probe_progress: bool = True,
) -> dict[str, Any]:
    """Train ``method`` with seed ``seed`` for ``config.total_steps`` steps and evaluate it.

    Args:
        method: one of :data:`~icml26.dicode.config.METHODS`.
        seed: the unit's seed (PPO init, environments, scheduler; the held-out evaluation maps
            depend on the seed only, so units of one seed are paired).
        config: the run's config (budget, slots, dreamer settings).
        ppo: the learner (its compiled functions are shared across units).
        evaluator: the held-out target evaluation.
        dreamer: DiCode's dreamer (unused by the baselines).
        checkpoint_dir: where to checkpoint and resume (``None``: no checkpoints).
        on_round: ``f(round, steps, loss, target_return)`` after every round.
        probe_progress: DiCode's learning-progress probe (:mod:`icml26.dicode.progress`): each
            child measured at birth and at the end on the same held-out maps (one evaluation
            call of the evaluator's size per group of new children, twice).

    Returns:
        A JSON-ready dict: the return curve (``curve_steps``, ``curve_return``), the final
        held-out ``returns`` and ``achievement_success``, ``train_seconds``/``train_steps``
        (first compiled call excluded), and for DiCode the archive (lineage, success rates,
        history; ``archive_evaluated`` / ``archive_unevaluated``), the dreamer's
        ``dreamed``/``valid`` counts and, with ``probe_progress``, the children's
        ``learning_progress`` (:mod:`icml26.dicode.progress`).
    """
    ckpt = _Checkpoint(checkpoint_dir) if checkpoint_dir is not None else None
    u = _start_unit(method, seed, config, ppo, evaluator, dreamer, ckpt, probe_progress)
    cache = ParamsCache(evaluator.lower)
    eps, timing = config.envs_per_slot, {"seconds": 0.0, "steps": 0}
    previous = u.programs
    for r in range(u.start_round, config.rounds):
        if r > u.start_round or u.start_round > 0:
            u.programs = u.scheduler.worlds(u.rng, keep=hold_slots(u.since, config.n_slots))
        changed = np.repeat(
            np.asarray([a != b for a, b in zip(u.programs, previous, strict=True)]), eps
        )
        u.since[changed] = 0.0  # a changed world starts fresh episodes (reset in train_chunk)
        worlds = cache.batch(u.programs, eps)
        t0 = time.perf_counter()
        u.runner, stats = ppo.train_chunk(u.runner, worlds, jnp.asarray(changed))
        stats = jax.device_get(stats)
        if r > 0:
            timing["seconds"] += time.perf_counter() - t0
            timing["steps"] += config.steps_per_round
        previous = u.programs
        u.since += np.asarray(stats["episodes"], dtype=float)
        _observe(u.scheduler, stats, config)
        steps = (r + 1) * config.steps_per_round
        if (r + 1) % config.eval_every == 0 or r + 1 == config.rounds:
            key = jax.random.fold_in(_eval_key(seed), r + 1)
            ev = evaluator(u.runner.params, key, config.eval_episodes)
            u.curve_steps.append(steps)
            u.curve_return.append(float(ev["return"].mean()))
            u.profile = _profile(ev["achievements"], ppo.env.achievement_names)
        u.scheduler.end_round(u.profile, u.rng)
        if u.progress is not None and r + 1 < config.rounds:  # children trained on from now
            born = [(e.id, e.program) for e in u.scheduler.archive.entries if e.born == r + 1]
            u.progress.birth(evaluator, u.runner.params, born, _progress_key(seed))
        if on_round is not None:
            on_round(r, steps, float(stats["loss"]), u.curve_return[-1])
        if ckpt is not None and ((r + 1) % config.checkpoint_every == 0) and r + 1 < config.rounds:
            ckpt.save(r + 1, u.runner, u.python_state())
    key = jax.random.fold_in(_eval_key(seed), 10**6)
    final = evaluator(u.runner.params, key, config.final_eval_episodes)
    unit: dict[str, Any] = {
        "method": method,
        "seed": seed,
        "curve_steps": u.curve_steps,
        "curve_return": u.curve_return,
        "returns": final["return"].tolist(),
        "achievement_success": _profile(final["achievements"], ppo.env.achievement_names),
        "train_seconds": timing["seconds"],
        "train_steps": timing["steps"],
        "total_steps": config.rounds * config.steps_per_round,
    }
    progress = (
        u.progress.finish(evaluator, u.runner.params, _progress_key(seed))
        if u.progress is not None
        else {}
    )
    return unit | _scheduler_record(u.scheduler, progress)


def _scheduler_record(
    scheduler: Any, progress: dict[int, tuple[float, float]] | None = None
) -> dict[str, Any]:
    """DiCode's archive, dreamer counts and learning progress (children's goal success at
    birth and at the end: ``success_birth`` / ``success_final``), or PLR's proposals."""
    progress = progress or {}
    if isinstance(scheduler, ACCEL):
        return {
            "proposed": scheduler.proposed,
            "valid": scheduler.valid,
            "edits_proposed": scheduler.edits_proposed,
            "edits_valid": scheduler.edits_valid,
        }
    if isinstance(scheduler, PLR):
        return {"proposed": scheduler.proposed, "valid": scheduler.valid}
    if not isinstance(scheduler, DiCodeCurriculum):
        return {}
    return {
        "dreamer": scheduler.dreamer.name,
        "dreamed": scheduler.dreamed,
        "valid": scheduler.valid,
        "rejections": scheduler.rejections,
        "archive_size": len(scheduler.archive),
        "archive_evaluated": len(scheduler.archive.evaluated(scheduler.min_episodes)),
        "archive_unevaluated": len(scheduler.archive)
        - len(scheduler.archive.evaluated(scheduler.min_episodes)),
        "frontier_fraction": scheduler.frontier_fraction(),
        "history": scheduler.history,
        "learning_progress": mean_progress(progress),
        "progress_worlds": len(progress),
        "archive": [
            {
                "id": e.id,
                "parent": e.parent,
                "generation": e.generation,
                "born": e.born,
                "operator": e.operator,
                "success_rate": e.success_rate,
                "episodes": e.finished,
                "learnability": e.learnability,
                "goal": e.program.goal,
                "source": e.program.source(),
                "success_birth": progress[e.id][0] if e.id in progress else None,
                "success_final": progress[e.id][1] if e.id in progress else None,
            }
            for e in scheduler.archive.entries
        ],
    }


def train_units(
    methods: tuple[str, ...],
    seeds: int,
    config: RunConfig,
    run_dir: RunDir,
    ppo: PPO,
    evaluator: Evaluator,
    dreamer: Dreamer,
    *,
    prefix: str = "",
    log_rounds: bool = True,
    probe_progress: bool = True,
) -> dict[str, list[dict[str, Any]]]:
    """Every (method, seed) unit, each cached as ``<run>/units/<prefix><method>.s<k>.json``
    (a finished unit is read back, an unfinished one resumes from its checkpoints).

    Args:
        methods: the methods trained, in order.
        seeds: seeds per method (seed ``config.seed + k``: the same for every method, so
            units of one seed share the PPO initialisation and the evaluation maps).
        config: the units' config.
        run_dir: the run folder (units, checkpoints, per-round metrics).
        ppo: the learner; evaluator: the held-out target evaluation; dreamer: DiCode's.
        prefix: unit-file prefix (``"craftax."`` for the Craftax stage).
        log_rounds: write each round's loss and target return to ``metrics.jsonl``.
        probe_progress: DiCode's learning-progress probe (:func:`train_unit`).

    Returns:
        Per method, one unit dict per seed (:func:`train_unit`).
    """
    (Path(run_dir.path) / "units").mkdir(exist_ok=True)
    out: dict[str, list[dict[str, Any]]] = {m: [] for m in methods}
    for method in methods:
        for k in range(seeds):
            path, seed = unit_path(run_dir, prefix, method, k), config.seed + k
            if path.exists():
                out[method].append(json.loads(path.read_text()))
                continue
            start = time.perf_counter()

            def on_round(
                r: int, steps: int, loss: float, ret: float, m: str = method, s: int = seed
            ) -> None:
                run_dir.log_metrics(steps, method=m, seed=s, loss=loss, target_return=ret)

            checkpoints = run_dir.checkpoints.folder / f"{prefix.replace('.', '-')}{method}-s{k}"
            unit = train_unit(
                method,
                seed,
                config,
                ppo,
                evaluator,
                dreamer,
                checkpoints,
                on_round if log_rounds else None,
                probe_progress=probe_progress,
            )
            unit["wall_seconds"] = time.perf_counter() - start
            atomic_write_json(path, unit)
            log(f"  {prefix}{method:21s} seed {seed}: return {np.mean(unit['returns']):.2f}")
            out[method].append(unit)
    return out


def unit_path(run_dir: RunDir, prefix: str, method: str, k: int) -> Path:
    """Where :func:`train_units` caches the ``k``-th seed of ``method``."""
    return Path(run_dir.path) / "units" / f"{prefix}{method}.s{k}.json"


def load_units(
    run_dir: RunDir, methods: tuple[str, ...], seeds: int, prefix: str = ""
) -> dict[str, list[dict[str, Any]]]:
    """The finished units :func:`train_units` cached (e.g. to recompute metrics or plots).

    Raises:
        FileNotFoundError: naming the first unit that is not there.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for method in methods:
        for k in range(seeds):
            path = unit_path(run_dir, prefix, method, k)
            if not path.exists():
                raise FileNotFoundError(f"no finished unit {path} (train it first)")
            out.setdefault(method, []).append(json.loads(path.read_text()))
    return out


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
