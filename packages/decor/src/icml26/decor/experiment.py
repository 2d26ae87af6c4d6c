"""``icml26 run decor``: the recipe (stages resume a killed run; the steps live in
:mod:`icml26.decor.study`).

Stages: ``seed<s>`` for each training seed (warm start, RL of every trained method,
evaluation of every method on the same questions; JSON), then ``metrics`` (means and paired
gaps over seeds x questions) and the plots.

Metric keys: ``em.<hops>.<method>``, ``f1.<hops>.<method>`` (``hops`` in ``hop1, hop2, hop3,
all``), ``filter_precision.<method>``, ``filter_recall.<method>``, ``context_tokens.<method>``
(tokens the answering policy reads when it answers), ``search_calls.<method>``,
``em_gap.<a>.<b>``, ``em_gap_se.<a>.<b>`` (paired over seeds x questions) and
``em_gap_margin.<a>.<b>`` (``t(0.975, seeds - 1) * se``), ``seeds``,
``train_step_seconds.<method>`` and ``sft_final_loss.<policy>``
(which weights ran: the run folder's ``env.json``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.decor.config import DecorConfig
from icml26.decor.figures import plot_results
from icml26.decor.study import combine, make_env, run_seed
from icml26.shared import JSON, RunDir, Stages, log

__all__ = ["run"]


def run(config: DecorConfig, run_dir: RunDir) -> dict[str, Any]:
    """The whole study (module docstring); returns the metrics."""
    stages = Stages(run_dir)
    env = make_env(config)
    log(f"decor: {len(env.train)} training and {len(env.test)} evaluation questions")
    seeds = [
        stages.once(f"seed{s}", lambda s=s: run_seed(config, env, s), saver=JSON)
        for s in range(config.seed, config.seed + config.seeds)
    ]
    metrics = combine(seeds)
    for method in seeds[0]["history"]:
        steps = [h["seconds"] for s in seeds for h in s["history"][method]]
        if steps:
            metrics[f"train_step_seconds.{method}"] = float(np.mean(steps))
    for policy in seeds[0]["sft_loss"]:
        metrics[f"sft_final_loss.{policy}"] = float(np.mean([s["sft_loss"][policy] for s in seeds]))
    metrics.update(w=config.w, test_questions=len(env.test), train_questions=len(env.train))
    plot_results(run_dir, metrics, seeds)
    run_dir.write_json("samples.json", [x for s in seeds[:1] for x in s["samples"]])
    return metrics
