"""Stage 2: GRPO on the adaptive reward, through the shared TRL path.

Training runs on :func:`icml26.shared.llm.grpo.train_grpo` (TRL's ``GRPOTrainer``, its own
``Trainer.train()``), with the reward of :mod:`~icml26.adaptive_reasoning.reward`
(correctness and reasoning tokens: no complexity label) and a TRL ``rollout_func``
(:func:`mode_rollout`) that generates the replies: the mode token first, then the rest.

Mode collapse. Plain GRPO (``guard="none"``) lets the policy sample its own mode token; once
one mode wins early it stops being sampled and can never come back (Thinkless reports this).
The guard ``"balanced"`` (default; AdaptThink samples both modes for the same reason) forces
the mode token of half of every group to think and half to no-think, so each group compares
the two modes on its own prompt by their reward (accuracy and cost) however peaked the
policy has become. The forced mode token stays in the completion, so its term pushes towards
the mode whose half of the group earned more; which mode that is comes from the reward, never
from a label. ``guard="none"`` is the ablation.

The baselines trained in one mode (always-think, never-think, the length-penalty reasoner)
use ``force``: every reply starts with that mode token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from icml26.adaptive_reasoning.answers import AnswerChecker
from icml26.adaptive_reasoning.modes import Mode
from icml26.adaptive_reasoning.policy import Policy
from icml26.adaptive_reasoning.reward import COMPONENTS, adaptive_reward
from icml26.adaptive_reasoning.tasks import Problem

__all__ = [
    "GUARDS",
    "ModeGRPOSettings",
    "grpo_dataset",
    "mode_rollout",
    "rollout_batch",
    "train_mode_grpo",
]

Guard = Literal["balanced", "none"]
GUARDS = ("balanced", "none")


@dataclass(frozen=True)
class ModeGRPOSettings:
    """Knobs of stage 2.

    Attributes:
        steps: optimiser steps.
        prompts_per_step: distinct prompts per step.
        num_generations: the group size ``G``.
        max_new_tokens: reply length cap.
        temperature: sampling temperature.
        lr: learning rate.
        token_cost: reward cost per reasoning token (``0``: accuracy alone).
        guard: ``"balanced"`` (half of each group per mode) or ``"none"``.
        force: a mode every reply starts with (one-mode baselines), or ``None``.
        seed: TRL's seed.

    Raises:
        ValueError: a value out of range, or ``guard="balanced"`` with an odd group.
    """

    steps: int = 30
    prompts_per_step: int = 16
    num_generations: int = 8
    max_new_tokens: int = 40
    temperature: float = 1.0
    lr: float = 5e-4
    token_cost: float = 0.004
    guard: Guard = "balanced"
    force: Mode | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.guard not in GUARDS:
            raise ValueError(f"unknown guard {self.guard!r}; choose from {list(GUARDS)}")
        if self.force not in (None, "think", "no_think"):
            raise ValueError(f"force must be None, 'think' or 'no_think', got {self.force!r}")
        if self.guard == "balanced" and self.force is None and self.num_generations % 2:
            raise ValueError("guard='balanced' needs an even num_generations (half per mode)")
        if not self.token_cost >= 0:
            raise ValueError(f"token_cost must be >= 0, got {self.token_cost}")

    def forced_modes(self, n: int) -> list[Mode | None]:
        """The mode forced at each of ``n`` completions (groups of ``num_generations``
        consecutive completions, TRL's order)."""
        if self.force is not None:
            return [self.force] * n
        if self.guard == "none":
            return [None] * n
        g = self.num_generations
        return ["think" if i % g < g // 2 else "no_think" for i in range(n)]


def grpo_dataset(problems: Sequence[Problem]) -> list[dict[str, Any]]:
    """TRL rows: the chat prompt and the answer as a string. Nothing else (no complexity
    label, operation count or split) reaches the trainer."""
    return [
        {"prompt": [{"role": "user", "content": p.text}], "answer": str(p.answer)} for p in problems
    ]


def rollout_batch(
    policy: Policy, prompts: Sequence[Any], settings: ModeGRPOSettings
) -> dict[str, Any]:
    """What :func:`mode_rollout` returns for a batch: prompt ids, and completions whose first
    token is the mode (forced as :meth:`ModeGRPOSettings.forced_modes` says, or sampled
    between the two mode tokens) followed by the generated reply.

    Args:
        policy: the model being trained, with its tokenizer.
        prompts: TRL's prompts (chat message lists or strings), groups consecutive.
        settings: stage-2 knobs.

    Returns:
        ``{"prompt_ids", "completion_ids", "logprobs": None}`` (TRL recomputes the
        log-probabilities).

    Raises:
        ValueError: a balanced batch whose groups are not consecutive copies of one prompt.
    """
    texts = [p[-1]["content"] if isinstance(p, list) else str(p) for p in prompts]
    g = settings.num_generations
    if settings.guard == "balanced" and settings.force is None:
        for start in range(0, len(texts), g):
            if len(set(texts[start : start + g])) != 1 or len(texts) % g:
                raise ValueError("a balanced group must be G consecutive copies of a prompt")
    replies = policy.generate(
        texts,
        force=settings.forced_modes(len(texts)),
        max_new_tokens=settings.max_new_tokens,
        temperature=settings.temperature,
    )
    return {
        "prompt_ids": [policy.prompt_ids(t) for t in texts],
        "completion_ids": [list(r.ids) for r in replies],
        "logprobs": None,
    }


def mode_rollout(settings: ModeGRPOSettings) -> Any:
    """A TRL ``rollout_func``: :func:`rollout_batch` on the trainer's model, unwrapped by
    TRL's ``unwrap_model_for_generation``."""

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from trl.models import unwrap_model_for_generation

        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model:
            out = rollout_batch(Policy(model, trainer.processing_class), prompts, settings)
            model.train()
        return out

    return rollout


def train_mode_grpo(
    policy: Policy,
    problems: Sequence[Problem],
    settings: ModeGRPOSettings,
    *,
    checker: AnswerChecker | None = None,
) -> list[dict[str, float]]:
    """Train ``policy.model`` in place with GRPO on ``problems``.

    Args:
        policy: the model after stage 1, with its tokenizer.
        problems: training problems (only their text and answer are used).
        settings: stage-2 knobs.
        checker: how answers are compared.

    Returns:
        TRL's per-step log (``reward``, ``rewards/correct/mean``,
        ``rewards/reasoning_cost/mean``, ...).

    Raises:
        ValueError: no problems.
    """
    from icml26.shared.llm.grpo import GRPOSettings, reward_components, train_grpo

    if not problems:
        raise ValueError("GRPO needs a non-empty list of training problems")
    shared = GRPOSettings(
        steps=settings.steps,
        prompts_per_step=settings.prompts_per_step,
        num_generations=settings.num_generations,
        max_completion_length=settings.max_new_tokens,
        lr=settings.lr,
        temperature=settings.temperature,
        loss_type="dapo",
        reward_weights=(1.0, settings.token_cost),
        seed=settings.seed,
    )
    rewards = reward_components(adaptive_reward(policy, checker), list(COMPONENTS))
    return train_grpo(
        policy.model,
        policy.tokenizer,
        rewards,
        grpo_dataset(problems),
        shared,
        rollout_func=mode_rollout(settings),
    )
