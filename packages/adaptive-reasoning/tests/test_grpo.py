"""Stage 2: the reward reads correctness and reasoning cost only, the rollout balances the
modes per group, and GRPO runs through the shared TRL path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from icml26.adaptive_reasoning.answers import AnswerChecker
from icml26.adaptive_reasoning.grpo import (
    ModeGRPOSettings,
    grpo_dataset,
    rollout_batch,
    train_mode_grpo,
)
from icml26.adaptive_reasoning.models import ModelSpec, build_model
from icml26.adaptive_reasoning.modes import direct_target, think_target
from icml26.adaptive_reasoning.policy import Policy
from icml26.adaptive_reasoning.reward import adaptive_reward, reply_reward
from icml26.adaptive_reasoning.tasks import make_split


@pytest.fixture(scope="module")
def toy() -> tuple[Policy, list]:
    model, tok = build_model(ModelSpec(hidden_size=32, num_layers=1, vocab_size=500), seed=0)
    pool = make_split("simple_concise", 4, np.random.default_rng(0)) + make_split(
        "complex_verbose", 4, np.random.default_rng(1)
    )
    return Policy(model, tok), pool


def _ids(policy: Policy, text: str) -> list[int]:
    return [*policy.tokenizer.encode(text, add_special_tokens=False), policy.eos_id]


def test_reward_on_hand_written_completions(toy: tuple[Policy, list]) -> None:
    policy, _ = toy
    reward = adaptive_reward(policy)
    completions = [
        direct_target(8),  # right, free
        think_target("5+3=8,", 8),  # right, pays its reasoning
        think_target("5+3=8,8-2=6,", 7),  # wrong, pays
        "8",  # no mode token: no answer
    ]
    ids = [_ids(policy, c) for c in completions]
    out = reward(prompts=[None] * 4, completions=completions, completion_ids=ids, answer=["8"] * 4)
    assert out["correct"] == [1.0, 1.0, 0.0, 0.0]
    assert out["reasoning_cost"][0] == 0.0
    assert out["reasoning_cost"][3] == 0.0
    assert out["reasoning_cost"][2] < out["reasoning_cost"][1] < 0
    # the single-reply figure agrees, and on a problem a direct answer gets right, no-think
    # earns more than think (the cost is the only difference)
    r = [reply_reward(policy.read(i), "8", checker=AnswerChecker(), token_cost=0.01) for i in ids]
    assert r[0] > r[1] > 0 > r[2]


def test_no_complexity_label_reaches_stage_2(toy: tuple[Policy, list]) -> None:
    """The dataset TRL sees has the prompt and the answer only; flipping every complexity
    label (and the operation counts) changes nothing the trainer or the reward reads."""
    _, pool = toy
    rows = grpo_dataset(pool)
    assert all(set(r) == {"prompt", "answer"} for r in rows)
    flipped = [dataclasses.replace(p, complex=not p.complex, program=(), ops=9) for p in pool]
    assert grpo_dataset(flipped) == rows


def test_balanced_rollout_forces_half_of_each_group(toy: tuple[Policy, list]) -> None:
    policy, pool = toy
    settings = ModeGRPOSettings(num_generations=4, max_new_tokens=6)
    prompts = [row["prompt"] for row in grpo_dataset(pool[:2]) for _ in range(4)]
    out = rollout_batch(policy, prompts, settings)
    firsts = [ids[0] for ids in out["completion_ids"]]
    t, n = policy.think_id, policy.no_think_id
    assert firsts == [t, t, n, n, t, t, n, n]
    assert out["prompt_ids"][0] == policy.prompt_ids(pool[0])
    assert ModeGRPOSettings(guard="none").forced_modes(3) == [None] * 3
    assert ModeGRPOSettings(force="think").forced_modes(2) == ["think", "think"]
    with pytest.raises(ValueError, match="consecutive copies"):
        rollout_batch(policy, prompts[1:] + prompts[:1], settings)


def test_train_mode_grpo_runs_on_the_shared_trainer(toy: tuple[Policy, list]) -> None:
    policy, pool = toy
    before = {k: v.clone() for k, v in policy.model.state_dict().items()}
    settings = ModeGRPOSettings(steps=2, prompts_per_step=2, num_generations=4, max_new_tokens=8)
    history = train_mode_grpo(policy, pool, settings)
    assert len(history) == 2
    assert {"reward", "rewards/correct/mean", "rewards/reasoning_cost/mean"} <= set(history[-1])
    after = policy.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    policy.model.load_state_dict(before)


def test_grpo_bad_input(toy: tuple[Policy, list]) -> None:
    policy, _ = toy
    with pytest.raises(ValueError, match="non-empty"):
        train_mode_grpo(policy, [], ModeGRPOSettings(steps=1))
    with pytest.raises(ValueError, match="even"):
        ModeGRPOSettings(num_generations=3)
    with pytest.raises(ValueError, match="force"):
        ModeGRPOSettings(force="maybe")  # type: ignore[arg-type]
