"""``icml26 run decor``: the recipe (stages resume a killed run; the steps live in
:mod:`icml26.decor.study`).

Stages: ``warm<s>`` for each training seed (fresh policies, SFT on oracle traces; the weights,
TORCH), then ``<method>-seed<s>`` for each method of ``config.methods`` in that order, every
seed of a method before the next method (RL from the seed's warm start when the method is
trained, then evaluation on the same questions; JSON), then the metrics (means and paired
gaps over seeds x questions) and the plots.

Metric keys: ``em.<hops>.<method>``, ``f1.<hops>.<method>`` (``hops`` in ``hop1, hop2, hop3,
all``), ``filter_precision.<method>``, ``filter_recall.<method>``, ``context_tokens.<method>``
(tokens the answering policy reads when it answers), ``search_calls.<method>``,
``em_gap.<a>.<b>``, ``em_gap_se.<a>.<b>`` (paired over seeds x questions) and
``em_gap_margin.<a>.<b>`` (``t(0.975, df) * se``, ``df`` = ``em_gap_df.<a>.<b>``, Welch-
Satterthwaite over the seed and question parts), ``f1_differs.<a>.<b>``, ``seeds``,
``train_step_seconds.<method>``, ``method_seconds.<method>`` (wall seconds of one seed's
stage: RL and evaluation), ``warm_start_seconds`` and ``sft_final_loss.<policy>``
(which weights ran: the run folder's ``env.json``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.decor.config import DecorConfig
from icml26.decor.figures import plot_results
from icml26.decor.study import by_seed, combine, make_env, make_policies, run_method, warm_state
from icml26.shared import TORCH, RunDir, Stages, log

__all__ = ["run"]


def run(config: DecorConfig, run_dir: RunDir) -> dict[str, Any]:
    """The whole study (module docstring); returns the metrics."""
    stages = Stages(run_dir)
    env = make_env(config)
    log(f"decor: {len(env.train)} training and {len(env.test)} evaluation questions")
    seed_ids = range(config.seed, config.seed + config.seeds)
    warm = {
        s: stages.once(f"warm{s}", lambda s=s: warm_state(config, env, s), saver=TORCH)
        for s in seed_ids
    }
    team: dict[str, Any] = {}

    def method_on(method: str, s: int) -> dict[str, Any]:
        if not team:  # built once, only when a method stage really runs
            team.update(make_policies(config, env, config.seed))
        return run_method(config, env, team, method, s, warm[s])

    results = {
        m: [stages.once(f"{m}-seed{s}", lambda m=m, s=s: method_on(m, s)) for s in seed_ids]
        for m in config.methods
    }
    seeds = by_seed(results)
    metrics = combine(seeds)
    for method in seeds[0]["history"]:
        steps = [h["seconds"] for s in seeds for h in s["history"][method]]
        if steps:
            metrics[f"train_step_seconds.{method}"] = float(np.mean(steps))
    for policy in seeds[0]["sft_loss"]:
        metrics[f"sft_final_loss.{policy}"] = float(np.mean([s["sft_loss"][policy] for s in seeds]))
    metrics.update(_stage_seconds(run_dir), w=config.w, test_questions=len(env.test))
    metrics["train_questions"] = len(env.train)
    plot_results(run_dir, metrics, seeds)
    run_dir.write_json("samples.json", [x for s in seeds[:1] for x in s["samples"]])
    return metrics


def _stage_seconds(run_dir: RunDir) -> dict[str, float]:
    """Mean wall seconds per seed of the warm start and of each method's stage."""
    walls: dict[str, list[float]] = {}
    for rec in run_dir.read_metrics():
        name = str(rec.get("stage", ""))
        if name.startswith("warm"):
            walls.setdefault("warm_start_seconds", []).append(rec["wall_s"])
        elif "-seed" in name:
            walls.setdefault(f"method_seconds.{name.split('-seed')[0]}", []).append(rec["wall_s"])
    return {k: float(np.mean(v)) for k, v in walls.items()}
