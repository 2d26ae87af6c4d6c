"""ECG Diagnostic Evidence Rewards: diagnosis, evidence and format, per completion.

* diagnosis: Jaccard of the predicted and the true label sets;
* evidence: the share of the six protocol steps whose cited features agree with the
  record's true features (the simulator's, in the study; whatever ``features`` column the
  caller gives, for real data) within tolerance (:func:`~protocol.evidence_score`);
* format: 1 for ``<think>...</think><answer>labels</answer>`` with known labels only, 0.5
  when both blocks are there but something else is off, 0 otherwise.

:func:`ecg_rewards` has the signature of a TRL reward function returning named components;
:func:`reward_functions` splits it with the shared
:func:`icml26.shared.llm.grpo.reward_components` (one checked function per component, the
same functions TRL's ``GRPOTrainer`` would log).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from icml26.ecg_r1.labels import Features, jaccard, labels_from_features
from icml26.ecg_r1.protocol import evidence_score, parse_interpretation
from icml26.shared.llm.grpo import completion_text, reward_components

__all__ = [
    "REWARD_NAMES",
    "diagnosis_reward",
    "ecg_rewards",
    "evidence_reward",
    "format_reward",
    "reward_functions",
]

REWARD_NAMES: tuple[str, ...] = ("diagnosis", "evidence", "format")


def _features(truth: Features | Mapping[str, Any]) -> Features:
    if isinstance(truth, Features):
        return truth
    if isinstance(truth, Mapping):
        return Features.from_mapping(truth)
    raise TypeError(f"features must be Features or a dict of them, got {type(truth).__name__}")


def diagnosis_reward(text: str, truth: Features | Mapping[str, Any]) -> float:
    """Jaccard of the answer's labels and the labels of ``truth`` (features or their dict)."""
    return jaccard(parse_interpretation(text).labels, labels_from_features(_features(truth)))


def evidence_reward(text: str, truth: Features | Mapping[str, Any]) -> float:
    """Share of the six protocol steps whose cited features agree with ``truth``."""
    return evidence_score(parse_interpretation(text), _features(truth))


def format_reward(text: str) -> float:
    """1 for a well-formed think/answer block with known labels, 0.5 for both blocks with
    something off, else 0."""
    p = parse_interpretation(text)
    if p.well_formed:
        return 1.0
    has = all(tag in text for tag in ("<think>", "</think>", "<answer>", "</answer>"))
    return 0.5 if has else 0.0


def ecg_rewards(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    *,
    features: Sequence[Features | Mapping[str, Any]],
    **_: Any,
) -> dict[str, list[float]]:
    """The three components for each completion, in TRL's reward shape.

    Args:
        prompts: the prompts (unused).
        completions: strings or chat messages (``[{"role": "assistant", "content": ...}]``).
        features: each completion's true features: :class:`Features` or the dict a
            ``datasets`` column holds (``Features.as_dict()``).
        **_: TRL's other reward keywords (ignored).

    Returns:
        ``{"diagnosis": [...], "evidence": [...], "format": [...]}``.

    Raises:
        ValueError: ``features`` and ``completions`` differ in length.
        TypeError: a feature record is neither :class:`Features` nor a dict.
    """
    if len(features) != len(completions):
        raise ValueError(f"{len(features)} feature records for {len(completions)} completions")
    texts = [completion_text(c) for c in completions]
    truths = [_features(f) for f in features]
    return {
        "diagnosis": [diagnosis_reward(c, f) for c, f in zip(texts, truths, strict=True)],
        "evidence": [evidence_reward(c, f) for c, f in zip(texts, truths, strict=True)],
        "format": [format_reward(c) for c in texts],
    }


def reward_functions(tokenizer: Any = None) -> list[Any]:
    """One checked TRL reward function per component (shared ``reward_components``).

    Args:
        tokenizer: when given, completions are decoded from TRL's ``completion_ids`` with the
            special tokens kept (TRL's text drops them, and ``<think>``, ``<answer>`` and the
            labels are special tokens of the tiny tokenizer, and of a checkpoint's with
            ``PolicySettings(markup="special")``).

    Returns:
        Three functions named ``diagnosis``, ``evidence``, ``format``.
    """
    if tokenizer is None:
        return reward_components(ecg_rewards, REWARD_NAMES)

    def decoded(
        prompts: Sequence[Any], completions: Sequence[Any], **kw: Any
    ) -> dict[str, list[float]]:
        ids = kw.pop("completion_ids", None)
        if ids is not None:
            completions = [tokenizer.decode(c, skip_special_tokens=False) for c in ids]
            eos = tokenizer.eos_token or ""
            completions = [c.split(eos)[0] if eos else c for c in completions]
        return ecg_rewards(prompts, completions, **kw)

    return reward_components(decoded, REWARD_NAMES)
