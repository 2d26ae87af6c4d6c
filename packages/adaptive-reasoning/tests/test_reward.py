"""The reward's components on hand-written completions."""

from __future__ import annotations

import pytest

from icml26.adaptive_reasoning.modes import parse_reply
from icml26.adaptive_reasoning.policy import Reply
from icml26.adaptive_reasoning.reward import RewardWeights, reward_components, total_reward
from icml26.adaptive_reasoning.tasks import Problem

SIMPLE = Problem("Tom has 5 apples. Tom gets 3 more. How many apples?", 8, 1, False)
COMPLEX = Problem("Tom has 5. gets 3. loses 2. gets 4. How many?", 10, 3, True)


def _reply(text: str, reasoning_tokens: int) -> Reply:
    p = parse_reply(text)
    return Reply((0,), text, p.mode, p.answer, reasoning_tokens)


def test_components_on_hand_written_replies() -> None:
    w = RewardWeights(correct=1.0, token=0.01, mode=0.5)
    problems = [SIMPLE, SIMPLE, COMPLEX, COMPLEX, COMPLEX, SIMPLE]
    replies = [
        _reply("<no_think>8", 0),  # right mode, right answer
        _reply("<think>5+3=8,</think>8", 6),  # right answer, overthinks
        _reply("<think>5+3=8,8-2=6,6+4=10,</think>10", 18),  # ideal for complex
        _reply("<no_think>10", 0),  # right answer by luck, wrong mode
        _reply("<think>5+3=8,8-2=6", 10),  # unclosed: wrong, pays its tokens
        _reply("8", 0),  # no mode token: counts as the wrong mode
    ]
    c = reward_components(problems, replies, w)
    assert c["correct"] == [1, 1, 1, 1, 0, 0]
    assert c["token_cost"] == pytest.approx([0, -0.06, -0.18, 0, -0.10, 0])
    assert c["mode_penalty"] == [0, -0.5, 0, -0.5, 0, -0.5]
    total = total_reward(c)
    assert total == pytest.approx([1, 0.44, 0.82, 0.5, -0.10, -0.5])
    # the ordering the reward is for: on a simple problem no-think beats think; on a complex
    # one, correct thinking beats a lucky direct answer
    assert total[0] > total[1]
    assert total[2] > total[3]


def test_bad_weights_and_lengths() -> None:
    with pytest.raises(ValueError, match="reward weight token"):
        RewardWeights(token=-1)
    with pytest.raises(ValueError, match="reward weight mode"):
        RewardWeights(mode=float("nan"))
    with pytest.raises(ValueError, match="2 replies for 1 problems"):
        reward_components([SIMPLE], [_reply("<no_think>8", 0)] * 2, RewardWeights())
