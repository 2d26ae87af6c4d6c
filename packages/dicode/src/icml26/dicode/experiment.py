"""The ``icml26 run dicode`` job: a recipe of named stages (a killed run resumes).

1. ``units``: every (method, seed) trained with equal step budgets
   (:func:`~icml26.dicode.training.train_unit`; finished units are cached in ``<run>/units/``,
   unfinished ones checkpoint in ``<run>/checkpoints/``);
2. ``metrics``: the issue's metric keys (:func:`~icml26.dicode.summary.summarise`);
3. ``plots``: curves, achievement bars, lineage, learnability (:mod:`icml26.dicode.figures`);
4. ``craftax`` (``craftax=true``): ``ppo_target`` and ``dicode`` on Craftax-Classic over
   ``craftax_seeds`` seeds (:func:`~icml26.dicode.craftax_target.craftax_stage`), then
   ``craftax_plots``: their return curves from the cached units.

The bench is :func:`icml26.dicode.bench.bench`. The runner sets threads and the seed.
"""

from __future__ import annotations

from typing import Any

from icml26.dicode.config import RunConfig
from icml26.dicode.craftax_target import CRAFTAX_METHODS, craftax_stage
from icml26.dicode.figures import plot_craftax, plot_results
from icml26.dicode.ppo import PPO, compiled_versions
from icml26.dicode.summary import summarise
from icml26.dicode.training import (
    Evaluator,
    load_units,
    make_dreamer,
    ppo_settings,
    setup_compilation_cache,
    train_units,
)
from icml26.shared import RunDir, Stages, log

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Every method, every seed, equal step budgets; then metrics, plots, Craftax-Classic.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The metric dict (:func:`~icml26.dicode.summary.summarise`, plus
        ``recompiles_after_warmup`` and the ``craftax.*`` keys when ``craftax``).
    """
    run_dir.update_env(jax_compilation_cache=setup_compilation_cache(config.compilation_cache))
    log(
        f"dicode: {len(config.methods)} methods x {config.n_seeds} seeds, {config.rounds} rounds"
        f" x {config.steps_per_round} steps, dreamer {config.dreamer}, policy {config.policy}"
    )
    stages = Stages(run_dir)
    ppo = PPO(ppo_settings(config))
    # the jit cache is per process: count only this run's entries beyond its first compile
    # (0 when every unit was loaded from a finished run, or another run compiled these shapes)
    cached_before = compiled_versions(ppo.train_chunk)
    units = stages.once("units", lambda: _units(config, run_dir, ppo))
    metrics = stages.once("metrics", lambda: summarise(units, config))
    compiled = compiled_versions(ppo.train_chunk) - cached_before
    metrics["recompiles_after_warmup"] = float(max(0, compiled - 1))
    stages.once("plots", lambda: plot_results(run_dir, units) or True)
    if config.craftax:
        metrics |= stages.once("craftax", lambda: craftax_stage(config, run_dir))
        stages.once("craftax_plots", lambda: _craftax_plots(config, run_dir))
    return metrics


def _craftax_plots(config: RunConfig, run_dir: RunDir) -> bool:
    units = load_units(run_dir, CRAFTAX_METHODS, config.craftax_seeds, prefix="craftax.")
    plot_craftax(run_dir, units)
    return True


def _units(config: RunConfig, run_dir: RunDir, ppo: PPO) -> dict[str, list[dict[str, Any]]]:
    evaluator, dreamer = Evaluator(ppo, config.eval_episodes), make_dreamer(config)
    return train_units(config.methods, config.n_seeds, config, run_dir, ppo, evaluator, dreamer)
