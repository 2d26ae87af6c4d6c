"""``icml26 run magic``: the safety game, co-evolution and the baselines, as named stages.

1. ``seed<k>`` for each of ``config.seeds`` replicates (:func:`~icml26.magic.study.replicate`):
   warm start; MAGIC's alternating GRPO (the defender first, as the official code); every
   baseline with MAGIC's number of defender steps; every defender on the fixed evaluation
   sets; an adaptive attacker against each; the co-evolved and the SFT-only attacker
   against the co-evolved defender;
2. ``large`` (``full``): MAGIC alone with LoRA on ``large_model`` (figures, no claim);
3. the seeds pooled (:func:`~icml26.magic.summary.pool_seeds`: means, standard errors,
   paired gaps) and the figures.

Each stage is saved under ``<run>/stages/``: a killed run resumes at the first unfinished
replicate.
"""

from __future__ import annotations

from typing import Any

from icml26.magic.config import DEFENDERS, RunConfig
from icml26.magic.figures import make_plots
from icml26.magic.study import large_model_magic, replicate
from icml26.magic.summary import pool_seeds
from icml26.shared import RunDir, Stages

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Every replicate, pooled; returns the flat metrics.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The pooled metrics (means, ``se.*``, ``gap.*``, ``seeds``).
    """
    stages = Stages(run_dir)
    run_dir.update_env(device=config.device)
    replicates = [
        stages.once(f"seed{k}", lambda k=k: replicate(config, config.seed + k, run_dir))
        for k in range(config.seeds)
    ]
    defenders = [d for d in DEFENDERS if d in config.defenders]
    metrics = pool_seeds([r["metrics"] for r in replicates], defenders)
    run_dir.write_json(
        "compositions.json",
        {
            f"seed{k}": {"found": r["found"], "eval_sets": r["eval_sets"]}
            for k, r in enumerate(replicates)
        },
    )
    if config.large_model:
        metrics.update(stages.once("large", lambda: large_model_magic(config, run_dir)))
    make_plots(run_dir, replicates, metrics)
    return metrics
