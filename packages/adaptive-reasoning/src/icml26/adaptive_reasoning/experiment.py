"""``icml26 run adaptive-reasoning``: a recipe of named stages (each resumes).

Per seed ``s`` (``config.seed`` .. ``+ seeds - 1``):

1. ``s<k>-data``: the augmented and natural training pools (training programs only) and the
   disjointness report against the held-out evaluation splits;
2. ``s<k>-sft-<kind>``: stage 1 for each kind of stage-1 data
   (:data:`~icml26.adaptive_reasoning.methods.SFT_KINDS`);
3. ``s<k>-grpo-<method>``: stage 2 for every method that has one
   (:data:`~icml26.adaptive_reasoning.methods.TRAINED`), each from its own stage-1 weights;
4. ``s<k>-evaluate``: greedy scores of every method on every held-out split.

Then ``large`` (optional: ``ours`` on a pretrained model with LoRA, first seed), the figures
(:mod:`~icml26.adaptive_reasoning.figures`) and the metrics
(:mod:`~icml26.adaptive_reasoning.tables`). The runner sets threads and the global seed.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from icml26.adaptive_reasoning.config import AdaptiveConfig
from icml26.adaptive_reasoning.figures import run_figures
from icml26.adaptive_reasoning.large import large_stage
from icml26.adaptive_reasoning.methods import (
    SFT_KINDS,
    TRAINED,
    data_report,
    eval_splits,
    evaluate_seed,
    train_grpo_stage,
    train_sft_stage,
    training_pools,
    wording_of,
    worst_over_seeds,
)
from icml26.adaptive_reasoning.tables import large_metrics, per_seed_figures, run_metrics
from icml26.shared import PICKLE, TORCH, RunDir, Stages

__all__ = ["run"]


def run(config: AdaptiveConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job: the stages above, then figures and metrics.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The flat metrics (:func:`~icml26.adaptive_reasoning.tables.run_metrics`).
    """
    stages = Stages(run_dir)
    splits = eval_splits(config.seed, config.eval_per_split)
    figures: list[dict[str, float]] = []
    histories: dict[str, list[dict[str, float]]] = {}
    report: dict[str, float] = {}
    for seed in range(config.seed, config.seed + config.seeds):
        pools = training_pools(config, seed)
        seen = stages.once(f"s{seed}-data", partial(data_report, pools, splits))
        report = worst_over_seeds(report, seen)
        sft = {
            kind: stages.once(
                f"s{seed}-sft-{kind}",
                partial(train_sft_stage, config, seed, kind, pools[pool]),
                saver=TORCH,
            )
            for kind, (pool, _) in SFT_KINDS.items()
        }
        states = {}
        for method, spec in TRAINED.items():
            if not spec.grpo:
                states[method] = sft[spec.sft]
                continue
            pool = pools[SFT_KINDS[spec.sft][0]]
            out = stages.once(
                f"s{seed}-grpo-{method}",
                partial(train_grpo_stage, config, seed, method, sft[spec.sft], pool),
                saver=PICKLE,
            )
            states[method], histories[f"{method}.s{seed}"] = out["state"], out["history"]
        scores = stages.once(
            f"s{seed}-evaluate",
            partial(evaluate_seed, config, seed, states, pools["natural"], splits),
        )
        figures.append(per_seed_figures(scores, config.token_cost, wording_of(splits)))
    metrics = run_metrics(figures, data=report, histories=histories)
    if config.large_model:
        large = stages.once("large", partial(large_stage, config))
        metrics.update(large_metrics(large, config.token_cost))
    run_figures(run_dir, metrics, histories)
    return metrics
