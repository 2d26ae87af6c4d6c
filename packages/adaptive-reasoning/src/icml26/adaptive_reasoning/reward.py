"""The stage-2 reward: correctness and the cost of reasoning, nothing else.

For a reply ``o`` to a problem with gold answer ``y``:

    r(o) = 1[check(answer(o), y)] - w_token * (reasoning tokens of o)

No complexity label, operation count or "right mode" enters: the mode choice is learnt from
accuracy and cost alone, as AdaptThink and Thinkless learn it (a think reply pays for its
reasoning; on a problem a direct answer gets right, no-think earns more). A reply with no
answer is wrong; a no-think reply has no reasoning tokens.

:func:`adaptive_reward` gives the two components in TRL's shape (``f(prompts, completions,
completion_ids, answer, **columns)``): pass them with ``reward_weights=(1, w_token)`` to
:func:`icml26.shared.llm.grpo.train_grpo`, which logs each (``rewards/correct/mean``,
``rewards/reasoning_cost/mean``). :func:`reply_reward` is the same figure for one reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from icml26.adaptive_reasoning.answers import AnswerChecker
from icml26.adaptive_reasoning.policy import Policy, Reply

__all__ = ["COMPONENTS", "adaptive_reward", "reply_reward"]

COMPONENTS = ("correct", "reasoning_cost")


def reply_reward(
    reply: Reply, gold: str | int, *, checker: AnswerChecker, token_cost: float
) -> float:
    """``1[correct] - token_cost * reasoning_tokens`` of one reply.

    Args:
        reply: the reply.
        gold: the problem's answer.
        checker: how answers are compared.
        token_cost: the cost per reasoning token (``>= 0``).

    Returns:
        The reward.
    """
    return float(checker(reply.answer, gold)) - token_cost * reply.reasoning_tokens


def adaptive_reward(
    policy: Policy, checker: AnswerChecker | None = None
) -> Callable[..., dict[str, list[float]]]:
    """The reward's components for a batch, in TRL's shape (reads the ``answer`` column).

    Args:
        policy: reads completion token ids back as replies (mode tokens kept; TRL's decoded
            text drops special tokens, so the ids are read, not the text).
        checker: how answers are compared (default: numeric within ``1e-6``, else exact).

    Returns:
        ``f(prompts, completions, completion_ids, answer, **kw) -> {"correct": [0/1...],
        "reasoning_cost": [-tokens...]}``; wrap it with
        :func:`icml26.shared.llm.grpo.reward_components` for TRL.
    """
    check = checker or AnswerChecker()

    def compute(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]],
        answer: Sequence[str],
        **_: Any,
    ) -> dict[str, list[float]]:
        replies = [policy.read(ids) for ids in completion_ids]
        return {
            "correct": [float(check(r.answer, a)) for r, a in zip(replies, answer, strict=True)],
            "reasoning_cost": [-float(r.reasoning_tokens) for r in replies],
        }

    return compute
