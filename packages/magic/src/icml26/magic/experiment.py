"""``icml26 run magic``: the safety game, co-evolution and the baselines, as named stages.

1. ``judge``: the marker rule (and, with ``judge_model``, the rubric judge) scored on the
   shipped labelled set (:mod:`~icml26.magic.labelled`);
2. ``warm<s>`` (TORCH) for each seed: the warm-started adapters (and the tiny model's own
   weights), built when a defender's stage first needs that seed;
3. ``<defender>-seed<s>`` for each defender of ``config.defenders`` in that order (MAGIC
   first: the baselines take its step counts), every seed of one before the next
   (:func:`~icml26.magic.study.run_method`): trained from the seed's warm start (MAGIC's
   alternating GRPO, the defender first as the official code; each baseline with MAGIC's
   defender steps), scored on the fixed evaluation sets, attacked by an adaptive attacker;
   MAGIC's stage also samples its co-evolved and the SFT-only attacker against its
   defender. With ``budget_minutes``, a baseline whose remaining seeds do not all fit is
   skipped (MAGIC always runs) (:class:`~icml26.magic.budget.StageBudget`): its claims stay undecided;
4. ``large`` (``full``): MAGIC alone with LoRA on ``large_model`` (figures, no claim);
5. the seeds pooled over the defenders that finished every seed
   (:func:`~icml26.magic.summary.pool_seeds`: means, standard errors, paired gaps), each
   defender's measured seconds per training step and per seed, and the figures.

A killed run resumes at the first unfinished stage.
"""

from __future__ import annotations

from typing import Any

from icml26.magic.budget import StageBudget
from icml26.magic.config import RunConfig
from icml26.magic.figures import make_plots
from icml26.magic.labelled import judge_agreement
from icml26.magic.policies import Policies, load_warm, warm_weights
from icml26.magic.study import (
    large_model_magic,
    magic_step_counts,
    make_game,
    run_method,
    skeleton,
    warm_start,
)
from icml26.magic.summary import pool_seeds, stage_seconds
from icml26.shared import TORCH, RunDir, Stages, log

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The whole study (module docstring); returns the flat metrics."""
    stages = Stages(run_dir)
    budget = StageBudget(run_dir, config.budget_minutes)
    run_dir.update_env(device=config.device)
    game = make_game(config)
    judged = stages.once("judge", lambda: judge_agreement(config.judge_model))
    seeds = list(range(config.seed, config.seed + config.seeds))
    team: dict[str, Any] = {}  # the one model in memory: {"seed": s, "policies": Policies}
    weights: dict[int, Any] = {}

    def warm(s: int) -> dict[str, Any]:
        team.update(seed=s, policies=warm_start(config, game, s))
        return warm_weights(team["policies"], with_base=config.model == "tiny")

    def policies_for(s: int) -> Policies:
        if s not in weights:
            weights[s] = stages.once(f"warm{s}", lambda: warm(s), saver=TORCH)
        if team.get("seed") != s:
            if "policies" not in team or config.model == "tiny":  # the tiny base is per seed
                team["policies"] = skeleton(config, game, s)
            load_warm(team["policies"], weights[s])
            team["seed"] = s
        return team["policies"]

    results: dict[str, list[dict[str, Any]]] = {}
    for m in config.defenders:
        todo = [s for s in seeds if not stages.done(f"{m}-seed{s}")]
        cold = sum(not stages.done(f"warm{s}", TORCH) for s in todo)
        if m != "magic" and not budget.fits(m, todo, cold):  # MAGIC always runs
            log(f"{m}: {len(todo)} seeds do not fit the budget; skipped (claims undecided)")
            continue
        results[m] = []
        for s in seeds:
            if not stages.done(f"{m}-seed{s}"):
                policies_for(s)  # the warm start is its own stage, timed apart from this one
            counts = (
                (0, 0)  # MAGIC runs its own schedule
                if m == "magic"
                else magic_step_counts(config, results.get("magic", []), seeds.index(s))
            )
            results[m].append(
                stages.once(
                    f"{m}-seed{s}",
                    lambda m=m, s=s, c=counts: run_method(
                        config, game, policies_for(s), run_dir, m, s, c
                    ),
                )
            )
    per_seed = [
        {k: v for r in results.values() for k, v in r[i]["metrics"].items()}
        for i in range(len(seeds))
    ]
    metrics = pool_seeds(per_seed, list(results))
    metrics.update({k: float("nan") if v is None else v for k, v in judged["metrics"].items()})
    metrics.update(stage_seconds(run_dir.read_metrics(), results, config.defenders))
    if config.large_model:
        metrics.update(stages.once("large", lambda: large_model_magic(config, run_dir)))
    if "magic" in results:  # a leg of baselines alone (schedule "every") has no MAGIC figures
        run_dir.write_json(
            "compositions.json",
            {
                f"seed{s}": {"found": r["found"], "eval_sets": r["eval_sets"]}
                for s, r in zip(seeds, results["magic"], strict=True)
            },
        )
        make_plots(run_dir, results["magic"], metrics)
    return metrics
