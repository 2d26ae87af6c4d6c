"""``ours`` on a pretrained model with LoRA (``large_model``): reported, no claim."""

from __future__ import annotations

from icml26.adaptive_reasoning.config import AdaptiveConfig
from icml26.adaptive_reasoning.methods import (
    build_policy,
    eval_splits,
    train_grpo_stage,
    train_sft_stage,
    training_pools,
)

__all__ = ["large_stage"]


def large_stage(config: AdaptiveConfig) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Stage 1 and stage 2 of ``ours`` on ``config.large_model`` (first seed), then greedy
    per-item scores on ``large_eval_per_split`` held-out problems a split (``{"ours":
    {split: scores}}``, as :func:`~icml26.adaptive_reasoning.methods.evaluate_seed`)."""
    from icml26.adaptive_reasoning.evaluate import evaluate_method

    seed = config.seed
    pool = training_pools(config, seed)["augmented"][: 50 * config.large_sft_batch]
    sft_state = train_sft_stage(config, seed, "augmented", pool, large=True)
    out = train_grpo_stage(config, seed, "ours", sft_state, pool, large=True)
    policy = build_policy(config, seed, out["state"], model=config.large_model)
    splits = eval_splits(seed, config.large_eval_per_split)
    scores = evaluate_method(policy, splits, max_new_tokens=config.max_new_tokens, batch_size=32)
    return {"ours": {s: vars(v) for s, v in scores.items()}}
