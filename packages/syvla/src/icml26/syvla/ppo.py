"""The RL stage: PPO on environment reward, with similar-sample guidance and VQA co-training.

One update (:func:`ppo_update`) is the clipped-surrogate PPO of Schulman et al. (2017),

    L_clip(θ) = -E[min(r_t A_t, clip(r_t, 1-ε, 1+ε) A_t)],   r_t = π_θ(a_t|s_t) / π_old(a_t|s_t),

plus a value loss and an entropy bonus, with GAE(γ, λ) advantages, and SyVLA's two additions:

* **similar-sample guidance** (``guided``): the rollout's states retrieve their nearest
  successful samples of the same instruction (:mod:`icml26.syvla.guidance`); those at or
  above the update's ``guide_quantile`` of similarity join the surrogate with the fixed advantage ``guide_advantage`` (spread over
  the same number of minibatches as plain PPO, :func:`minibatches`, so guidance adds no
  optimiser steps; on-policy
  advantages are normalised to unit scale, so this is "as good as one standard deviation
  above average"), their ratio clipped like any other sample;
* **VQA co-training** (``vqa_cotrain``): each update also takes a reasoning-head step on
  questions about the visited states, so the backbone keeps its VL skill while it changes
  (knowledge insulation trains the VLM on VL data during action training).

``update_kl`` — the mean KL(π_old ‖ π_new) over the rollout's states after each update —
is the stability figure the paper's "stabilise policy updates" is judged by.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from icml26.shared import rng_for, seed_for
from icml26.syvla.data import TextBank, VecEnv, VQASet, vqa_set
from icml26.syvla.guidance import SuccessBuffer, calibrate_floor, select_guides
from icml26.syvla.levels import LEVELS
from icml26.syvla.model import SyVLA

__all__ = [
    "RLConfig",
    "RLResult",
    "Rollout",
    "clipped_policy_loss",
    "collect_rollout",
    "gae",
    "minibatches",
    "policy_kl",
    "ppo_update",
    "train_rl",
]


@dataclass(frozen=True)
class RLConfig:
    """Settings of :func:`train_rl`.

    Attributes:
        updates: rollout-and-update rounds.
        n_envs, n_steps: lockstep rooms and steps per rollout.
        epochs, minibatch, lr, clip, gamma, lam, vf_coef, ent_coef, max_grad_norm: PPO's.
        guided: similar-sample guidance on (retrieved successful samples join the update).
        guide_advantage: the fixed advantage of a retrieved sample.
        guide_quantile: the gate's similarity quantile (see :func:`select_guides`).
        guide_frac: at most this fraction of the rollout is retrieved.
        guide_floor: an absolute cosine-similarity floor of the gate; ``None``: calibrated
            at each update on the buffer (:func:`~icml26.syvla.guidance.calibrate_floor`
            with ``guide_floor_quantile``: a guide must be more similar than that share of
            the nearest neighbours across instructions).
        guide_floor_quantile: the calibration's quantile.
        success_capacity: the policy's own successful samples kept besides the demonstrations.
        vqa_cotrain: reasoning-head VQA steps on the visited states after each update.
        vqa_batch, vqa_steps: their batch size and count.
        levels: the levels of the RL rooms: ours (``goto``, ``pickup``, on the ``train``
            split) or Gymnasium ids of minigrid environments (``BabyAI-GoToLocal-v0``).
    """

    updates: int = 10
    n_envs: int = 16
    n_steps: int = 32
    epochs: int = 2
    minibatch: int = 256
    lr: float = 3e-4
    clip: float = 0.2
    gamma: float = 0.99
    lam: float = 0.95
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    max_grad_norm: float = 0.5
    guided: bool = True
    guide_advantage: float = 1.0
    guide_quantile: float = 0.75
    guide_frac: float = 0.25
    guide_floor: float | None = None
    guide_floor_quantile: float = 0.5
    success_capacity: int = 2048
    vqa_cotrain: bool = True
    vqa_batch: int = 128
    vqa_steps: int = 2
    levels: tuple[str, ...] = tuple(LEVELS)

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError("levels must name at least one level")
        if min(self.updates, self.n_envs, self.n_steps, self.epochs, self.minibatch) < 1:
            raise ValueError("updates, n_envs, n_steps, epochs and minibatch must be >= 1")
        if not 0 < self.clip < 1 or not 0 < self.gamma <= 1 or not 0 <= self.lam <= 1:
            raise ValueError("clip must be in (0, 1), gamma in (0, 1], lam in [0, 1]")
        if not 0 <= self.guide_quantile <= 1 or not 0 <= self.guide_frac <= 1:
            raise ValueError("guide_quantile and guide_frac must be in [0, 1]")
        if not 0 <= self.guide_floor_quantile <= 1:
            raise ValueError("guide_floor_quantile must be in [0, 1]")


@dataclass
class Rollout:
    views: np.ndarray  # (T*N, S, S, 3)
    text_ids: np.ndarray  # (T*N,)
    actions: np.ndarray
    logp: np.ndarray
    logits: np.ndarray  # (T*N, A): π_old, for the KL after the update
    values: np.ndarray
    returns: np.ndarray
    advantages: np.ndarray
    keys: np.ndarray  # (T*N, d) retrieval keys
    success_mask: np.ndarray  # transitions of episodes that ended in success
    episode_returns: list[float]
    episode_success: list[bool]


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    last_value: np.ndarray,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation over (T, N) arrays; ``dones[t]`` ends the episode
    after step t. Returns (advantages, returns)."""
    steps = rewards.shape[0]
    adv = np.zeros_like(rewards, dtype=np.float64)
    running = np.zeros(rewards.shape[1])
    for t in reversed(range(steps)):
        next_value = last_value if t == steps - 1 else values[t + 1]
        alive = 1.0 - dones[t].astype(np.float64)
        delta = rewards[t] + gamma * next_value * alive - values[t]
        running = delta + gamma * lam * alive * running
        adv[t] = running
    return adv, adv + values


