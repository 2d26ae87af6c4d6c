"""The GRU policy: its memory resets where an episode starts, and PPO with it solves a
cue-recall task that no memoryless policy can solve above chance."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx, struct

from icml26.dicode.ppo import PPO, EnvSpec, PPOSettings, RecurrentActorCritic


@struct.dataclass
class _Cue:
    cue: jax.Array  # () int32: the bit shown at t = 0
    t: jax.Array
    ret: jax.Array


def _obs(s: _Cue) -> jax.Array:
    shown = jax.nn.one_hot(s.cue, 2) * (s.t == 0)
    return jnp.concatenate([shown, jnp.stack([(s.t == 1).astype(jnp.float32)])])


def _reset(key: jax.Array, world: Any) -> tuple[jax.Array, _Cue]:
    s = _Cue(jax.random.bernoulli(key).astype(jnp.int32), jnp.int32(0), jnp.float32(0.0))
    return _obs(s), s


def _step(key: jax.Array, s: _Cue, action: jax.Array, world: Any) -> Any:
    reward = ((s.t == 1) & (action == s.cue)).astype(jnp.float32)
    s2 = _Cue(s.cue, s.t + 1, s.ret + reward)
    return _obs(s2), s2, reward, s2.t >= 2, {"unlocked": jnp.zeros((1,), bool)}


def _step_auto_reset(key: jax.Array, s: _Cue, action: jax.Array, world: Any) -> Any:
    k1, k2 = jax.random.split(key)
    obs, s2, reward, done, info = _step(k1, s, action, world)
    obs_r, s_r = _reset(k2, world)
    info = {
        **info,
        "achievements": jnp.stack([s2.ret > 0]),
        "return": s2.ret,
        "goal_success": s2.ret > 0,
    }
    out = jax.tree_util.tree_map(lambda r, x: jnp.where(done, r, x), s_r, s2)
    return jnp.where(done, obs_r, obs), out, reward, done, info


CUE = EnvSpec(
    name="cue_recall",
    obs_size=3,
    n_actions=2,
    achievement_names=("recalled",),
    reset=_reset,
    step=_step,
    step_auto_reset=_step_auto_reset,
    episode_return=lambda s: s.ret,
    achievements=lambda s: jnp.stack([s.ret > 0]),
)


def test_sequence_resets_memory_where_an_episode_starts() -> None:
    ppo = PPO(PPOSettings(n_envs=4, rollout=6, minibatches=2, hidden=8, policy="gru"), CUE)
    _, params = nnx.split(RecurrentActorCritic(3, 2, 8, rngs=nnx.Rngs(1)))
    obs = jax.random.normal(jax.random.PRNGKey(0), (6, 4, 3))
    starts = jnp.zeros((6, 4), bool).at[3].set(True)
    carry = jax.random.normal(jax.random.PRNGKey(1), (4, 8))
    logits, _ = ppo._sequence(params, carry, obs, starts)
    fresh, _ = ppo._sequence(params, jnp.zeros((4, 8)), obs[3:], jnp.zeros((3, 4), bool))
    np.testing.assert_allclose(np.asarray(logits[3:]), np.asarray(fresh), atol=1e-5)
    assert not np.allclose(
        np.asarray(logits[:3]),
        np.asarray(ppo._sequence(params, jnp.zeros((4, 8)), obs[:3], starts[:3])[0]),
    )


@pytest.mark.parametrize(("policy", "solves"), [("gru", True), ("mlp", False)])
def test_only_the_recurrent_policy_recalls_the_cue(policy: str, solves: bool) -> None:
    settings = PPOSettings(
        n_envs=32,
        rollout=8,
        minibatches=2,
        epochs=4,
        hidden=16,
        lr=3e-3,
        updates_per_chunk=25,
        policy=policy,
        ent_coef=0.0,
    )
    ppo = PPO(settings, CUE)
    worlds = jnp.zeros((32, 1))
    runner = ppo.init(jax.random.PRNGKey(0), worlds)
    mask = jnp.zeros((32,), bool)
    for _ in range(6):
        runner, _ = ppo.train_chunk(runner, worlds, mask)
    out = ppo.evaluate(runner.params, jnp.zeros((512, 1)), jax.random.PRNGKey(3), 2)
    recall = float(np.asarray(out["return"]).mean())
    if solves:
        assert recall > 0.9, recall
    else:
        assert recall < 0.65, recall  # chance is 0.5: nothing in the t = 1 view says the cue
