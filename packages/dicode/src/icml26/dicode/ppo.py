"""PPO in the PureJaxRL style: vmapped worlds, a scanned rollout, GAE, clipped updates.

One compiled function, :meth:`PPO.train_chunk`, runs ``updates`` PPO iterations on a batch of
``n_envs`` environments, each with its own :class:`~icml26.dicode.world.WorldParams` (a pytree
argument, so new worlds never recompile). It returns per-environment episode statistics (the
curriculum's success rates, returns, achievements) and PLR's positive-value-loss scores.

The policy is a Flax NNX actor-critic over the symbolic observation: an MLP (``policy="mlp"``,
a shared first layer, orthogonal initialisation) or a recurrent GRU policy (``policy="gru"``:
a GRU cell whose hidden state is reset where an episode ends, trained on whole per-env
sequences, as PureJaxRL's recurrent PPO); :func:`gae` is the generalised advantage
estimator ``Â_t = Σ_l (γλ)^l δ_{t+l}``, ``δ_t = r_t + γ V(s_{t+1})(1 - d_t) - V(s_t)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx, struct

from icml26.dicode import world as crafting
from icml26.dicode.tech import ACHIEVEMENTS

__all__ = [
    "CRAFTING_WORLD",
    "PPO",
    "ActorCritic",
    "EnvSpec",
    "PPOSettings",
    "RecurrentActorCritic",
    "Runner",
    "compiled_versions",
    "gae",
]


@dataclass(frozen=True, eq=False)
class EnvSpec:
    """A functional environment family PPO trains on (our crafting world, or Craftax-Classic
    through :mod:`icml26.dicode.craftax_target`).

    ``reset(key, world) -> (obs, state)``; ``step(key, state, action, world) -> (obs, state,
    reward, done, info)`` without reset; ``step_auto_reset`` likewise with a fresh episode where
    one ended and ``info`` holding the finished episode's ``return``, ``achievements`` and
    ``goal_success``; ``episode_return(state)`` and ``achievements(state)`` read a state;
    ``batch_step_auto_reset(key, states, actions, worlds)`` optionally replaces the vmapped
    ``step_auto_reset``.

    Attributes:
        name: the family's name.
        obs_size: length of a flat observation.
        n_actions: number of discrete actions.
        achievement_names: the achievements, in the order ``achievements(state)`` reports them.
    """

    name: str
    obs_size: int
    n_actions: int
    achievement_names: tuple[str, ...]
    reset: Callable[..., Any] = field(repr=False)
    step: Callable[..., Any] = field(repr=False)
    step_auto_reset: Callable[..., Any] = field(repr=False)
    episode_return: Callable[[Any], jax.Array] = field(repr=False)
    achievements: Callable[[Any], jax.Array] = field(repr=False)
    batch_step_auto_reset: Callable[..., Any] | None = field(default=None, repr=False)

    def step_batch(self, key: jax.Array, states: Any, actions: jax.Array, worlds: Any) -> Any:
        """``step_auto_reset`` over a batch: the environment's own batched version when it
        has one (Craftax: optimistic resets, world generation being costly), else ``vmap``."""
        if self.batch_step_auto_reset is not None:
            return self.batch_step_auto_reset(key, states, actions, worlds)
        n = actions.shape[0]
        return jax.vmap(self.step_auto_reset)(jax.random.split(key, n), states, actions, worlds)


CRAFTING_WORLD = EnvSpec(
    name="crafting_world",
    obs_size=crafting.OBS_SIZE,
    n_actions=crafting.N_ACTIONS,
    achievement_names=ACHIEVEMENTS,
    reset=crafting.reset,
    step=crafting.step,
    step_auto_reset=crafting.step_auto_reset,
    episode_return=lambda s: s.episode_return,
    achievements=lambda s: s.achievements,
)


@dataclass(frozen=True)
class PPOSettings:
    """PPO hyper-parameters: PureJaxRL's Craftax loss settings (γ, λ, clip, entropy and value
    weights, gradient clip); widths, env count and learning rate sized for the miniature on 2
    CPU cores (PureJaxRL's Craftax PPO: 1,024 envs, 512-unit layers, lr 2e-4), and used as they
    are on Craftax-Classic too.

    Attributes:
        n_envs: parallel environments; rollout: steps per environment per update.
        epochs, minibatches: optimisation passes over one rollout.
        hidden: width of both MLP trunks (two layers each).
        lr, gamma, gae_lambda, clip, ent_coef, vf_coef, max_grad_norm: the usual.
        updates_per_chunk: PPO updates per compiled call.
        policy: ``"mlp"`` or ``"gru"`` (recurrent; minibatches are groups of whole env
            sequences, so ``n_envs`` must be divisible by ``minibatches``).
    """

    n_envs: int = 64
    rollout: int = 64
    epochs: int = 2
    minibatches: int = 2
    hidden: int = 64
    lr: float = 2e-3
    gamma: float = 0.99
    gae_lambda: float = 0.8
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 1.0
    updates_per_chunk: int = 4
    policy: str = "mlp"

    def __post_init__(self) -> None:
        if self.policy not in ("mlp", "gru"):
            raise ValueError(f"policy must be 'mlp' or 'gru', got {self.policy!r}")

    @property
    def steps_per_chunk(self) -> int:
        return self.n_envs * self.rollout * self.updates_per_chunk


class ActorCritic(nnx.Module):
    """``obs -> (logits, value)``: a shared first tanh layer (the wide observation is the
    expensive part on a CPU), then a tanh layer per head."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int, *, rngs: nnx.Rngs) -> None:
        ortho = nnx.initializers.orthogonal
        self.trunk = nnx.Linear(obs_size, hidden, kernel_init=ortho(np.sqrt(2)), rngs=rngs)
        self.a = nnx.Linear(hidden, hidden, kernel_init=ortho(np.sqrt(2)), rngs=rngs)
        self.pi = nnx.Linear(hidden, n_actions, kernel_init=ortho(0.01), rngs=rngs)
        self.c = nnx.Linear(hidden, hidden, kernel_init=ortho(np.sqrt(2)), rngs=rngs)
        self.v = nnx.Linear(hidden, 1, kernel_init=ortho(1.0), rngs=rngs)

    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = jnp.tanh(self.trunk(obs))
        return self.pi(jnp.tanh(self.a(h))), self.v(jnp.tanh(self.c(h)))[..., 0]


class RecurrentActorCritic(nnx.Module):
    """``(h, obs) -> (h', logits, value)``: a tanh encoder layer, a GRU cell, then a tanh
    layer per head. The hidden state is the agent's memory within an episode."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int, *, rngs: nnx.Rngs) -> None:
        ortho = nnx.initializers.orthogonal
        self.hidden = hidden
        self.enc = nnx.Linear(obs_size, hidden, kernel_init=ortho(np.sqrt(2)), rngs=rngs)
        self.gru = nnx.GRUCell(hidden, hidden, rngs=rngs)
        self.a = nnx.Linear(hidden, hidden, kernel_init=ortho(np.sqrt(2)), rngs=rngs)
        self.pi = nnx.Linear(hidden, n_actions, kernel_init=ortho(0.01), rngs=rngs)
        self.c = nnx.Linear(hidden, hidden, kernel_init=ortho(np.sqrt(2)), rngs=rngs)
        self.v = nnx.Linear(hidden, 1, kernel_init=ortho(1.0), rngs=rngs)

    def __call__(self, h: jax.Array, obs: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        h, y = self.gru(h, jnp.tanh(self.enc(obs)))
        return h, self.pi(jnp.tanh(self.a(y))), self.v(jnp.tanh(self.c(y)))[..., 0]


def gae(
    rewards: jax.Array,
    values: jax.Array,
    dones: jax.Array,
    last_value: jax.Array,
    gamma: float,
    lam: float,
) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimation over a ``(T, ...)`` rollout.

    ``dones[t]`` is whether the episode ended at step ``t`` (so ``V(s_{t+1})`` is not used).
    Returns ``(advantages, returns = advantages + values)``.
    """

    def back(carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, ...]) -> Any:
        adv_next, v_next = carry
        r, v, d = x
        not_done = 1.0 - d.astype(jnp.float32)
        delta = r + gamma * v_next * not_done - v
        adv = delta + gamma * lam * not_done * adv_next
        return (adv, v), adv

    _, adv = jax.lax.scan(
        back, (jnp.zeros_like(last_value), last_value), (rewards, values, dones), reverse=True
    )
    return adv, adv + values


