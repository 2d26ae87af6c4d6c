"""Stage 2: GRPO on the adaptive reward, with a guard against mode collapse.

The maths is the shared one (:func:`icml26.shared.llm.grpo.group_advantages`,
:func:`icml26.shared.llm.grpo.reference_grpo_loss`): per prompt a group of ``G`` replies, the
group-relative advantage ``A_i = (r_i - mean r) / (std r + 1e-4)``, the clipped surrogate.
This loop drives it directly instead of TRL's ``GRPOTrainer`` because the mode token needs its
own treatment, which the trainer has no hook for (and importing the trainer costs about 30 s
of CPU, a fifth of the ``quick`` budget).

Mode collapse. Plain GRPO (``guard="none"``) averages the loss over all reply tokens: a think
reply has tens of tokens and a no-think reply two or three, so the single mode token gets a
tiny, length-dependent share of the gradient, and once one mode wins early (no-think is
cheaper on simple problems, think is right on complex ones) the other stops being sampled and
can never come back: Thinkless reports exactly this collapse. Two guards:

* ``"decoupled"`` (Thinkless' decoupled GRPO): the mode token's loss is averaged over
  replies, the response tokens' over tokens, and the two are added
  (``mode_loss_weight`` scales the first), so the mode decision learns at a rate that does not
  depend on reply length;
* ``"balanced"`` (default): decoupled, and each group is sampled half in think mode and half
  in no-think mode (the mode token forced), so every group compares the two modes on its own
  prompt however peaked the policy has become. Decoupling only rebalances the gradient; it
  cannot revive a mode the policy no longer samples, which balanced groups rule out by
  construction. The price: the mode token of a forced reply is not the policy's own sample,
  so its term is a supervised-style push towards the better mode of each group (its advantage
  sign), not an unbiased policy gradient.

The mode token's log-probability is that of the two-way mode policy (a softmax over the think
and no-think logits at the first reply position): a negative advantage on a forced mode then
moves probability to the other mode, not to arbitrary tokens such as end-of-turn (which a
full-vocabulary log-probability lets it do: we saw replies that ended before choosing a mode).

Logged per step: the reward and its components, the policy's think probability on the step's
prompts (mean, on simple and on complex ones) and the mode entropy ``H(mean_i p_i)`` in bits
(0 when collapsed to one mode).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from icml26.adaptive_reasoning.policy import Policy, binary_entropy
from icml26.adaptive_reasoning.reward import (
    COMPONENTS,
    RewardWeights,
    reward_components,
    total_reward,
)
from icml26.adaptive_reasoning.tasks import Problem

__all__ = ["GUARDS", "GRPOStats", "ModeGRPOSettings", "train_mode_grpo"]

Guard = Literal["balanced", "decoupled", "none"]
GUARDS = ("balanced", "decoupled", "none")


@dataclass(frozen=True)
class ModeGRPOSettings:
    """Knobs of stage 2.

    Attributes:
        steps: optimiser steps; prompts_per_step: prompts per step; num_generations: ``G``.
        max_new_tokens: reply length cap; temperature: sampling temperature.
        lr: AdamW learning rate; max_grad_norm: clipping.
        guard: ``"balanced"``, ``"decoupled"`` or ``"none"`` (module docstring).
        mode_loss_weight: weight of the mode-token term under a guard.
        weights: the reward weights.
    """

    steps: int = 30
    prompts_per_step: int = 16
    num_generations: int = 8
    max_new_tokens: int = 40
    temperature: float = 1.0
    lr: float = 5e-4
    max_grad_norm: float = 1.0
    guard: Guard = "balanced"
    mode_loss_weight: float = 1.0
    weights: RewardWeights = field(default_factory=RewardWeights)

    def __post_init__(self) -> None:
        for name in ("steps",):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        for name in ("prompts_per_step", "max_new_tokens"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.num_generations < 2:
            raise ValueError(f"num_generations must be >= 2 (a group), got {self.num_generations}")
        if self.guard == "balanced" and self.num_generations % 2:
            raise ValueError("guard='balanced' needs an even num_generations (half per mode)")
        if self.guard not in GUARDS:
            raise ValueError(f"unknown guard {self.guard!r}; choose from {list(GUARDS)}")
        if not self.temperature > 0 or not self.lr > 0 or not self.max_grad_norm > 0:
            raise ValueError("temperature, lr and max_grad_norm must be > 0")
        if not self.mode_loss_weight >= 0:
            raise ValueError(f"mode_loss_weight must be >= 0, got {self.mode_loss_weight}")


@dataclass
class GRPOStats:
    """Per-step log of a stage-2 run (lists aligned by step) and its wall/CPU seconds."""

    reward: list[float] = field(default_factory=list)
    components: dict[str, list[float]] = field(default_factory=lambda: {c: [] for c in COMPONENTS})
    think_prob: list[float] = field(default_factory=list)
    think_prob_simple: list[float] = field(default_factory=list)
    think_prob_complex: list[float] = field(default_factory=list)
    mode_entropy: list[float] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "components": self.components,
            "think_prob": self.think_prob,
            "think_prob_simple": self.think_prob_simple,
            "think_prob_complex": self.think_prob_complex,
            "mode_entropy": self.mode_entropy,
            "seconds": self.seconds,
            "cpu_seconds": self.cpu_seconds,
        }


def _mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs)) if len(xs) else float("nan")


def train_mode_grpo(
    policy: Policy,
    pool: Sequence[Problem],
    settings: ModeGRPOSettings,
    *,
    rng: np.random.Generator,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
) -> GRPOStats:
    """Train ``policy.model`` in place with GRPO on problems drawn from ``pool``.

    Raises:
        ValueError: an empty pool, or a model with no trainable parameters.
    """
    import torch

    from icml26.shared.llm.grpo import group_advantages, reference_grpo_loss

    if not pool:
        raise ValueError("GRPO needs a non-empty pool of training problems")
    params = [p for p in policy.model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("the model has no trainable parameters")
    opt = torch.optim.AdamW(params, lr=settings.lr, weight_decay=0.0)
    g = settings.num_generations
    stats = GRPOStats()
    t0, c0 = time.perf_counter(), time.process_time()
    for step in range(settings.steps):
        idx = rng.choice(
            len(pool), size=settings.prompts_per_step, replace=len(pool) < settings.prompts_per_step
        )
        prompts = [pool[int(i)] for i in idx]
        group = [p for p in prompts for _ in range(g)]
        force: list[Any] = (
            ["think" if j < g // 2 else "no_think" for _ in prompts for j in range(g)]
            if settings.guard == "balanced"
            else [None] * len(group)
        )
        replies = policy.generate(
            group,
            force=force,
            max_new_tokens=settings.max_new_tokens,
            temperature=settings.temperature,
            seed=int(rng.integers(2**31)),
        )
        comps = reward_components(group, replies, settings.weights)
        rewards = torch.tensor(total_reward(comps), dtype=torch.float32)
        adv = group_advantages(rewards, g).to(policy.device)
        policy.model.train()
        logps, mask, mode_logits = policy.token_logps(
            [policy.prompt_ids(p) for p in group], [r.ids for r in replies]
        )
        # the mode token's log-probability under the two-way mode policy (think vs no-think):
        # a negative advantage then moves mass to the other mode, not to arbitrary tokens
        chosen = torch.tensor(
            [0 if r.ids[0] == policy.think_id else 1 for r in replies], device=policy.device
        )
        mode_logp = torch.log_softmax(mode_logits, dim=-1).gather(1, chosen[:, None])
        logps = torch.cat([mode_logp, logps[:, 1:]], dim=1)
        old = logps.detach()  # one update per batch: pi_old = pi
        if settings.guard == "none":
            loss = reference_grpo_loss(logps, old, adv, mask, loss_type="dapo")
        else:
            mode_mask = torch.zeros_like(mask)
            mode_mask[:, 0] = mask[:, 0]
            resp_mask = mask - mode_mask
            loss = settings.mode_loss_weight * reference_grpo_loss(
                logps, old, adv, mode_mask, loss_type="grpo"
            ) + reference_grpo_loss(logps, old, adv, resp_mask, loss_type="dapo")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, settings.max_grad_norm)
        opt.step()
        policy.model.eval()
        # the policy's own mode distribution on this step's prompts (before the update)
        p_think = torch.softmax(mode_logits.detach()[::g], dim=-1)[:, 0].cpu().numpy()
        simple = np.array([not p.complex for p in prompts])
        row = {
            "reward": float(rewards.mean()),
            **{f"reward_{c}": _mean(comps[c]) for c in COMPONENTS},
            "think_prob": float(p_think.mean()),
            "think_prob_simple": float(p_think[simple].mean()) if simple.any() else float("nan"),
            "think_prob_complex": float(p_think[~simple].mean())
            if (~simple).any()
            else float("nan"),
            "mode_entropy": binary_entropy(float(p_think.mean())),
        }
        stats.reward.append(row["reward"])
        for c in COMPONENTS:
            stats.components[c].append(row[f"reward_{c}"])
        stats.think_prob.append(row["think_prob"])
        stats.think_prob_simple.append(row["think_prob_simple"])
        stats.think_prob_complex.append(row["think_prob_complex"])
        stats.mode_entropy.append(row["mode_entropy"])
        if on_step is not None:
            on_step(step, row)
    stats.seconds, stats.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    return stats
