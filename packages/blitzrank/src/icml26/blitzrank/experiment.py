"""The main job (``icml26 run blitzrank``): a recipe of named stages, each one task.

Stages (each skipped when its size is 0; a killed run resumes at the first unfinished one):

1. ``sim_<noise>``: simulated reranking per noise; then the realistic-oracle spectrum
   (``sim_persist<pct>``, ``sim_position``) and the ``noise_sweep``
   (:mod:`icml26.blitzrank.tasks.simulated`);
2. ``calls_perfect`` and ``sim_cyclic``: certification with a perfect oracle, and on a
   budget under cycles (:mod:`icml26.blitzrank.tasks.certification`);
3. ``minilm``: the real-model oracle (:mod:`icml26.blitzrank.tasks.minilm`);
4. ``llm``: real text reranked by a language model (:mod:`icml26.blitzrank.tasks.llm`).

Figures (:mod:`icml26.blitzrank.figures`) and the metric tree (:mod:`icml26.blitzrank.tables`)
follow from the stages' values. The runner sets threads and the seed from the config.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.evaluate import TaskResult
from icml26.blitzrank.figures import run_figures
from icml26.blitzrank.tables import run_metrics
from icml26.blitzrank.tasks.certification import cyclic_task, perfect_calls
from icml26.blitzrank.tasks.llm import llm_task
from icml26.blitzrank.tasks.minilm import run_minilm_tasks
from icml26.blitzrank.tasks.simulated import noise_sweep, sim_task, spectrum_task, spectrum_tasks
from icml26.shared import RunDir, Stages

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job: the stages above, then figures and metrics.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The metric tree (:func:`~icml26.blitzrank.tables.run_metrics`).
    """
    stages = Stages(run_dir)
    tasks: dict[str, TaskResult] = {}
    if config.sim_queries:
        for noise in config.noises:
            tasks[f"sim_{noise}"] = stages.once(f"sim_{noise}", partial(sim_task, config, noise))
    for name in spectrum_tasks(config):
        tasks[name] = stages.once(name, partial(spectrum_task, config, name))
    sweep: dict[str, TaskResult] | None = None
    perfect: dict[str, dict[str, float]] | None = None
    cyclic: dict[str, Any] | None = None
    llm: dict[str, Any] | None = None
    if config.sweep_queries and config.sweep_temperatures:
        sweep = stages.once("noise_sweep", partial(noise_sweep, config))
    if config.perfect_seeds:
        perfect = stages.once("calls_perfect", partial(perfect_calls, config))
    if config.cyclic_queries:
        cyclic = stages.once("sim_cyclic", partial(cyclic_task, config))
    if config.minilm_queries:
        minilm = stages.once("minilm", partial(run_minilm_tasks, config))
        run_dir.update_env(**minilm["info"])
        tasks.update(minilm["tasks"])
    if config.llm_queries:
        llm = stages.once("llm", partial(llm_task, config))
        run_dir.update_env(**llm["info"])
        tasks[llm["task"]] = llm["res"]
    run_figures(run_dir, tasks, perfect=perfect, sweep=sweep)
    return run_metrics(tasks, perfect=perfect, cyclic=cyclic, sweep=sweep, llm=llm)
