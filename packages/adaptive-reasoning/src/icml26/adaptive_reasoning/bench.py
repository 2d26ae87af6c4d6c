"""``icml26 bench adaptive-reasoning``: cost per solved problem, and GRPO throughput.

A small tiny-model run (stage 1 on the augmented pool, then ``grpo_steps`` of stage 2 through
the shared TRL path, timed), then scored on every held-out split:

* ``tokens_per_solved.<method>``: generated tokens over problems solved, for ``ours``,
  ``sft_only`` (the stage-1 weights) and ``always_think`` (``ours``' weights, think forced);
* ``seconds_per_solved.<method>`` / ``cpu_seconds_per_solved.<method>``: generation time
  over problems solved (CPU time is steadier on a shared machine);
* ``grpo_steps_per_s`` and ``grpo_cpu_s_per_step``: stage-2 steps, generation included.
"""

from __future__ import annotations

import time
from typing import Any

from icml26.adaptive_reasoning.baselines import always
from icml26.adaptive_reasoning.config import AdaptiveConfig, BenchConfig
from icml26.adaptive_reasoning.evaluate import evaluate_method
from icml26.adaptive_reasoning.methods import (
    build_policy,
    eval_splits,
    train_grpo_stage,
    train_sft_stage,
    training_pools,
)
from icml26.shared import RunDir

__all__ = ["bench"]


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Time stage 2 and score cost per solved problem (see the module docstring).

    Args:
        config: the bench's config.
        run_dir: the run folder.

    Returns:
        The bench's metrics.
    """
    run = AdaptiveConfig(
        seed=config.seed,
        seeds=1,
        device=config.device,
        threads=config.threads,
        hidden_size=config.hidden_size,
        num_layers=config.num_layers,
        train_problems=config.train_problems,
        sft_steps=config.sft_steps,
        grpo_steps=config.grpo_steps,
        eval_per_split=config.eval_per_split,
    )
    pool = training_pools(run, config.seed)["augmented"]
    sft_state = train_sft_stage(run, config.seed, "augmented", pool)
    wall, cpu = time.perf_counter(), time.process_time()
    out = train_grpo_stage(run, config.seed, "ours", sft_state, pool)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    metrics: dict[str, Any] = {
        "grpo_steps_per_s": config.grpo_steps / wall,
        "grpo_cpu_s_per_step": cpu / max(config.grpo_steps, 1),
    }
    splits = eval_splits(config.seed, config.eval_per_split)
    ours = build_policy(run, config.seed, out["state"])
    plans = (
        ("ours", ours, None),
        ("always_think", ours, always("think")),
        ("sft_only", build_policy(run, config.seed, sft_state), None),
    )
    for method, policy, choose in plans:
        wall, cpu = time.perf_counter(), time.process_time()
        scores = evaluate_method(policy, splits, choose, max_new_tokens=run.max_new_tokens)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        solved = max(sum(sum(s.correct) for s in scores.values()), 1.0)
        tokens = sum(sum(s.tokens) for s in scores.values())
        metrics[f"solved.{method}"] = float(solved)
        metrics[f"tokens_per_solved.{method}"] = tokens / solved
        metrics[f"seconds_per_solved.{method}"] = wall / solved
        metrics[f"cpu_seconds_per_solved.{method}"] = cpu / solved
    return metrics