def clipped_policy_loss(
    logp_new: torch.Tensor, logp_old: torch.Tensor, advantages: torch.Tensor, clip: float
) -> torch.Tensor:
    """PPO's clipped surrogate, negated for minimisation (mean over samples)."""
    ratio = torch.exp(logp_new - logp_old)
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip)
    return -torch.minimum(ratio * advantages, clipped * advantages).mean()


def policy_kl(logits_old: torch.Tensor, logits_new: torch.Tensor) -> torch.Tensor:
    """Mean KL(π_old ‖ π_new) of categorical policies given by logits."""
    lp_old = torch.log_softmax(logits_old, -1)
    lp_new = torch.log_softmax(logits_new, -1)
    return (lp_old.exp() * (lp_old - lp_new)).sum(-1).mean()


def minibatches(n_on: int, n_guides: int, minibatch: int, gen: torch.Generator) -> list[np.ndarray]:
    """One epoch's minibatches: ``ceil(n_on / minibatch)`` of them whatever ``n_guides``.

    Guidance must not buy extra optimiser steps: the on-policy samples ``0..n_on-1`` and the
    guides ``n_on..n_on+n_guides-1`` are shuffled separately and each split evenly over the
    same number of minibatches as plain PPO takes, so a guided update takes as many steps as
    an unguided one and every minibatch holds its share of guides.

    Args:
        n_on: on-policy samples; n_guides: retrieved samples appended after them.
        minibatch: the on-policy minibatch size.
        gen: the shuffling generator.

    Returns:
        Index arrays into the concatenated (on-policy, guides) batch; each index once.
    """
    n_mb = max(1, math.ceil(n_on / minibatch))
    on = torch.randperm(n_on, generator=gen).numpy()
    guide = n_on + torch.randperm(n_guides, generator=gen).numpy()
    return [
        np.concatenate([a, b])
        for a, b in zip(np.array_split(on, n_mb), np.array_split(guide, n_mb), strict=True)
    ]


