"""Stage 2 on a toy: the mode-collapse guard revives a mode the policy no longer samples;
the policy wrapper's forced modes and log-probabilities."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.adaptive_reasoning.grpo import ModeGRPOSettings, train_mode_grpo
from icml26.adaptive_reasoning.models import ModelSpec, build_model
from icml26.adaptive_reasoning.policy import Policy, binary_entropy
from icml26.adaptive_reasoning.reward import RewardWeights
from icml26.adaptive_reasoning.tasks import make_split


@pytest.fixture(scope="module")
def toy() -> tuple[Policy, list]:
    model, tok = build_model(ModelSpec(hidden_size=32, num_layers=1, vocab_size=500), seed=0)
    pool = make_split("simple_concise", 8, np.random.default_rng(0)) + make_split(
        "complex_verbose", 8, np.random.default_rng(1)
    )
    return Policy(model, tok), pool


def test_forced_mode_is_the_first_token_and_logps_line_up(toy: tuple[Policy, list]) -> None:
    policy, pool = toy
    replies = policy.generate(
        pool[:4], force=["think", "no_think", "think", None], max_new_tokens=6
    )
    assert replies[0].ids[0] == policy.think_id
    assert replies[0].mode == "think"
    assert replies[1].ids[0] == policy.no_think_id
    assert replies[1].mode == "no_think"
    assert all(1 <= r.tokens <= 6 for r in replies)
    # a free reply also starts with a mode token: the model picks between the two
    assert replies[3].ids[0] in (policy.think_id, policy.no_think_id)
    prompts = [policy.prompt_ids(p) for p in pool[:4]]
    logps, mask, mode_logits = policy.token_logps(prompts, [r.ids for r in replies])
    assert logps.shape == mask.shape
    assert mode_logits.shape == (4, 2)
    assert torch.equal(mask.sum(1), torch.tensor([float(r.tokens) for r in replies]))
    # the first token's log-prob equals the independent single-sequence computation
    with torch.no_grad():
        ids = torch.tensor([prompts[0] + list(replies[0].ids)])
        ref = torch.log_softmax(policy.model(input_ids=ids).logits[0, len(prompts[0]) - 1], -1)
    assert logps[0, 0].item() == pytest.approx(ref[policy.think_id].item(), abs=1e-4)
    with pytest.raises(ValueError, match="unknown mode"):
        policy.generate(pool[:1], force=["maybe"])  # type: ignore[list-item]


def _collapse_to_no_think(policy: Policy, offset: float) -> torch.utils.hooks.RemovableHandle:
    """Shift the think logit down by ``offset`` everywhere: a policy collapsed to no-think."""

    def hook(_module: object, _inputs: object, out: torch.Tensor) -> torch.Tensor:
        out = out.clone()
        out[..., policy.think_id] -= offset
        return out

    return policy.model.lm_head.register_forward_hook(hook)


def test_balanced_guard_revives_thinking_on_complex_problems(toy: tuple[Policy, list]) -> None:
    policy, pool = toy
    state = {k: v.clone() for k, v in policy.model.state_dict().items()}
    handle = _collapse_to_no_think(policy, 8.0)
    try:
        before = policy.think_probability(pool)
        assert max(before) < 0.01  # collapsed: think is (almost) never sampled
        settings = ModeGRPOSettings(
            steps=25, prompts_per_step=8, num_generations=4, max_new_tokens=6, lr=3e-2,
            guard="balanced", weights=RewardWeights(correct=0.0, token=0.0, mode=1.0),
        )  # fmt: skip
        stats = train_mode_grpo(policy, pool, settings, rng=np.random.default_rng(0))
        after = np.array(policy.think_probability(pool))
    finally:
        handle.remove()
        policy.model.load_state_dict(state)
    complex_ = np.array([p.complex for p in pool])
    # both modes alive: thinking on complex prompts, not on simple ones
    assert after[complex_].mean() > 0.5 > after[~complex_].mean()
    assert stats.mode_entropy[-1] > stats.mode_entropy[0]
    assert len(stats.reward) == 25
    assert set(stats.components) == {"correct", "token_cost", "mode_penalty"}


def test_binary_entropy() -> None:
    assert binary_entropy(0.5) == pytest.approx(1.0)
    assert binary_entropy(0.0) == binary_entropy(1.0) == 0.0
    assert binary_entropy(0.11) == pytest.approx(binary_entropy(0.89))


def test_grpo_bad_input(toy: tuple[Policy, list]) -> None:
    policy, _ = toy
    with pytest.raises(ValueError, match="non-empty pool"):
        train_mode_grpo(policy, [], ModeGRPOSettings(steps=1), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="even"):
        ModeGRPOSettings(num_generations=3)
