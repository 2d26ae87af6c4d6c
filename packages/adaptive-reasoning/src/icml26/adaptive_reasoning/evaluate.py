"""Scoring methods on the splits: accuracy, think rate, tokens, reasoning tokens, per item.

Every method answers the *same* held-out problems of every split (greedy decoding), so the
differences between methods are paired per item and per seed. Answers are compared by an
:class:`~icml26.adaptive_reasoning.answers.AnswerChecker`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from icml26.adaptive_reasoning.answers import AnswerChecker
from icml26.adaptive_reasoning.modes import Mode
from icml26.adaptive_reasoning.policy import Policy, Reply
from icml26.adaptive_reasoning.tasks import Problem

__all__ = ["MethodScores", "evaluate_method"]


@dataclass
class MethodScores:
    """One method on one split: per-item correctness, mode, tokens and operation counts."""

    correct: list[float]
    think: list[float]
    tokens: list[int]
    ops: list[int]
    reasoning: list[int] = field(default_factory=list)

    def reward(self, token_cost: float) -> float:
        """Mean of ``correct - token_cost * reasoning tokens`` (the stage-2 reward)."""
        return float(np.mean(self.correct) - token_cost * np.mean(self.reasoning))


def evaluate_method(
    policy: Policy,
    splits: Mapping[str, Sequence[Problem]],
    choose: Callable[[Sequence[Problem]], Sequence[Mode | None]] | None = None,
    *,
    max_new_tokens: int = 48,
    batch_size: int = 256,
    checker: AnswerChecker | None = None,
) -> dict[str, MethodScores]:
    """Greedy replies of ``policy`` on every split.

    Args:
        policy: the model.
        splits: problems by split name.
        choose: forces a mode per problem (``None``: the model chooses).
        max_new_tokens: reply length cap.
        batch_size: problems per generation batch.
        checker: how answers are compared (default :class:`AnswerChecker`).

    Returns:
        Per split, the per-item scores.
    """
    check = checker or AnswerChecker()
    out: dict[str, MethodScores] = {}
    for split, problems in splits.items():
        force = list(choose(problems)) if choose is not None else None
        replies: list[Reply] = policy.generate(
            problems, force=force, max_new_tokens=max_new_tokens, batch_size=batch_size
        )
        out[split] = MethodScores(
            correct=[
                float(check(r.answer, p.answer)) for r, p in zip(replies, problems, strict=True)
            ],
            think=[float(r.mode == "think") for r in replies],
            tokens=[r.tokens for r in replies],
            ops=[p.ops for p in problems],
            reasoning=[r.reasoning_tokens for r in replies],
        )
    return out