def _text(bank: TextBank, ids: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(bank.vectors[ids], device=device)


def _views(views: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(views, device=device)


@torch.no_grad()
def collect_rollout(
    model: SyVLA, env: VecEnv, bank: TextBank, cfg: RLConfig, gen: torch.Generator
) -> Rollout:
    """``n_steps`` lockstep steps of ``env`` under the current (sampled) policy."""
    device = next(model.parameters()).device
    t_, n = cfg.n_steps, env.n
    views = np.zeros((t_, n, *env.views.shape[1:]), dtype=np.uint8)
    text_ids = np.zeros((t_, n), dtype=np.int64)
    actions = np.zeros((t_, n), dtype=np.int64)
    logp = np.zeros((t_, n))
    values = np.zeros((t_, n))
    rewards = np.zeros((t_, n))
    dones = np.zeros((t_, n), dtype=bool)
    logits_all, keys_all = [], []
    ep_ret: list[float] = []
    ep_succ: list[bool] = []
    success = np.zeros((t_, n), dtype=bool)
    start = np.zeros(n, dtype=np.int64)  # step at which each env's current episode began
    for t in range(t_):
        views[t] = env.views
        text_ids[t] = bank.ids(env.missions)
        out = model(_views(views[t], device), _text(bank, text_ids[t], device))
        dist = torch.distributions.Categorical(logits=out.logits)
        a = torch.multinomial(dist.probs.cpu(), 1, generator=gen).squeeze(-1)
        actions[t] = a.numpy()
        logp[t] = dist.log_prob(a.to(device)).cpu().numpy()
        values[t] = out.value.cpu().numpy()
        logits_all.append(out.logits.cpu().numpy())
        keys_all.append(out.key.cpu().numpy())
        r, d, _ = env.step(actions[t])
        rewards[t], dones[t] = r, d
        for i in np.nonzero(d)[0]:
            ep_ret.append(float(rewards[start[i] : t + 1, i].sum()))
            ep_succ.append(bool(r[i] > 0))
            if r[i] > 0:
                success[start[i] : t + 1, i] = True
            start[i] = t + 1
    last = model(_views(env.views, device), _text(bank, bank.ids(env.missions), device))
    adv, ret = gae(rewards, values, dones, last.value.cpu().numpy(), cfg.gamma, cfg.lam)
    flat = lambda x: x.reshape(t_ * n, *x.shape[2:])  # noqa: E731
    return Rollout(
        views=flat(views),
        text_ids=flat(text_ids),
        actions=flat(actions),
        logp=flat(logp),
        logits=np.concatenate(logits_all),
        values=flat(values),
        returns=flat(ret),
        advantages=flat(adv),
        keys=np.concatenate(keys_all),
        success_mask=flat(success),
        episode_returns=ep_ret,
        episode_success=ep_succ,
    )


@torch.no_grad()
def _policy_outputs(
    model: SyVLA, views: np.ndarray, text: torch.Tensor, chunk: int = 512
) -> tuple[torch.Tensor, torch.Tensor]:
    device = text.device
    logits, keys = [], []
    for i in range(0, len(views), chunk):
        out = model(_views(views[i : i + chunk], device), text[i : i + chunk])
        logits.append(out.logits)
        keys.append(out.key)
    return torch.cat(logits), torch.cat(keys)


@dataclass
class GuideBatch:
    views: np.ndarray
    text_ids: np.ndarray
    actions: np.ndarray
    logp_old: np.ndarray
    similarity: np.ndarray
    fraction: float
    floor: float


def retrieve_guides(
    model: SyVLA, roll: Rollout, buffer: SuccessBuffer, bank: TextBank, cfg: RLConfig
) -> GuideBatch:
    """The buffer samples that pass the similarity gate (:func:`select_guides`: same
    instruction, similarity at or above the update's ``guide_quantile``, each at most once,
    at most ``guide_frac`` of the batch), with their log-probs under π_old."""
    device = next(model.parameters()).device
    b_views, b_text, b_actions = buffer.arrays()
    b_logits, b_keys = _policy_outputs(model, b_views, _text(bank, b_text, device))
    floor = (
        calibrate_floor(b_keys, b_text, quantile=cfg.guide_floor_quantile)
        if cfg.guide_floor is None
        else cfg.guide_floor
    )
    gate = select_guides(
        torch.as_tensor(roll.keys, device=device),
        roll.text_ids,
        b_keys,
        b_text,
        quantile=cfg.guide_quantile,
        max_frac=cfg.guide_frac,
        floor=floor,
    )
    sel = gate.sample
    lp = torch.log_softmax(b_logits[torch.as_tensor(sel, device=device)], -1)
    acts = b_actions[sel]
    logp_old = lp.gather(1, torch.as_tensor(acts, device=device).unsqueeze(1)).squeeze(1)
    return GuideBatch(
        views=b_views[sel],
        text_ids=b_text[sel],
        actions=acts,
        logp_old=logp_old.cpu().numpy(),
        similarity=gate.similarity,
        fraction=gate.fraction,
        floor=floor,
    )


@dataclass
class UpdateStats:
    kl: float
    guides: int
    retrieved_fraction: float
    guide_similarity: float
    guide_floor: float
    vqa_loss: float


def _vqa_cotrain(
    model: SyVLA,
    optimizer: torch.optim.Optimizer,
    vqa: VQASet,
    bank: TextBank,
    cfg: RLConfig,
    params: list[torch.Tensor],
    seed: int,
) -> list[float]:
    """``cfg.vqa_steps`` reasoning-head steps on questions about the rollout's states."""
    device = next(model.parameters()).device
    g = rng_for(seed, "rl", "vqa")
    losses = []
    for _ in range(cfg.vqa_steps):
        idx = g.choice(len(vqa), size=min(cfg.vqa_batch, len(vqa)), replace=False)
        logits = model.reason(
            _views(vqa.views[idx], device),
            _text(bank, bank.ids([vqa.questions[i] for i in idx]), device),
        )
        vloss = nn.functional.cross_entropy(
            logits, torch.as_tensor(vqa.answers[idx], device=device)
        )
        optimizer.zero_grad()
        vloss.backward()
        nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        optimizer.step()
        losses.append(float(vloss.detach()))
    return losses


def ppo_update(
    model: SyVLA,
    optimizer: torch.optim.Optimizer,
    roll: Rollout,
    cfg: RLConfig,
    bank: TextBank,
    *,
    buffer: SuccessBuffer | None,
    gen: torch.Generator,
    seed: int,
) -> UpdateStats:
    """One PPO update on ``roll`` (plus guides and VQA co-training when configured)."""
    device = next(model.parameters()).device
    adv = roll.advantages
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    n_on = len(roll.actions)
    views, text_ids, actions = roll.views, roll.text_ids, roll.actions
    logp_old, advs = roll.logp, adv
    is_on = np.ones(n_on, dtype=bool)
    guides = None
    if cfg.guided and buffer is not None and len(buffer):
        guides = retrieve_guides(model, roll, buffer, bank, cfg)
        if len(guides.actions):
            views = np.concatenate([views, guides.views])
            text_ids = np.concatenate([text_ids, guides.text_ids])
            actions = np.concatenate([actions, guides.actions])
            logp_old = np.concatenate([logp_old, guides.logp_old])
            advs = np.concatenate([advs, np.full(len(guides.actions), cfg.guide_advantage)])
            is_on = np.concatenate([is_on, np.zeros(len(guides.actions), dtype=bool)])
    returns = np.concatenate([roll.returns, np.zeros(len(actions) - n_on)])
    vqa = vqa_set(roll.views, seed=seed) if cfg.vqa_cotrain else None
    params = [p for g in optimizer.param_groups for p in g["params"]]
    for _ in range(cfg.epochs):
        for mb in minibatches(n_on, len(actions) - n_on, cfg.minibatch, gen):
            out = model(_views(views[mb], device), _text(bank, text_ids[mb], device))
            logp_all = torch.log_softmax(out.logits, -1)
            a = torch.as_tensor(actions[mb], device=device)
            logp = logp_all.gather(1, a.unsqueeze(1)).squeeze(1)
            loss = clipped_policy_loss(
                logp,
                torch.as_tensor(logp_old[mb], device=device, dtype=logp.dtype),
                torch.as_tensor(advs[mb], device=device, dtype=logp.dtype),
                cfg.clip,
            )
            on = torch.as_tensor(is_on[mb], device=device)
            if on.any():
                target = torch.as_tensor(returns[mb], device=device, dtype=logp.dtype)
                loss = loss + cfg.vf_coef * ((out.value - target)[on] ** 2).mean()
            entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
            loss = loss - cfg.ent_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            optimizer.step()
    vqa_losses = _vqa_cotrain(model, optimizer, vqa, bank, cfg, params, seed) if vqa else []
    new_logits, _ = _policy_outputs(model, roll.views, _text(bank, roll.text_ids, device))
    kl = policy_kl(torch.as_tensor(roll.logits, device=device), new_logits)
    n_guides = 0 if guides is None else len(guides.actions)
    return UpdateStats(
        kl=float(kl),
        guides=n_guides,
        retrieved_fraction=0.0 if guides is None else guides.fraction,
        guide_similarity=(
            float(guides.similarity.mean()) if guides is not None and n_guides else float("nan")
        ),
        guide_floor=float("nan") if guides is None else guides.floor,
        vqa_loss=float(np.mean(vqa_losses)) if vqa_losses else float("nan"),
    )


@dataclass
class RLResult:
    kl: list[float] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    success: list[float] = field(default_factory=list)
    guides: list[int] = field(default_factory=list)
    retrieved_fraction: list[float] = field(default_factory=list)


def train_rl(
    model: SyVLA,
    cfg: RLConfig,
    bank: TextBank,
    *,
    demo_views: np.ndarray,
    demo_text_ids: np.ndarray,
    demo_actions: np.ndarray,
    seed: int,
    on_update: Callable[[int, float, float, UpdateStats], None] | None = None,
) -> RLResult:
    """``cfg.updates`` rollout-and-update rounds on the ``train`` split (rooms from the seed's
    ``env/rl`` stream, action sampling from its ``rl/policy`` stream).

    Args:
        model: the network, trained in place (``model.decouple`` decides whether the policy
            and value losses reach the backbone).
        cfg: the settings.
        bank: embeddings of every instruction and question.
        demo_views: the views of the demonstrations that seed the guidance buffer.
        demo_text_ids: their instructions' token ids.
        demo_actions: their actions.
        seed: the run seed of this repetition.
        on_update: called after every update with (update, mean return, success rate, stats).

    Returns:
        :class:`RLResult`: per-update KL, returns, success, guide counts, retrieved fractions.
    """
    gen = torch.Generator().manual_seed(seed_for(seed, "rl", "policy"))
    env = VecEnv(
        cfg.n_envs, "train", model.cfg.view_size, seed=seed, stream="rl", levels=cfg.levels
    )
    env.reset()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    buffer = (
        SuccessBuffer(demo_views, demo_text_ids, demo_actions, capacity=cfg.success_capacity)
        if cfg.guided
        else None
    )
    result = RLResult()
    for u in range(cfg.updates):
        roll = collect_rollout(model, env, bank, cfg, gen)
        stats = ppo_update(
            model,
            optimizer,
            roll,
            cfg,
            bank,
            buffer=buffer,
            gen=gen,
            seed=seed_for(seed, "rl", "update", u),
        )
        if buffer is not None:  # after the update: a state must not retrieve itself as a guide
            m = roll.success_mask
            buffer.add(roll.views[m], roll.text_ids[m], roll.actions[m])
        mean_ret = float(np.mean(roll.episode_returns)) if roll.episode_returns else 0.0
        succ = float(np.mean(roll.episode_success)) if roll.episode_success else 0.0
        result.kl.append(stats.kl)
        result.returns.append(mean_ret)
        result.success.append(succ)
        result.guides.append(stats.guides)
        result.retrieved_fraction.append(stats.retrieved_fraction)
        if on_update is not None:
            on_update(u, mean_ret, succ, stats)
    return result
