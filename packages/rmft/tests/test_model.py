"""The numerical Transformer: cache consistency, causality, arm-permutation equivariance."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26.rmft.envs import sample_instances
from icml26.rmft.model import (
    N_FEATURES,
    ArmTransformer,
    ModelConfig,
    TransformerPolicy,
    trajectory_features,
)
from icml26.rmft.rollouts import rollout


@pytest.fixture
def model() -> ArmTransformer:
    torch.manual_seed(0)
    return ArmTransformer(ModelConfig(d_model=16, n_layers=2, n_heads=2)).eval()


def _tokens(n: int, length: int, k: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, length, k, N_FEATURES, generator=g)


def test_incremental_decoding_equals_full_forward(model: ArmTransformer) -> None:
    x = _tokens(3, 9, 4)
    full, _ = model(x)
    cache, steps = None, []
    for t in range(9):
        logits, cache = model(x[:, t : t + 1], cache)
        steps.append(logits)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)
    # chunks of several positions too
    first, cache = model(x[:, :4])
    rest, _ = model(x[:, 4:], cache)
    torch.testing.assert_close(torch.cat([first, rest], dim=1), full, atol=1e-5, rtol=1e-5)


def test_cache_grows_in_place_and_still_equals_the_full_forward(model: ArmTransformer) -> None:
    # 40 steps: the buffers grow past their first capacity (16) twice; a 5-position chunk,
    # then one position at a time (the rollout's path: matmul attention on strided views)
    x = _tokens(2, 45, 3)
    full, _ = model(x)
    logits, cache = model(x[:, :5])
    steps = [logits]
    for t in range(5, 45):
        logits, cache = model(x[:, t : t + 1], cache)
        steps.append(logits)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)
    for keys, values in cache:
        assert keys.shape[2] == values.shape[2] == 45


def test_future_tokens_do_not_change_past_logits(model: ArmTransformer) -> None:
    x = _tokens(2, 8, 3)
    y = x.clone()
    y[:, 5:] = torch.rand_like(y[:, 5:])
    a, _ = model(x)
    b, _ = model(y)
    torch.testing.assert_close(a[:, :5], b[:, :5])
    assert not torch.allclose(a[:, 5:], b[:, 5:])


def test_permuting_arms_permutes_logits(model: ArmTransformer) -> None:
    x = _tokens(2, 6, 5)
    perm = torch.tensor([3, 0, 4, 1, 2])
    a, _ = model(x)
    b, _ = model(x[:, :, perm])
    torch.testing.assert_close(b, a[:, :, perm], atol=1e-5, rtol=1e-5)


def test_same_weights_play_any_k_and_t(model: ArmTransformer) -> None:
    for name in ("bernoulli_k2_t5", "bernoulli_k9_t40", "experts_k4_t7"):
        inst = sample_instances(name, 3, np.random.default_rng(0))
        trajs = rollout(TransformerPolicy(model), inst, np.random.default_rng(1))
        assert trajs.actions.shape == (3, inst.spec.horizon)


def test_trajectory_features_encode_bandit_and_full_feedback() -> None:
    actions = np.array([[2, 0, 1]])
    rewards = np.array([[1.0, 0.0, 1.0]])
    x = trajectory_features(actions, rewards, 3)
    assert x.shape == (1, 3, 3, N_FEATURES)
    assert x[0, 0, :, 0].tolist() == [1, 1, 1]  # start token
    assert x[0, 1, :, 1].tolist() == [0, 0, 1]  # step 0 chose arm 2
    assert x[0, 1, :, 3].tolist() == [0, 0, 1]  # and only it is observed
    full = np.array([[[0.2, 0.5, 1.0], [0.0, 0.3, 0.1], [1, 1, 1]]])
    xf = trajectory_features(actions, rewards, 3, full)
    assert xf[0, 2, :, 2].tolist() == [1, 1, 1]
    np.testing.assert_allclose(xf[0, 2, :, 3], [0.0, 0.3, 0.1])


def test_greedy_temperature_is_deterministic(model: ArmTransformer) -> None:
    inst = sample_instances("bernoulli_k3_t6", 4, np.random.default_rng(0))
    a = rollout(TransformerPolicy(model, temperature=0), inst, np.random.default_rng(1)).actions
    b = rollout(TransformerPolicy(model, temperature=0), inst, np.random.default_rng(2)).actions
    np.testing.assert_array_equal(a, b)


def test_bad_inputs_raise(model: ArmTransformer) -> None:
    with pytest.raises(ValueError, match="tokens must be"):
        model(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="K >= 2"):
        model(torch.zeros(1, 3, 1, N_FEATURES))
    bad = torch.zeros(1, 3, 2, N_FEATURES)
    bad[0, 1, 0, 3] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        model(bad)
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=10, n_heads=4)
    with pytest.raises(ValueError, match="temperature"):
        TransformerPolicy(model, temperature=-1)
    with pytest.raises(ValueError, match="temperature"):  # NaN would play arm 0 silently
        TransformerPolicy(model, temperature=float("nan"))
