"""Verbosity-robust adaptive reasoning: think or answer directly by *true* complexity.

Tasks with a wording-independent complexity and the verbosity transform
(:mod:`~icml26.adaptive_reasoning.tasks`), the two modes and reply parsing
(:mod:`~icml26.adaptive_reasoning.modes`), stage 1 data with the augmentation
(:mod:`~icml26.adaptive_reasoning.sft_data`), the stage-2 reward
(:mod:`~icml26.adaptive_reasoning.reward`) and GRPO with a mode-collapse guard
(:mod:`~icml26.adaptive_reasoning.grpo`), the policy wrapper
(:mod:`~icml26.adaptive_reasoning.policy`), baselines and scoring.

Names are imported lazily, so ``import icml26.adaptive_reasoning`` does not load torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Problem": "tasks",
    "ProblemError": "tasks",
    "SPLITS": "tasks",
    "make_split": "tasks",
    "mixture": "tasks",
    "verbose": "tasks",
    "concise": "tasks",
    "think_trace": "tasks",
    "load_problems": "tasks",
    "parse_reply": "modes",
    "ParsedReply": "modes",
    "THINK": "modes",
    "NO_THINK": "modes",
    "THINK_END": "modes",
    "DataMix": "sft_data",
    "augmented_problems": "sft_data",
    "natural_problems": "sft_data",
    "to_conversations": "sft_data",
    "RewardWeights": "reward",
    "reward_components": "reward",
    "total_reward": "reward",
    "ModeGRPOSettings": "grpo",
    "train_mode_grpo": "grpo",
    "Policy": "policy",
    "Reply": "policy",
    "ModelSpec": "models",
    "build_model": "models",
    "LengthRouter": "baselines",
    "fit_length_router": "baselines",
    "always": "baselines",
    "evaluate_method": "evaluate",
    "paired_difference": "evaluate",
    "wilson_interval": "evaluate",
    "AdaptiveConfig": "config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'icml26.adaptive_reasoning' has no attribute {name!r}")
    return getattr(importlib.import_module(f"icml26.adaptive_reasoning.{_EXPORTS[name]}"), name)
