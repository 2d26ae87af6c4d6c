"""Environments: exact regret against independent computations, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.rmft.baselines import Oracle
from icml26.rmft.envs import EnvSpec, Instances, cumulative_regret, parse_env, sample_instances
from icml26.rmft.rollouts import rollout


@pytest.mark.parametrize("kind", ["bernoulli", "gaussian", "nonstationary", "restaurants"])
def test_oracle_has_zero_regret(kind: str) -> None:
    rng = np.random.default_rng(0)
    inst = sample_instances(f"{kind}_k4_t30", 20, rng)
    trajs = rollout(Oracle(inst), inst, rng)
    np.testing.assert_allclose(trajs.regret, 0.0, atol=1e-12)


def test_fixed_arm_regret_is_gap_times_t() -> None:
    rng = np.random.default_rng(1)
    inst = sample_instances("bernoulli_k3_t25", 10, rng)
    mu = inst.means[:, 0, :]
    for arm in range(3):
        actions = np.full((10, 25), arm)
        expected = (mu.max(axis=1) - mu[:, arm])[:, None] * np.arange(1, 26)[None, :]
        np.testing.assert_allclose(cumulative_regret(inst, actions), expected)


def test_nonstationary_regret_is_dynamic() -> None:
    """Playing the first segment's best arm forever pays the gaps of later segments."""
    spec = EnvSpec("nonstationary", 2, 4, n_changes=1)
    means = np.array([[[0.9, 0.1], [0.9, 0.1], [0.2, 0.7], [0.2, 0.7]]])
    inst = Instances(spec, means, np.zeros_like(means))
    np.testing.assert_allclose(cumulative_regret(inst, np.zeros((1, 4), int)), [[0, 0, 0.5, 1.0]])
    drawn = sample_instances(
        EnvSpec("nonstationary", 3, 40, n_changes=3), 5, np.random.default_rng(2)
    )
    assert len({tuple(row) for row in drawn.means[0]}) == 4  # four segments


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(1, 12), st.integers(0, 10_000))
def test_experts_regret_matches_brute_force(k: int, t: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inst = sample_instances(f"experts_k{k}_t{t}", 3, rng)
    actions = rng.integers(0, k, size=(3, t))
    curve = cumulative_regret(inst, actions)
    for i in range(3):
        for s in range(t):
            best = max(inst.rewards[i, : s + 1, j].sum() for j in range(k))
            got = sum(inst.rewards[i, u, actions[i, u]] for u in range(s + 1))
            assert curve[i, s] == pytest.approx(best - got)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["bernoulli", "gaussian", "nonstationary"]),
    st.integers(2, 6),
    st.integers(1, 20),
    st.integers(0, 10_000),
)
def test_bandit_pseudo_regret_is_non_decreasing(kind: str, k: int, t: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inst = sample_instances(f"{kind}_k{k}_t{t}", 4, rng)
    curve = cumulative_regret(inst, rng.integers(0, k, size=(4, t)))
    assert (np.diff(curve, axis=1, prepend=0) >= -1e-12).all()


def test_reward_tables_follow_the_means() -> None:
    inst = sample_instances("bernoulli_k2_t4000", 2, np.random.default_rng(3))
    np.testing.assert_allclose(inst.rewards.mean(axis=1), inst.means[:, 0, :], atol=0.04)
    gauss = sample_instances("gaussian_k2_t4000", 2, np.random.default_rng(3))
    np.testing.assert_allclose(gauss.rewards.mean(axis=1), gauss.means[:, 0, :], atol=0.04)
    assert set(np.unique(inst.rewards)) <= {0.0, 1.0}


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("bernoulli_k1_t10", "K >= 2"),
        ("bernoulli_k3_t0", "T >= 1"),
        ("poisson_k3_t10", "unknown environment kind"),
        ("bernoulli-3-10", "must look like"),
    ],
)
def test_bad_environments_raise(name: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_env(name)


def test_bad_actions_raise() -> None:
    inst = sample_instances("bernoulli_k3_t5", 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        inst.step_regret(np.zeros((2, 4), int))
    with pytest.raises(ValueError, match=r"0\.\.2"):
        inst.step_regret(np.full((2, 5), 3))
    with pytest.raises(ValueError, match="n must be"):
        sample_instances("bernoulli_k3_t5", 0, np.random.default_rng(0))


def test_repeat_keeps_instances_together() -> None:
    inst = sample_instances("bernoulli_k3_t5", 2, np.random.default_rng(0)).repeat(3)
    assert inst.n == 6
    np.testing.assert_array_equal(inst.rewards[0], inst.rewards[2])
    assert not np.array_equal(inst.means[2], inst.means[3])