@struct.dataclass
class Runner:
    """Everything that changes during training (a pytree; checkpointed with orbax)."""

    params: Any
    opt_state: Any
    env_state: Any
    obs: jax.Array
    key: jax.Array
    updates: jax.Array
    carry: jax.Array  # (n_envs, hidden) GRU state; (n_envs, 1) zeros for the MLP


class PPO:
    """A PPO learner for the crafting world (one per run; its compiled functions are shared
    by every method and seed of the run).

    Args:
        settings: hyper-parameters (shapes are fixed by ``n_envs`` and ``rollout``).
        env: the environment family (default: our crafting world).
    """

    def __init__(self, settings: PPOSettings, env: EnvSpec = CRAFTING_WORLD) -> None:
        if settings.n_envs * settings.rollout % settings.minibatches:
            raise ValueError("n_envs * rollout must be divisible by minibatches")
        if settings.policy == "gru" and settings.n_envs % settings.minibatches:
            raise ValueError("the GRU policy needs n_envs divisible by minibatches")
        self.settings = settings
        self.env = env
        self.recurrent = settings.policy == "gru"
        self._net = RecurrentActorCritic if self.recurrent else ActorCritic
        model = self._net(env.obs_size, env.n_actions, settings.hidden, rngs=nnx.Rngs(0))
        self.graphdef, _ = nnx.split(model)
        self.carry_size = settings.hidden if self.recurrent else 1
        self.tx = optax.chain(
            optax.clip_by_global_norm(settings.max_grad_norm),
            optax.adam(settings.lr, eps=1e-5),
        )

    # ----------------------------------------------------------------- state
    def init(self, key: jax.Array, worlds: Any) -> Runner:
        """Fresh network (seeded by ``key``), optimiser and environments."""
        k_net, k_env, k_run = jax.random.split(key, 3)
        seed = int(jax.random.randint(k_net, (), 0, 2**31 - 1))
        model = self._net(
            self.env.obs_size, self.env.n_actions, self.settings.hidden, rngs=nnx.Rngs(seed)
        )
        _, params = nnx.split(model)
        obs, env_state = jax.vmap(self.env.reset)(
            jax.random.split(k_env, self.settings.n_envs), worlds
        )
        runner = Runner(
            params=params,
            opt_state=self.tx.init(params),
            env_state=env_state,
            obs=obs,
            key=k_run,
            updates=jnp.int32(0),
            carry=jnp.zeros((self.settings.n_envs, self.carry_size), jnp.float32),
        )
        # strong dtypes: a weakly typed leaf (Craftax builds states from Python scalars) would
        # make the second train_chunk call, fed the first call's strongly typed output, recompile
        return jax.tree_util.tree_map(lambda x: jnp.array(x, dtype=x.dtype), runner)

    def apply(self, params: Any, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(logits, value)`` of the MLP policy."""
        return nnx.merge(self.graphdef, params)(obs)

    def act(
        self, params: Any, carry: jax.Array, obs: jax.Array
    ) -> tuple[jax.Array, jax.Array, jax.Array]:
        """``(carry', logits, value)`` for either policy (the MLP passes its carry through)."""
        if self.recurrent:
            return nnx.merge(self.graphdef, params)(carry, obs)
        logits, value = self.apply(params, obs)
        return carry, logits, value

    def _sequence(
        self, params: Any, carry: jax.Array, obs: jax.Array, starts: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """Logits and values over a ``(T, n, ...)`` sequence from ``carry``, the state zeroed
        where ``starts[t]`` (an episode began at step ``t``)."""

        def body(h: jax.Array, x: tuple[jax.Array, jax.Array]) -> Any:
            o, st = x
            h = jnp.where(st[:, None], 0.0, h)
            h, logits, value = self.act(params, h, o)
            return h, (logits, value)

        _, (logits, value) = jax.lax.scan(body, carry, (obs, starts))
        return logits, value

    # ---------------------------------------------------------------- training
    def _loss(self, params: Any, batch: dict[str, jax.Array]) -> tuple[jax.Array, Any]:
        s = self.settings
        if self.recurrent:  # batch: (T, envs, ...) sequences with their starting carry
            logits, value = self._sequence(params, batch["carry"], batch["obs"], batch["starts"])
            batch = {k: v.reshape((-1, *v.shape[2:])) for k, v in batch.items() if k != "carry"}
            logits = logits.reshape((-1, logits.shape[-1]))
            value = value.reshape(-1)
        else:
            logits, value = self.apply(params, batch["obs"])
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, batch["action"][:, None], axis=-1)[:, 0]
        ratio = jnp.exp(logp - batch["logp"])
        adv = batch["adv"]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - s.clip, 1 + s.clip) * adv).mean()
        v_clip = batch["value"] + jnp.clip(value - batch["value"], -s.clip, s.clip)
        v_loss = (
            0.5
            * jnp.maximum((value - batch["target"]) ** 2, (v_clip - batch["target"]) ** 2).mean()
        )
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        total = pg + s.vf_coef * v_loss - s.ent_coef * entropy
        return total, (pg, v_loss, entropy)

    def _update(self, runner: Runner, worlds: Any) -> tuple[Runner, dict[str, jax.Array]]:
        s = self.settings
        n = s.n_envs

        def env_step(carry: tuple[Any, ...], _: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
            env_state, obs, h, start, key = carry
            key, k_act, k_env = jax.random.split(key, 3)
            h, logits, value = self.act(runner.params, h, obs)
            action = jax.random.categorical(k_act, logits)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=-1)[:, 0]
            obs2, env_state, reward, done, info = self.env.step_batch(
                k_env, env_state, action, worlds
            )
            tr = {
                "obs": obs,
                "starts": start,
                "action": action,
                "logp": logp,
                "value": value,
                "reward": reward,
                "done": done,
                "ep_return": info["return"],
                "ep_ach": info["achievements"],
                "ep_goal": info["goal_success"],
            }
            h = jnp.where(done[:, None], 0.0, h)  # a new episode starts with a blank memory
            return (env_state, obs2, h, done, key), tr

        h0 = runner.carry
        no_start = jnp.zeros((n,), bool)  # runner.carry is already zeroed where episodes began
        (env_state, obs, h_last, _, key), traj = jax.lax.scan(
            env_step,
            (runner.env_state, runner.obs, h0, no_start, runner.key),
            None,
            length=s.rollout,
        )
        _, _, last_value = self.act(runner.params, h_last, obs)
        adv, target = gae(
            traj["reward"], traj["value"], traj["done"], last_value, s.gamma, s.gae_lambda
        )
        seqs = {
            "obs": traj["obs"],
            "starts": traj["starts"],
            "action": traj["action"],
            "logp": traj["logp"],
            "value": traj["value"],
            "adv": adv,
            "target": target,
        }
        if self.recurrent:  # minibatches of whole env sequences: (mb, T, envs/mb, ...)
            flat = {**seqs, "carry": h0[None]}
        else:
            flat = jax.tree_util.tree_map(lambda x: x.reshape((s.rollout * n, *x.shape[2:])), seqs)
        grad_fn = jax.value_and_grad(self._loss, has_aux=True)

        def epoch(carry: tuple[Any, Any, jax.Array], _: Any) -> Any:
            params, opt_state, key = carry
            key, k_perm = jax.random.split(key)
            if self.recurrent:
                perm = jax.random.permutation(k_perm, n)
                shuffled = jax.tree_util.tree_map(
                    lambda x: jnp.moveaxis(
                        x[:, perm].reshape((x.shape[0], s.minibatches, -1, *x.shape[2:])), 1, 0
                    ),
                    flat,
                )
                shuffled["carry"] = shuffled["carry"][:, 0]
            else:
                perm = jax.random.permutation(k_perm, s.rollout * n)
                shuffled = jax.tree_util.tree_map(
                    lambda x: x[perm].reshape((s.minibatches, -1, *x.shape[1:])), flat
                )

            def minibatch(c: tuple[Any, Any], batch: dict[str, jax.Array]) -> Any:
                p, o = c
                (loss, aux), grads = grad_fn(p, batch)
                updates, o = self.tx.update(grads, o, p)
                return (optax.apply_updates(p, updates), o), (loss, *aux)

            (params, opt_state), losses = jax.lax.scan(minibatch, (params, opt_state), shuffled)
            return (params, opt_state, key), losses

        (params, opt_state, key), losses = jax.lax.scan(
            epoch, (runner.params, runner.opt_state, key), None, length=s.epochs
        )
        done = traj["done"].astype(jnp.float32)
        stats = {
            "episodes": done.sum(0),
            "goal_successes": (done * traj["ep_goal"]).sum(0),
            "return_sum": (done * traj["ep_return"]).sum(0),
            "achievement_counts": (done[..., None] * traj["ep_ach"]).sum(0),
            "positive_value_loss": jnp.maximum(adv, 0.0).mean(0),
            "reward_sum": traj["reward"].sum(0),
            "loss": losses[0].mean(),
            "value_loss": losses[2].mean(),
            "entropy": losses[3].mean(),
        }
        runner = Runner(
            params=params,
            opt_state=opt_state,
            env_state=env_state,
            obs=obs,
            key=key,
            updates=runner.updates + 1,
            carry=h_last,
        )
        return runner, stats

    @partial(jax.jit, static_argnums=0)
    def train_chunk(
        self, runner: Runner, worlds: Any, reset_mask: jax.Array
    ) -> tuple[Runner, dict[str, jax.Array]]:
        """``updates_per_chunk`` PPO updates on ``worlds`` (one per env); environments where
        ``reset_mask`` is set start a fresh episode first (their world changed).

        Returns the runner and the per-env statistics summed over the chunk (``loss``,
        ``value_loss``, ``entropy`` averaged; ``positive_value_loss`` averaged).
        """
        key, k_reset = jax.random.split(runner.key)
        obs_r, state_r = jax.vmap(self.env.reset)(
            jax.random.split(k_reset, self.settings.n_envs), worlds
        )
        env_state = jax.tree_util.tree_map(
            lambda r, s: jnp.where(reset_mask.reshape((-1,) + (1,) * (s.ndim - 1)), r, s),
            state_r,
            runner.env_state,
        )
        obs = jnp.where(reset_mask[:, None], obs_r, runner.obs)
        carry = jnp.where(reset_mask[:, None], 0.0, runner.carry)
        runner = runner.replace(env_state=env_state, obs=obs, key=key, carry=carry)  # type: ignore[attr-defined]
        runner, stats = jax.lax.scan(
            lambda r, _: self._update(r, worlds),
            runner,
            None,
            length=self.settings.updates_per_chunk,
        )
        mean_keys = ("loss", "value_loss", "entropy", "positive_value_loss")
        out = {k: (v.mean(0) if k in mean_keys else v.sum(0)) for k, v in stats.items()}
        return runner, out

    # --------------------------------------------------------------- evaluation
    @partial(jax.jit, static_argnums=(0, 4))
    def evaluate(
        self, params: Any, worlds: Any, key: jax.Array, max_steps: int
    ) -> dict[str, jax.Array]:
        """One episode per world in ``worlds`` with the stochastic policy (no reset; steps
        after an episode's end are masked). Returns per-episode ``return`` and
        ``achievements``."""
        n = jax.tree_util.tree_leaves(worlds)[0].shape[0]
        k_reset, k_run = jax.random.split(key)
        obs, state = jax.vmap(self.env.reset)(jax.random.split(k_reset, n), worlds)

        def body(carry: tuple[Any, ...], k: jax.Array) -> Any:
            state, obs, alive, h = carry
            k_act, k_env = jax.random.split(k)
            h, logits, _ = self.act(params, h, obs)
            action = jax.random.categorical(k_act, logits)
            obs2, state2, _, done, _ = jax.vmap(self.env.step)(
                jax.random.split(k_env, n), state, action, worlds
            )
            state = jax.tree_util.tree_map(
                lambda new, old: jnp.where(alive.reshape((-1,) + (1,) * (new.ndim - 1)), new, old),
                state2,
                state,
            )
            return (state, obs2, alive & ~done, h), None

        h0 = jnp.zeros((n, self.carry_size), jnp.float32)
        (state, _, _, _), _ = jax.lax.scan(
            body, (state, obs, jnp.ones((n,), bool), h0), jax.random.split(k_run, max_steps)
        )
        return {
            "return": jax.vmap(self.env.episode_return)(state),
            "achievements": jax.vmap(self.env.achievements)(state),
        }


def compiled_versions(fn: Any) -> int:
    """How many compiled versions a ``jax.jit`` function holds in this process.

    JAX has no public API for this: it reads the jitted function's private ``_cache_size``
    (kept in this one place; ``jax.monitoring`` counts every compile of the process, not one
    function's).

    Raises:
        TypeError: if ``fn`` is not a jitted function with that counter (a JAX that dropped it).
    """
    size = getattr(fn, "_cache_size", None)
    if size is None:
        raise TypeError(f"{fn!r} has no jit cache counter (_cache_size): not jax.jit, or a new JAX")
    return int(size())
