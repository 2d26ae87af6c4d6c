"""Training: the SFT warm start on oracle traces, then joint multi-agent GRPO.

One step of :func:`marl_step` draws ``P`` questions, plays ``G`` sampled team episodes of
each (all three roles act in every episode), computes the hybrid rewards and each role's
group-normalised advantages (:mod:`icml26.decor.rewards`), and updates *every* role on the
turns it owns, each with its own optimiser. The loss is the clipped GRPO surrogate of
:func:`icml26.shared.llm.grpo.reference_grpo_loss` (token-level mean, ``"dapo"``) over the
policy's own tokens only: the mask of every turn is 0 on retrieved text, so no loss term and
no gradient comes from it (a test checks the gradient with respect to those logits is zero).

The monolithic baseline trains the same way (:func:`monolithic_step`): one policy, reward
``w * F1 + (1 - w) * EM`` of its answer (its only intrinsic signal), the same ``P``, ``G``,
optimiser and loss.

Why not :class:`icml26.shared.llm.roles.MultiRoleTrainer`: its roles each sample their own
TRL batch, while DECOR's roles act in the *same* episodes, and a role's advantage compares the
``G`` episodes of a question; a Filter turn is not a TRL completion of its own prompt batch.
This loop reuses the shared maths (advantages, loss, SFT, rollouts) and imports no
``transformers.Trainer`` (about 29 CPU-s per process), which the ``quick`` budget cannot pay.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from icml26.decor.data.types import Question
from icml26.decor.episodes import EpisodeSettings, Turn, run_monolithic, run_team
from icml26.decor.policies import ROLES, RolePolicy, Sampling
from icml26.decor.retrieval import Search
from icml26.decor.rewards import hybrid_rewards, role_advantages

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "RLSettings",
    "make_optimizers",
    "marl_step",
    "masked_policy_loss",
    "monolithic_step",
    "pad_turns",
    "update_policy",
]


@dataclass(frozen=True)
class RLSettings:
    """Knobs of the RL phase.

    Attributes:
        steps: optimiser steps (each updates every role once).
        questions_per_step: ``P``; group_size: ``G`` sampled episodes per question.
        w: weight of the intrinsic signals (0: outcome only).
        lr: AdamW learning rate per role; max_grad_norm: clipping.
        temperature: sampling temperature of the rollouts.
        epsilon: clip range of the surrogate (one update per batch, so the ratio is 1 and
            clipping only matters for ``num_iterations > 1`` in the shared loss).
        max_turns_per_batch: role turns per forward pass (memory bound).
    """

    steps: int = 20
    questions_per_step: int = 4
    group_size: int = 8
    w: float = 0.5
    lr: float = 1e-4
    max_grad_norm: float = 1.0
    temperature: float = 1.0
    epsilon: float = 0.2
    max_turns_per_batch: int = 256

    def __post_init__(self) -> None:
        if self.steps < 0 or self.questions_per_step < 1 or self.max_turns_per_batch < 1:
            raise ValueError("need steps >= 0, questions_per_step >= 1, max_turns_per_batch >= 1")
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2 (a group advantage), got {self.group_size}")
        if not 0.0 <= self.w <= 1.0:
            raise ValueError(f"w must be in [0, 1], got {self.w}")
        if not self.lr > 0 or not self.temperature > 0 or not self.max_grad_norm > 0:
            raise ValueError("lr, temperature and max_grad_norm must be > 0")


def pad_turns(turns: Sequence[Turn], pad_id: int) -> dict[str, Any]:
    """Right-padded ``input_ids`` (prompt + completion), ``attention_mask`` and
    ``loss_mask``, all ``(B, T)``; ``loss_mask[b, t] = 1`` when token ``t`` is one the policy
    generated (so the logits at ``t - 1`` are trained)."""
    import torch

    width = max(len(t.prompt) + len(t.completion) for t in turns)
    ids = torch.full((len(turns), width), pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    loss_mask = torch.zeros_like(ids)
    for b, t in enumerate(turns):
        seq = t.prompt + t.completion
        ids[b, : len(seq)] = torch.tensor(seq)
        attention[b, : len(seq)] = 1
        loss_mask[b, len(t.prompt) : len(seq)] = torch.tensor(t.mask)
    return {"input_ids": ids, "attention_mask": attention, "loss_mask": loss_mask}


def masked_policy_loss(
    logits: torch.Tensor,
    input_ids: torch.Tensor,
    loss_mask: torch.Tensor,
    advantages: torch.Tensor,
    *,
    epsilon: float = 0.2,
    old_logps: torch.Tensor | None = None,
) -> torch.Tensor:
    """The shared GRPO surrogate on next-token log-probabilities: ``logits[:, t]`` scores
    ``input_ids[:, t + 1]``, and only positions with ``loss_mask[:, t + 1] == 1`` count."""
    import torch

    from icml26.shared.llm.grpo import reference_grpo_loss

    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    picked = logp.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    mask = loss_mask[:, 1:]
    old = picked.detach() if old_logps is None else old_logps
    return reference_grpo_loss(
        picked, old, advantages.to(picked.dtype), mask, epsilon_low=epsilon,
        epsilon_high=epsilon, loss_type="dapo",
    )  # fmt: skip


def make_optimizers(team: Mapping[str, RolePolicy], lr: float) -> dict[str, Any]:
    import torch

    return {
        name: torch.optim.AdamW(p.trainable(), lr=lr, weight_decay=0.0) for name, p in team.items()
    }


def update_policy(
    policy: RolePolicy,
    turns: Sequence[Turn],
    advantages: Sequence[float],
    optimizer: Any,
    settings: RLSettings,
) -> float:
    """One optimiser step of ``policy`` on its turns (skipped when every advantage is 0:
    no signal). The loss is a token-level mean over all turns, split into chunks of
    ``max_turns_per_batch`` whose gradients are summed with their token shares."""
    import torch

    adv = np.asarray(advantages, dtype=np.float64)
    keep = [i for i in range(len(turns)) if abs(adv[i]) > 1e-8 and any(turns[i].mask)]
    if not keep:
        return 0.0
    policy.activate()
    model = policy.model
    pad = policy.tokenizer.pad_token_id or 0
    total_tokens = sum(sum(turns[i].mask) for i in keep)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    total = 0.0
    for start in range(0, len(keep), settings.max_turns_per_batch):
        chunk = keep[start : start + settings.max_turns_per_batch]
        batch = {
            k: v.to(policy.device) for k, v in pad_turns([turns[i] for i in chunk], pad).items()
        }
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss = masked_policy_loss(
            logits, batch["input_ids"], batch["loss_mask"],
            torch.tensor(adv[chunk], device=policy.device), epsilon=settings.epsilon,
        )  # fmt: skip
        share = float(batch["loss_mask"][:, 1:].sum()) / total_tokens
        (loss * share).backward()
        total += float(loss.detach()) * share
    torch.nn.utils.clip_grad_norm_(policy.trainable(), settings.max_grad_norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    model.eval()
    return total


def _draw(questions: Sequence[Question], n: int, rng: np.random.Generator) -> list[Question]:
    idx = rng.choice(len(questions), size=min(n, len(questions)), replace=False)
    return [questions[int(i)] for i in idx]


def marl_step(
    team: Mapping[str, RolePolicy],
    optimizers: Mapping[str, Any],
    search: Search,
    questions: Sequence[Question],
    episode_settings: EpisodeSettings,
    settings: RLSettings,
    rng: np.random.Generator,
) -> dict[str, float]:
    """One joint step of all three roles (module docstring); returns the step's log."""
    t0 = time.perf_counter()
    drawn = _draw(questions, settings.questions_per_step, rng)
    batch = [q for q in drawn for _ in range(settings.group_size)]
    sampling = Sampling(greedy=False, temperature=settings.temperature)
    episodes = run_team(team, search, batch, episode_settings, sampling)
    rewards = hybrid_rewards(episodes, settings.w)
    judged = ~np.isnan(rewards["filter_intrinsic"])
    log: dict[str, float] = {
        k: float(np.mean(v)) for k, v in rewards.items() if k != "filter_intrinsic"
    }
    # The Filter is judged only on episodes that retrieved gold (rewards.py): log its mean there
    # (0 when none did) and how many were judged.
    log["filter_intrinsic"] = (
        float(rewards["filter_intrinsic"][judged].mean()) if judged.any() else 0.0
    )
    log["filter_judged"] = float(judged.mean())
    for role in ROLES:
        adv = role_advantages(rewards[role], settings.group_size)
        turns: list[Turn] = []
        per_turn: list[float] = []
        for ep, a in zip(episodes, adv, strict=True):
            for t in ep.turns.get(role, []):
                turns.append(t)
                per_turn.append(float(a))
        log[f"loss_{role}"] = update_policy(team[role], turns, per_turn, optimizers[role], settings)
    log["search_calls"] = float(np.mean([e.search_calls for e in episodes]))
    log["seconds"] = time.perf_counter() - t0
    return log


