"""PPO's pieces against direct computations: the clipped loss, GAE, the KL."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.syvla import ppo as ppo_module
from icml26.syvla.data import TextBank, VecEnv, all_instructions
from icml26.syvla.guidance import SuccessBuffer
from icml26.syvla.model import ModelConfig, SyVLA
from icml26.syvla.ppo import RLConfig, clipped_policy_loss, gae, minibatches, policy_kl
from icml26.syvla.vqa import question_texts


@settings(max_examples=30, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.floats(-3, 0), st.floats(-3, 0), st.floats(-5, 5, allow_subnormal=False)),
        min_size=1,
        max_size=12,
    ),
    clip=st.sampled_from([0.1, 0.2, 0.3]),
)
def test_clipped_loss_matches_a_direct_computation(
    data: list[tuple[float, float, float]], clip: float
) -> None:
    new = torch.tensor([d[0] for d in data], dtype=torch.float64)
    old = torch.tensor([d[1] for d in data], dtype=torch.float64)
    adv = torch.tensor([d[2] for d in data], dtype=torch.float64)
    expected = 0.0
    for lp_new, lp_old, a in data:
        r = math.exp(lp_new - lp_old)
        rc = min(max(r, 1 - clip), 1 + clip)
        expected += min(r * a, rc * a)
    expected = -expected / len(data)
    assert float(clipped_policy_loss(new, old, adv, clip)) == pytest.approx(
        expected, rel=1e-9, abs=1e-12
    )


def test_clipping_stops_the_gradient_past_the_trust_region() -> None:
    old = torch.zeros(2, dtype=torch.float64)
    new = torch.tensor([0.5, -0.5], dtype=torch.float64, requires_grad=True)  # ratios e^±0.5
    adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
    clipped_policy_loss(new, old, adv, 0.2).backward()
    assert torch.equal(new.grad, torch.zeros(2, dtype=torch.float64))


def test_gae_matches_discounted_sums() -> None:
    rng = np.random.default_rng(0)
    t, n, gamma, lam = 7, 3, 0.9, 0.8
    rewards = rng.normal(size=(t, n))
    values = rng.normal(size=(t, n))
    dones = rng.random((t, n)) < 0.3
    last = rng.normal(size=n)
    adv, ret = gae(rewards, values, dones, last, gamma, lam)
    # reference: A_t = sum_l (gamma lam)^l delta_{t+l}, truncated at episode ends
    for j in range(n):
        for s in range(t):
            total, factor = 0.0, 1.0
            for u in range(s, t):
                nv = last[j] if u == t - 1 else values[u + 1, j]
                alive = 0.0 if dones[u, j] else 1.0
                delta = rewards[u, j] + gamma * nv * alive - values[u, j]
                total += factor * delta
                if dones[u, j]:
                    break
                factor *= gamma * lam
            assert adv[s, j] == pytest.approx(total, abs=1e-10)
    np.testing.assert_allclose(ret, adv + values)
    # lam = 1, no value: Monte-Carlo discounted returns
    adv1, _ = gae(np.ones((4, 1)), np.zeros((4, 1)), np.zeros((4, 1), bool), np.zeros(1), 0.5, 1.0)
    np.testing.assert_allclose(adv1[:, 0], [1.875, 1.75, 1.5, 1.0])


def test_policy_kl_is_the_categorical_kl() -> None:
    p = torch.tensor([[0.7, 0.2, 0.1]])
    q = torch.tensor([[0.4, 0.4, 0.2]])
    expected = float((p * (p / q).log()).sum())
    assert float(policy_kl(p.log(), q.log())) == pytest.approx(expected, rel=1e-6)
    assert float(policy_kl(p.log(), p.log() + 3.0)) == pytest.approx(0.0, abs=1e-7)


def test_bad_rl_config() -> None:
    with pytest.raises(ValueError, match="clip must be in"):
        RLConfig(clip=0)
    with pytest.raises(ValueError, match="guide_quantile"):
        RLConfig(guide_quantile=2)


@settings(max_examples=40, deadline=None)
@given(
    n_on=st.integers(1, 600),
    n_guides=st.integers(0, 300),
    minibatch=st.integers(1, 300),
    seed=st.integers(0, 2**16),
)
def test_guides_add_no_optimiser_steps(n_on: int, n_guides: int, minibatch: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    mbs = minibatches(n_on, n_guides, minibatch, gen)
    assert len(mbs) == math.ceil(n_on / minibatch)  # as many steps as unguided PPO
    flat = np.concatenate(mbs)
    assert sorted(flat.tolist()) == list(range(n_on + n_guides))  # each sample once
    per_mb = [int((mb >= n_on).sum()) for mb in mbs]
    assert max(per_mb) - min(per_mb) <= 1  # guides spread evenly
    on_per_mb = [int((mb < n_on).sum()) for mb in mbs]
    assert max(on_per_mb) - min(on_per_mb) <= 1


def test_a_rollout_never_retrieves_its_own_successes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guides come from the demonstrations and earlier rollouts only: the current rollout's
    successes join the buffer after its update (before, a successful state retrieved itself at
    cosine 1.0 and guidance became self-imitation)."""

    class _Encoder:
        dim = 384

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.random.default_rng(0).normal(size=(len(texts), 384)).astype(np.float32)

    torch.manual_seed(0)
    bank = TextBank(_Encoder(), texts=all_instructions() + question_texts())  # type: ignore[arg-type]
    model = SyVLA(ModelConfig())
    cfg = RLConfig(n_envs=2, n_steps=4, minibatch=8, updates=2, guided=True, vqa_cotrain=False)
    env = VecEnv(2, "train", model.cfg.view_size, seed=0)
    env.reset()
    demo = ppo_module.collect_rollout(model, env, bank, cfg, torch.Generator().manual_seed(1))
    events: list[str] = []
    real_add, real_retrieve = SuccessBuffer.add, ppo_module.retrieve_guides

    def add(self: SuccessBuffer, *args: np.ndarray) -> None:
        events.append("add")
        real_add(self, *args)

    def retrieve(*args: object) -> object:
        events.append("retrieve")
        return real_retrieve(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(SuccessBuffer, "add", add)
    monkeypatch.setattr(ppo_module, "retrieve_guides", retrieve)
    ppo_module.train_rl(
        model,
        cfg,
        bank,
        demo_views=demo.views,
        demo_text_ids=demo.text_ids,
        demo_actions=demo.actions,
        seed=0,
    )
    assert events == ["retrieve", "add", "retrieve", "add"]
