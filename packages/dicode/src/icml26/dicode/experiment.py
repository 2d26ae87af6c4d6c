"""The ``icml26 run dicode`` and ``icml26 bench dicode`` jobs.

``run`` reads as its stages::

    ppo, evaluator, dreamer = build_learner(config)          # one compile shared by all
    units = {m: [train_unit(m, seed, ...) for seed] for m}    # equal step budgets
    metrics = summarise(units, config)                        # the issue's metric keys
    plot_results(run_dir, units, config)                      # curves, bars, lineage, learnability
    metrics |= craftax_stage(config, run_dir)                 # full profile: Craftax-Classic

Every finished (method, seed) is cached in ``<run>/units/`` and unfinished ones checkpoint in
``<run>/checkpoints/``, so a killed run resumes.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np

from icml26.dicode.config import BASELINES, BenchConfig, RunConfig
from icml26.dicode.tech import ACHIEVEMENTS, DEEP_ACHIEVEMENTS
from icml26.shared import RunDir, atomic_write_json, figure, log

__all__ = ["bench", "interval", "run", "summarise"]

_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(values: list[float]) -> tuple[float, float | None, float | None]:
    """Mean and a 95% Student-t interval over seeds (``None`` bounds for a single seed)."""
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if arr.size < 2:
        return mean, None, None
    half = _T95.get(arr.size - 1, 1.96) * float(arr.std(ddof=1)) / math.sqrt(arr.size)
    return mean, mean - half, mean + half


def build_learner(config: RunConfig) -> tuple[Any, Any, Any]:
    """PPO (compiled once for every method and seed), the target evaluator, the dreamer."""
    from icml26.dicode.ppo import PPO
    from icml26.dicode.training import Evaluator, make_dreamer, ppo_settings

    ppo = PPO(ppo_settings(config))
    return ppo, Evaluator(ppo, config.eval_episodes), make_dreamer(config)


def _units(
    config: RunConfig, run_dir: RunDir, ppo: Any, evaluator: Any, dreamer: Any
) -> dict[str, list[dict[str, Any]]]:
    from icml26.dicode.training import train_unit

    out: dict[str, list[dict[str, Any]]] = {}
    folder = run_dir.path / "units"
    folder.mkdir(exist_ok=True)
    for method in config.methods:
        out[method] = []
        for k in range(config.n_seeds):
            seed = config.seed + k
            path = folder / f"{method}.s{k}.json"
            if path.exists():
                out[method].append(json.loads(path.read_text()))
                continue
            start = time.perf_counter()

            def on_round(
                r: int, steps: int, loss: float, ret: float, m: str = method, s: int = seed
            ) -> None:
                run_dir.log_metrics(steps, method=m, seed=s, loss=loss, target_return=ret)

            unit = train_unit(
                method,
                seed,
                config,
                ppo,
                evaluator,
                dreamer,
                checkpoint_dir=run_dir.checkpoints.folder / f"{method}-s{k}",
                on_round=on_round,
            )
            unit["wall_seconds"] = time.perf_counter() - start
            atomic_write_json(path, unit)
            log(
                f"  {method:21s} seed {seed}: target return {np.mean(unit['returns']):.2f} "
                f"({unit['wall_seconds']:.0f}s)"
            )
            out[method].append(unit)
    return out


def _auc(unit: dict[str, Any]) -> float:
    """Normalised area under the target-return curve: ``∫ R(s) ds / S``."""
    steps = np.asarray(unit["curve_steps"], dtype=float)
    ret = np.asarray(unit["curve_return"], dtype=float)
    return float(np.trapezoid(ret, steps) / max(steps[-1], 1.0))


def summarise(units: dict[str, list[dict[str, Any]]], config: RunConfig) -> dict[str, Any]:
    """The issue's metric keys from the units (means over seeds)."""
    m: dict[str, Any] = {}
    for method, us in units.items():
        mean, lo, hi = interval([float(np.mean(u["returns"])) for u in us])
        m[f"return.{method}"] = mean
        if lo is not None:
            m[f"return.{method}.lo"] = lo
            m[f"return.{method}.hi"] = hi
        m[f"auc.{method}"] = float(np.mean([_auc(u) for u in us]))
        for a in ACHIEVEMENTS:
            m[f"achievement_success.{a}.{method}"] = float(
                np.mean([u["achievement_success"][a] for u in us])
            )
        m[f"deep_success.{method}"] = max(
            m[f"achievement_success.{a}.{method}"] for a in DEEP_ACHIEVEMENTS
        )
    dicode = units.get("dicode", [])
    if dicode:
        m["archive_size"] = float(np.mean([u["archive_size"] for u in dicode]))
        m["frontier_fraction"] = float(np.mean([u["frontier_fraction"] for u in dicode]))
    dreamt: dict[str, list[int]] = {}
    for method in ("dicode", "dicode_random"):
        for u in units.get(method, []):
            d = dreamt.setdefault(u["dreamer"], [0, 0])
            d[0] += u["dreamed"]
            d[1] += u["valid"]
    for name, (n, v) in dreamt.items():
        m[f"program_valid_rate.{name}"] = v / max(n, 1)
    accel = units.get("accel", [])
    if accel:
        m["program_valid_rate.accel_edits"] = sum(u["valid"] for u in accel) / max(
            1, sum(u["proposed"] for u in accel)
        )
    seconds = sum(u["train_seconds"] for us in units.values() for u in us)
    steps = sum(u["train_steps"] for us in units.values() for u in us)
    m["steps_per_second"] = steps / seconds if seconds > 0 else float("nan")
    m["env_steps_per_method"] = float(config.rounds * config.steps_per_round)
    base = [m[f"return.{b}"] for b in BASELINES if f"return.{b}" in m]
    if base and "return.dicode" in m:
        strongest = max(base)
        m["return_gain_over_strongest_baseline"] = (m["return.dicode"] - strongest) / max(
            abs(strongest), 1e-9
        )
    return m


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Every method, every seed, equal step budgets; then the Craftax-Classic stage (full)."""
    from icml26.dicode.training import setup_compilation_cache

    cache = setup_compilation_cache(config.compilation_cache)
    run_dir.update_env(jax_compilation_cache=cache)
    log(
        f"dicode: {len(config.methods)} methods x {config.n_seeds} seeds, "
        f"{config.rounds} rounds x {config.steps_per_round} steps, dreamer {config.dreamer}"
    )
    ppo, evaluator, dreamer = build_learner(config)
    units = _units(config, run_dir, ppo, evaluator, dreamer)
    metrics = summarise(units, config)
    compiled = ppo.train_chunk._cache_size()
    metrics["recompiles_after_warmup"] = float(max(0, compiled - 1))  # 0 compiles: all resumed
    plot_results(run_dir, units)
    if config.craftax:
        from icml26.dicode.craftax_target import craftax_stage

        metrics.update(craftax_stage(config, run_dir))
    return metrics


# ------------------------------------------------------------------------ plots
def plot_results(run_dir: RunDir, units: dict[str, list[dict[str, Any]]]) -> None:
    from icml26.shared import PALETTE

    with figure(
        run_dir.plot_path("return_curves"),
        title="Target-world return vs environment steps (mean over seeds)",
    ) as (_f, ax):
        for i, (method, us) in enumerate(units.items()):
            steps = np.asarray(us[0]["curve_steps"])
            ret = np.mean([u["curve_return"] for u in us], axis=0)
            ax.plot(steps, ret, color=PALETTE[i % len(PALETTE)], label=method)
        ax.set_xlabel("environment steps")
        ax.set_ylabel("return on held-out target worlds")
        ax.legend()
    with figure(
        run_dir.plot_path("achievement_success"),
        title="Achievement success on the target (final policy)",
        width=11,
        height=4,
    ) as (_f, ax):
        width = 0.8 / max(1, len(units))
        x = np.arange(len(ACHIEVEMENTS))
        for i, (method, us) in enumerate(units.items()):
            rates = [np.mean([u["achievement_success"][a] for u in us]) for a in ACHIEVEMENTS]
            ax.bar(x + i * width, rates, width, color=PALETTE[i % len(PALETTE)], label=method)
        ax.set_xticks(x + 0.4 - width / 2)
        ax.set_xticklabels(ACHIEVEMENTS, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("success rate")
        ax.legend(fontsize=7)
    dicode = units.get("dicode")
    if not dicode:
        return
    archive = dicode[0]["archive"]
    with figure(
        run_dir.plot_path("lineage_tree"),
        title="DiCode archive lineage, seed 0 (colour: learnability)",
    ) as (fig, ax):
        for e in archive:
            if e["parent"] is not None:
                p = archive[e["parent"]]
                ax.plot(
                    [p["born"], e["born"]], [p["generation"], e["generation"]], color="0.75", lw=0.6
                )
        sc = ax.scatter(
            [e["born"] for e in archive],
            [e["generation"] + 0.15 * ((e["id"] % 5) - 2) / 2 for e in archive],
            c=[e["learnability"] if e["learnability"] is not None else -0.02 for e in archive],
            cmap="viridis",
            vmin=-0.02,
            vmax=0.25,
            s=14,
        )
        fig.colorbar(sc, ax=ax, label="p(1-p) (unevaluated: below 0)")
        ax.set_xlabel("round born")
        ax.set_ylabel("generation (edits from the target world)")
    with figure(
        run_dir.plot_path("learnability"), title="DiCode archive over training (mean over seeds)"
    ) as (_f, ax):
        hist = [u["history"] for u in dicode]
        n = min(len(h) for h in hist)
        rounds = [hist[0][i]["round"] for i in range(n)]
        for key, color in (("mean_learnability", PALETTE[0]), ("max_learnability", PALETTE[1])):
            ax.plot(
                rounds,
                [np.mean([h[i][key] for h in hist]) for i in range(n)],
                color=color,
                label=key,
            )
        ax.set_xlabel("round")
        ax.set_ylabel("learnability p(1-p)")
        ax2 = ax.twinx()
        ax2.plot(
            rounds,
            [
                np.mean([h[i]["frontier_size"] / h[i]["archive_size"] for h in hist])
                for i in range(n)
            ],
            color=PALETTE[2],
            ls="--",
            label="frontier fraction",
        )
        ax2.set_ylabel("frontier fraction")
        ax.legend(loc="upper left")
        ax2.legend(loc="upper right")


# ------------------------------------------------------------------------ bench
def _best(fn: Any, repeats: int) -> float:
    import jax

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """World and PPO throughput, recompiles after warm-up, the dreamer's cost, Craftax-Classic."""
    import jax
    import jax.numpy as jnp

    from icml26.dicode.curriculum import DiCodeCurriculum, SlotStats
    from icml26.dicode.dreamer import MutationDreamer, random_program
    from icml26.dicode.ppo import PPO, PPOSettings
    from icml26.dicode.program import ProgramError, compile_program, target_program
    from icml26.dicode.training import ParamsCache, setup_compilation_cache
    from icml26.dicode.world import N_ACTIONS, reset, step_auto_reset

    setup_compilation_cache(config.compilation_cache)
    metrics: dict[str, Any] = {}
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
    rng = np.random.default_rng(config.seed)
    for _ in range(config.worlds):  # new dreamed worlds: must reuse the compiled rollout
        w = cache.batch([compile_program(random_program(rng))], n)
        jax.block_until_ready(rollout(state, jax.random.PRNGKey(3), w))
    env_recompiles = rollout._cache_size() - 1  # type: ignore[attr-defined]
    log(f"bench: world {metrics['env_steps_per_second.crafting_world']:.0f} steps/s")

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
        prog = None
        for _attempt in range(20):  # a rejected edit is counted, never replaced by the target
            try:
                prog = compile_program(dreamer.mutate(target, rng, {}, k=2)[0])
                break
            except ProgramError as exc:
                failed[exc.reason] = failed.get(exc.reason, 0) + 1
        if prog is None:
            raise RuntimeError(f"bench: 20 edits in a row were rejected ({failed})")
        w = cache.batch([prog] * settings.n_envs, 1)
        box["runner"], _ = ppo.train_chunk(
            box["runner"], w, jnp.asarray(np.arange(settings.n_envs) % 2 == i % 2)
        )
    jax.block_until_ready(box["runner"].params)
    metrics["recompiles_after_warmup"] = float(ppo.train_chunk._cache_size() - 1 + env_recompiles)
    metrics["bench_rejected_edits"] = float(sum(failed.values()))
    if failed:
        log(f"bench: {sum(failed.values())} dreamed edits rejected by the sandbox: {failed}")
    log(
        f"bench: PPO {metrics['ppo_env_steps_per_second']:.0f} steps/s, recompiles {metrics['recompiles_after_warmup']:.0f}"
    )

    # the dreamer's cost (selection + mutation + validation of 4 children) vs archive size
    for size in config.archive_sizes:
        cur = DiCodeCurriculum(dreamer, [target], n_slots=8, target_slots=2, children_per_round=4)
        while len(cur.archive) < size:
            e = cur.archive.add(target, parent=int(rng.integers(len(cur.archive))), born=0)
            e.update(SlotStats(10.0, float(rng.integers(0, 11)), 0.0, 0.0), 0, 1.0)
        start = time.perf_counter()
        for _ in range(5):
            cur.end_round({}, rng)
        metrics[f"dream_round_seconds.a{size}"] = (time.perf_counter() - start) / 5
    if config.craftax:
        from icml26.dicode.craftax_target import craftax_available, craftax_bench

        if craftax_available():
            metrics.update(craftax_bench(config))
        else:
            log("bench: craftax not installed (pip install 'icml26-dicode[craftax]'); skipped")
    return metrics
