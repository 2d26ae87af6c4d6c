"""Retrieved tokens are masked: the loss's gradient with respect to the logits that predict
them is exactly zero; rewards and advantages follow the hybrid definition."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.decor.data.types import Question
from icml26.decor.episodes import Episode, Turn
from icml26.decor.marl import masked_policy_loss, pad_turns
from icml26.decor.rewards import (
    filter_intrinsic,
    hybrid_rewards,
    planner_intrinsic,
    role_advantages,
)


def test_gradient_wrt_retrieved_token_logits_is_zero() -> None:
    torch.manual_seed(0)
    # prompt of 3, completion: 2 policy tokens, 4 retrieved tokens, 2 policy tokens
    turn = Turn([5, 6, 7], [1, 2, 9, 9, 9, 9, 3, 4], [1, 1, 0, 0, 0, 0, 1, 1])
    batch = pad_turns([turn, Turn([5], [8, 2], [1, 1])], pad_id=0)
    logits = torch.randn(2, batch["input_ids"].shape[1], 12, requires_grad=True)
    loss = masked_policy_loss(
        logits, batch["input_ids"], batch["loss_mask"], torch.tensor([1.0, -0.5])
    )
    loss.backward()
    grad = logits.grad[0]
    # logits at t predict token t + 1; retrieved tokens sit at 5..8 of the full sequence
    for t in range(4, 8):
        assert torch.count_nonzero(grad[t]) == 0
    for t in (2, 3, 8, 9):  # the policy's own tokens get a gradient
        assert torch.count_nonzero(grad[t]) > 0
    assert torch.count_nonzero(grad[:2]) == 0  # the prompt is not trained either


def test_pad_turns_mask_lines_up() -> None:
    batch = pad_turns([Turn([1, 2], [3, 4, 5], [1, 0, 1])], pad_id=0)
    assert batch["loss_mask"].tolist() == [[0, 0, 1, 0, 1]]


def _episode(answer: str, queries: int, retrieved: list[list[str]], memory: list[str]) -> Episode:
    q = Question("x", "What is the capital of X?", ("Paris",), ("a", "b"), "hop2")
    return Episode(
        q, "decor", queries=["q"] * queries, retrieved=retrieved, memory=memory, answer=answer
    )


def test_intrinsic_signals_hand_cases() -> None:
    ep = _episode("Paris", 2, [["a", "z"], ["b"]], ["a", "b"])
    assert planner_intrinsic(ep) == 1.0
    assert filter_intrinsic(ep) == 1.0
    wasted = _episode("Paris", 4, [["a"], ["a"], ["z"], ["b"]], ["a", "b", "z"])
    assert planner_intrinsic(wasted) == pytest.approx(0.5)
    assert filter_intrinsic(wasted) == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))


def test_hybrid_reward_blends_and_outcome_only_ignores_intrinsic() -> None:
    eps = [_episode("Paris", 2, [["a"], ["b"]], ["a", "b"]), _episode("Rome", 1, [["z"]], [])]
    r = hybrid_rewards(eps, 0.5)
    np.testing.assert_allclose(r["planner"], [1.0, 0.0])
    np.testing.assert_allclose(r["answerer"], [1.0, 0.0])
    r0 = hybrid_rewards(eps, 0.0)
    for role in ("planner", "filter", "answerer"):
        np.testing.assert_allclose(r0[role], r0["em"])
    with pytest.raises(ValueError, match="w must be in"):
        hybrid_rewards(eps, 1.5)


def test_filter_gets_no_intrinsic_signal_when_no_gold_was_retrieved() -> None:
    # Keeping nothing when the search found no gold is neither rewarded nor punished: the
    # Filter's reward is the team outcome alone (no "keep nothing" attractor).
    keep_none = _episode("Rome", 1, [["z"]], [])
    keep_all = _episode("Rome", 1, [["z"]], ["z"])
    assert np.isnan(filter_intrinsic(keep_none))
    assert np.isnan(filter_intrinsic(keep_all))
    r = hybrid_rewards([keep_none, keep_all], 0.5)
    np.testing.assert_allclose(r["filter"], r["em"])
    # With gold retrieved, dropping it is punished.
    dropped = _episode("Rome", 1, [["a", "z"]], [])
    assert filter_intrinsic(dropped) == 0.0
    assert hybrid_rewards([dropped], 0.5)["filter"][0] == 0.0


def test_group_advantages_are_per_question() -> None:
    adv = role_advantages(np.array([1.0, 0.0, 5.0, 5.0]), 2)
    assert adv[0] > 0 > adv[1]
    np.testing.assert_allclose(adv[2:], 0.0)
