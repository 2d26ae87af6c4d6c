"""ECG Diagnostic Evidence Rewards: diagnosis, evidence and format, per completion.

* diagnosis: Jaccard of the predicted and the true label sets;
* evidence: the share of the six protocol steps whose cited features agree with the
  measured ones within tolerance (:func:`~protocol.evidence_score`);
* format: 1 for ``<think>...</think><answer>labels</answer>`` with known labels only, 0.5
  when both blocks are there but something else is off, 0 otherwise.

:func:`ecg_rewards` has the signature of a TRL reward function returning named components;
:func:`reward_functions` splits it with the shared
:func:`icml26.shared.llm.grpo.reward_components` (one checked function per component, the
same functions TRL's ``GRPOTrainer`` would log).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icml26.ecg_r1.labels import Features, jaccard, labels_from_features
from icml26.ecg_r1.protocol import evidence_score, parse_interpretation

__all__ = ["REWARD_NAMES", "diagnosis_reward", "ecg_rewards", "evidence_reward", "format_reward", "reward_functions"]  # fmt: skip

REWARD_NAMES: tuple[str, ...] = ("diagnosis", "evidence", "format")


def diagnosis_reward(text: str, truth: Features) -> float:
    return jaccard(parse_interpretation(text).labels, labels_from_features(truth))


def evidence_reward(text: str, truth: Features) -> float:
    return evidence_score(parse_interpretation(text), truth)


def format_reward(text: str) -> float:
    p = parse_interpretation(text)
    if p.well_formed:
        return 1.0
    has = all(tag in text for tag in ("<think>", "</think>", "<answer>", "</answer>"))
    return 0.5 if has else 0.0


def ecg_rewards(
    prompts: Sequence[Any], completions: Sequence[str], *, features: Sequence[Features], **_: Any
) -> dict[str, Sequence[float]]:
    """The three components for each completion (``features``: each one's measured truth)."""
    if len(features) != len(completions):
        raise ValueError(f"{len(features)} feature records for {len(completions)} completions")
    return {
        "diagnosis": [diagnosis_reward(c, f) for c, f in zip(completions, features, strict=True)],
        "evidence": [evidence_reward(c, f) for c, f in zip(completions, features, strict=True)],
        "format": [format_reward(c) for c in completions],
    }


def reward_functions() -> list[Any]:
    """One checked reward function per component (shared ``reward_components``)."""
    from icml26.shared.llm.grpo import reward_components

    return reward_components(ecg_rewards, REWARD_NAMES)
