"""``icml26 run rmft``: a recipe of named stages (:class:`icml26.shared.Stages`).

1. ``baselines``: the classical algorithms on every evaluation environment;
2. each numerical Transformer (:func:`~icml26.rmft.study.numeric_settings`: the main model,
   the non-stationary and experts models when set): ``<tag>_base`` (weak pretraining), the
   RMFT iterations ``<tag>_iter<i>`` and the random-selection control ``<tag>_random_iter<i>``;
3. the LLM (when ``llm_model`` or ``llm_endpoint`` is set): ``llm_base``, ``llm_iter<i>``,
   ``llm_random_iter<i>``;
4. metrics (:func:`~icml26.rmft.metrics.summary_metrics`), tables and figures.

A killed run resumes at the first unfinished stage.
"""

from __future__ import annotations

from typing import Any

from icml26.rmft.config import RunConfig
from icml26.rmft.figures import plot_figures
from icml26.rmft.metrics import summary_metrics
from icml26.rmft.study import (
    Results,
    evaluation_instances,
    numeric_settings,
    resolve_device,
    run_baselines,
    run_llm,
    run_numeric,
)
from icml26.rmft.tables import write_tables
from icml26.shared import RunDir, Stages

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job (see the module docstring).

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The metrics mapping (see :mod:`icml26.rmft.metrics`).
    """
    device = resolve_device(config.device)
    run_dir.update_env(device=device)
    stages = Stages(run_dir)
    settings = numeric_settings(config)
    llm_envs = [e for e in (config.llm_env, config.llm_nl_env) if e and config.llm_enabled]
    envs = {
        **{e: i for s in settings for e, i in s.envs.items()},
        **evaluation_instances(config, llm_envs, config.llm_eval_instances),
    }
    results: Results = {}
    train: dict[str, Any] = {}

    def merge(new: Results, stats: dict[str, Any]) -> None:
        for env, policies in new.items():
            results.setdefault(env, {}).update(policies)
        train.update(stats)

    merge(run_baselines(stages, config, envs), {})
    for setting in settings:
        merge(*run_numeric(stages, config, setting, device))
    if config.llm_enabled:
        merge(*run_llm(stages, config, device, run_dir.path))
    metrics = summary_metrics(config, results, train)
    metrics["seconds"] = {k: v["wall_s"] for k, v in stages.timings.items()}
    write_tables(run_dir, results)
    plot_figures(run_dir, config, results)
    return metrics
