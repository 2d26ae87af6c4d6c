"""The stage-2 reward: correctness, a cost on reasoning tokens, a penalty for the wrong mode.

For a reply ``o`` to problem ``q`` with true complexity ``c(q)`` (think needed or not):

    r(o) = w_correct * 1[answer(o) = answer(q)]
         - w_token   * (reasoning tokens of o)
         - w_mode    * 1[mode(o) != mode*(q)],     mode*(q) = think if c(q) else no_think

A reply with no mode token counts as the wrong mode; an unparsable answer is wrong. The token
cost makes no-think preferable whenever it is as accurate (simple problems); the mode penalty
is the paper's push towards choosing the mode by the *true* complexity, not the wording.
Each component is returned separately (logged per GRPO step).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from icml26.adaptive_reasoning.policy import Reply
from icml26.adaptive_reasoning.tasks import Problem

__all__ = ["COMPONENTS", "RewardWeights", "reward_components", "total_reward"]

COMPONENTS = ("correct", "token_cost", "mode_penalty")


@dataclass(frozen=True)
class RewardWeights:
    """``w_correct``, ``w_token`` (per reasoning token), ``w_mode``; all >= 0."""

    correct: float = 1.0
    token: float = 0.004
    mode: float = 0.5

    def __post_init__(self) -> None:
        for name in ("correct", "token", "mode"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise ValueError(f"reward weight {name} must be a finite number >= 0, got {v!r}")


def reward_components(
    problems: Sequence[Problem], replies: Sequence[Reply], weights: RewardWeights
) -> dict[str, list[float]]:
    """The three signed components per reply (``correct >= 0``, the others ``<= 0``)."""
    if len(problems) != len(replies):
        raise ValueError(f"{len(replies)} replies for {len(problems)} problems")
    out: dict[str, list[float]] = {c: [] for c in COMPONENTS}
    for p, r in zip(problems, replies, strict=True):
        wanted = "think" if p.complex else "no_think"
        out["correct"].append(weights.correct * float(r.answer == p.answer))
        out["token_cost"].append(-weights.token * r.reasoning_tokens)
        out["mode_penalty"].append(-weights.mode * float(r.mode != wanted))
    return out


def total_reward(components: dict[str, list[float]]) -> list[float]:
    """The sum of the components, per reply."""
    return [sum(vals) for vals in zip(*(components[c] for c in COMPONENTS), strict=True)]
