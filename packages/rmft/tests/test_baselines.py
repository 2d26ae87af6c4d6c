"""Classical algorithms: known regret behaviour on known instances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml26.rmft.baselines import (
    EXP3,
    UCB,
    Greedy,
    Hedge,
    RandomPolicy,
    ThompsonSampling,
    make_baseline,
)
from icml26.rmft.envs import EnvSpec, Instances, sample_instances
from icml26.rmft.rollouts import rollout


def _fixed(
    means: list[float], horizon: int, n: int, seed: int, kind: str = "bernoulli"
) -> Instances:
    rng = np.random.default_rng(seed)
    mu = np.broadcast_to(np.asarray(means), (n, horizon, len(means))).copy()
    rewards = (rng.uniform(size=mu.shape) < mu).astype(float)
    return Instances(EnvSpec(kind, len(means), horizon), mu, rewards)


def test_ucb_regret_grows_logarithmically_on_an_easy_instance() -> None:
    """Gap 0.6: regret within Auer et al.'s bound sum_k 8 ln T / Δ_k + (1 + π²/3) Δ_k, and from
    T = 250 to T = 2000 (8x) it grows like ln T (about 1.4x), far from linearly."""
    gap = 0.6
    regrets = {}
    for horizon in (250, 2000):
        inst = _fixed([0.8, 0.8 - gap], horizon, 64, seed=horizon)
        regrets[horizon] = rollout(UCB(), inst, np.random.default_rng(0)).final_regret.mean()
        bound = 8 * math.log(horizon) / gap + (1 + math.pi**2 / 3) * gap
        assert regrets[horizon] <= bound
    growth = regrets[2000] / regrets[250]
    assert growth < 2.0, growth
    assert growth > 1.0


def test_thompson_sampling_beats_random_and_converges() -> None:
    inst = _fixed([0.7, 0.5, 0.3], 400, 64, seed=1)
    ts = rollout(ThompsonSampling(), inst, np.random.default_rng(0))
    rnd = rollout(RandomPolicy(), inst, np.random.default_rng(0))
    assert ts.final_regret.mean() < 0.25 * rnd.final_regret.mean()
    assert (ts.actions[:, -50:] == 0).mean() > 0.9


def test_gaussian_thompson_sampling_works() -> None:
    inst = sample_instances("gaussian_k3_t300", 64, np.random.default_rng(2))
    ts = rollout(ThompsonSampling(), inst, np.random.default_rng(0))
    rnd = rollout(RandomPolicy(), inst, np.random.default_rng(0))
    assert ts.final_regret.mean() < 0.4 * rnd.final_regret.mean()


def test_greedy_pulls_each_arm_once_then_exploits() -> None:
    mu = np.array([[[1.0, 0.0, 0.0]] * 10])
    inst = Instances(EnvSpec("bernoulli", 3, 10), mu, mu.copy())
    trajs = rollout(Greedy(), inst, np.random.default_rng(0))
    assert sorted(trajs.actions[0, :3]) == [0, 1, 2]
    assert (trajs.actions[0, 3:] == 0).all()
    assert trajs.final_regret[0] == pytest.approx(2.0)


def test_hedge_regret_is_within_its_bound_on_experts() -> None:
    """Expected regret of Hedge with η = sqrt(8 ln K / T) is at most sqrt(T ln K / 2)."""
    horizon, k = 400, 4
    inst = sample_instances(f"experts_k{k}_t{horizon}", 128, np.random.default_rng(3))
    trajs = rollout(Hedge(), inst, np.random.default_rng(0))
    assert trajs.final_regret.mean() <= math.sqrt(horizon * math.log(k) / 2)


def test_exp3_probabilities_and_sublinear_regret() -> None:
    inst = _fixed([0.9, 0.1], 1000, 32, seed=4)
    policy = EXP3()
    trajs = rollout(policy, inst, np.random.default_rng(0))
    np.testing.assert_allclose(policy.probs.sum(axis=1), 1.0)
    assert (policy.probs >= policy.gamma / 2 - 1e-12).all()
    assert trajs.final_regret.mean() < 0.3 * 0.8 * 1000 / 2  # far below random's 400


def test_make_baseline_names() -> None:
    for name in ("ucb", "ts", "greedy", "exp3", "hedge", "random"):
        assert make_baseline(name).name == name
    with pytest.raises(ValueError, match="unknown baseline"):
        make_baseline("epsilon")
    with pytest.raises(ValueError, match="exploration constant"):
        UCB(c=0)
