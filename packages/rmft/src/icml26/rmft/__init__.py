"""Iterative regret-minimization fine-tuning (RMFT) for decision-making.

Environments with exact regret (:mod:`~icml26.rmft.envs`), classical baselines
(:mod:`~icml26.rmft.baselines`), the numerical Transformer policy (:mod:`~icml26.rmft.model`)
and its Iterative RMFT loop (:mod:`~icml26.rmft.rmft`), LLM policies
(:mod:`~icml26.rmft.llm_policy`) with LoRA RMFT (:mod:`~icml26.rmft.llm_rmft`).

Names are imported lazily, so ``import icml26.rmft`` (and the CLI's ``icml26 list``) does not
load torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "EnvSpec": "envs",
    "Instances": "envs",
    "parse_env": "envs",
    "sample_instances": "envs",
    "cumulative_regret": "envs",
    "UCB": "baselines",
    "ThompsonSampling": "baselines",
    "Greedy": "baselines",
    "EXP3": "baselines",
    "Hedge": "baselines",
    "RandomPolicy": "baselines",
    "Oracle": "baselines",
    "make_baseline": "baselines",
    "Policy": "rollouts",
    "Trajectories": "rollouts",
    "rollout": "rollouts",
    "select_lowest_regret": "selection",
    "ArmTransformer": "model",
    "ModelConfig": "model",
    "TransformerPolicy": "model",
    "sft": "train",
    "sft_data": "train",
    "sft_loss": "train",
    "RMFTSettings": "rmft",
    "numeric_rmft_iteration": "rmft",
    "weak_pretraining": "rmft",
    "LLMPolicy": "llm_policy",
    "parse_action": "llm_policy",
    "build_messages": "llm_policy",
    "SCENARIOS": "llm_policy",
    "LLMSettings": "llm_rmft",
    "llm_rmft_iteration": "llm_rmft",
    "write_openai_finetune_jsonl": "llm_rmft",
    "as_conversations": "llm_model",
    "make_tiny_policy_lm": "llm_model",
    "RMFTConfig": "config",
    "BenchConfig": "config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"icml26.rmft.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'icml26.rmft' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