def monolithic_step(
    agent: RolePolicy,
    optimizer: Any,
    search: Search,
    questions: Sequence[Question],
    episode_settings: EpisodeSettings,
    settings: RLSettings,
    rng: np.random.Generator,
) -> dict[str, float]:
    """One GRPO step of the monolithic agent (reward ``w * F1 + (1 - w) * EM``)."""
    from icml26.decor.rewards import answer_scores

    t0 = time.perf_counter()
    drawn = _draw(questions, settings.questions_per_step, rng)
    batch = [q for q in drawn for _ in range(settings.group_size)]
    sampling = Sampling(greedy=False, temperature=settings.temperature)
    episodes = run_monolithic(agent, search, batch, episode_settings, sampling)
    em, f1 = (np.array(v) for v in zip(*map(answer_scores, episodes), strict=True))
    reward = settings.w * f1 + (1 - settings.w) * em
    adv = role_advantages(reward, settings.group_size)
    turns = [ep.turns["monolithic"][0] for ep in episodes]
    loss = update_policy(agent, turns, list(adv), optimizer, settings)
    return {
        "em": float(em.mean()),
        "f1": float(f1.mean()),
        "reward": float(reward.mean()),
        "loss_monolithic": loss,
        "search_calls": float(np.mean([e.search_calls for e in episodes])),
        "seconds": time.perf_counter() - t0,
    }
