"""``icml26 bench adaptive-reasoning``: cost per solved problem, and GRPO throughput.

A small tiny-model run (stage 1 on the augmented pool, then ``grpo_steps`` of stage 2, timed),
then every mode-choosing method on the same weights over all splits:

* ``tokens_per_solved.<method>``: generated tokens over problems solved;
* ``seconds_per_solved.<method>``: wall seconds of generation over problems solved
  (``cpu_seconds_per_solved.<method>``: process CPU time, steadier on a shared machine);
* ``grpo_steps_per_s`` (and ``grpo_cpu_s_per_step``): stage-2 optimiser steps per second with
  the balanced guard, generation included.

``ours`` here is the GRPO'd tiny model choosing its own mode; ``always_think``,
``never_think`` and ``length_router`` force the mode on the same weights (as in the run).
"""

from __future__ import annotations

import time
from typing import Any

from icml26.adaptive_reasoning.config import BenchConfig
from icml26.shared import RunDir, seed_everything

__all__ = ["bench"]


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    import numpy as np
    import torch

    from icml26.adaptive_reasoning.baselines import always, fit_length_router
    from icml26.adaptive_reasoning.evaluate import evaluate_method
    from icml26.adaptive_reasoning.experiment import _rng, resolve_device
    from icml26.adaptive_reasoning.grpo import ModeGRPOSettings, train_mode_grpo
    from icml26.adaptive_reasoning.models import ModelSpec, build_model
    from icml26.adaptive_reasoning.policy import Policy
    from icml26.adaptive_reasoning.sft_data import (
        DataMix,
        augmented_problems,
        natural_problems,
        to_conversations,
    )
    from icml26.adaptive_reasoning.tasks import SPLITS, make_split
    from icml26.shared.llm.sft import SFTSettings, sft

    torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    run_dir.update_env(device=device, torch_threads=config.threads)
    seed_everything(config.seed, torch=True)
    spec = ModelSpec(hidden_size=config.hidden_size, num_layers=config.num_layers, device=device)
    model, tok = build_model(spec, seed=config.seed)
    pool = augmented_problems(config.train_problems, _rng(config.seed, "augmented"), DataMix())
    sft(model, tok, to_conversations(pool), SFTSettings(steps=config.sft_steps, lr=3e-3, batch_size=32, engine="loop"),
        rng=_rng(config.seed, "sft"))  # fmt: skip
    policy = Policy(model, tok)
    settings = ModeGRPOSettings(steps=config.grpo_steps)
    stats = train_mode_grpo(policy, pool, settings, rng=_rng(config.seed, "grpo"))
    metrics: dict[str, Any] = {
        "grpo_steps_per_s": config.grpo_steps / stats.seconds,
        "grpo_cpu_s_per_step": stats.cpu_seconds / config.grpo_steps,
        "tokens_per_solved": {},
        "seconds_per_solved": {},
        "cpu_seconds_per_solved": {},
        "solved": {},
    }
    splits = {s: make_split(s, config.eval_per_split, _rng(config.seed, "eval", s)) for s in SPLITS}
    natural = natural_problems(config.train_problems, _rng(config.seed, "natural"), DataMix())
    router = fit_length_router(natural, policy.prompt_length)
    policy.generate(splits["simple_concise"][:4], max_new_tokens=8)  # warm-up
    for method, choose in (
        ("ours", None),
        ("always_think", always("think")),
        ("never_think", always("no_think")),
        ("length_router", router),
    ):
        wall, cpu = time.perf_counter(), time.process_time()
        scores = evaluate_method(policy, splits, choose, max_new_tokens=40)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        solved = sum(sum(s.correct) for s in scores.values())
        tokens = sum(sum(s.tokens) for s in scores.values())
        denom = max(solved, 1.0)
        metrics["solved"][method] = float(solved)
        metrics["tokens_per_solved"][method] = tokens / denom
        metrics["seconds_per_solved"][method] = wall / denom
        metrics["cpu_seconds_per_solved"][method] = cpu / denom
    metrics["eval_problems"] = float(sum(len(v) for v in splits.values()))
    metrics["mean_reward_last"] = float(np.mean(stats.reward[-3:]))
    return metrics
