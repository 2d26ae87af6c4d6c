"""Joint multi-agent GRPO on the shared path (TRL's ``GRPOTrainer``, one per role).

One step of :func:`train_decor` draws ``P`` questions, plays ``G`` sampled team episodes of
each (all three roles act in every episode: :func:`~icml26.decor.episodes.run_team`),
computes the hybrid rewards (:mod:`icml26.decor.rewards`), and then runs one ordinary TRL
step (``Trainer.train()``: its loss, optimiser, clipping, logging) for *each* role, built by
:func:`icml26.shared.llm.grpo.make_grpo_trainer`. Each role's trainer gets the episodes
through its ``rollout_func``: the role's own conversation of each episode as the completion
(the Planner's queries, the Filter's verdicts, the Answerer's answer) with ``env_mask`` 0 on
every token the environment wrote (retrieved passages), and the role's reward as an extra
field that its reward function passes on. TRL then forms the group-relative advantages over
the ``G`` episodes of a question, exactly as for a single policy.

Every role trains on episodes generated before any role's update of that step (the team
acts once, then each role updates on its own turns): on-policy for each role.

The Filter is not trained on an episode that retrieved no evidence (its advantage there is
exactly 0 and its tokens leave the loss through ``env_mask``); its advantages are scaled by
the std of the judged episodes only and handed to a trainer with ``scale_rewards="none"``
(:func:`icml26.decor.rewards.judged_advantages`), so its step size does not depend on how
many episodes of the group were judged. The monolithic baselines (:func:`train_monolithic`) go through
the same trainer with one role.

Roles are separate models (tiny layout) or adapters of one peft model (LoRA layout); with
adapters, each role's trainer and optimiser are built while its adapter is the active,
trainable one (as :class:`icml26.shared.llm.roles.MultiRoleTrainer` does).
"""

from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from icml26.decor.data.types import Question
from icml26.decor.episodes import Episode, EpisodeSettings, Turn, run_monolithic, run_team
from icml26.decor.policies import ROLES, RolePolicy, Sampling
from icml26.decor.retrieval import Search
from icml26.decor.rewards import (
    filled_rewards,
    hybrid_rewards,
    judged_advantages,
    monolithic_rewards,
)

__all__ = ["TrainSettings", "train_decor", "train_monolithic"]


@dataclass(frozen=True)
class TrainSettings:
    """Knobs of the RL phase (DECOR and the monolithic baselines alike).

    Attributes:
        steps: steps; each updates every role once.
        questions_per_step: ``P`` distinct questions per step.
        group_size: ``G`` sampled episodes per question (>= 2).
        w: weight of the intrinsic signals (0: outcome only).
        lr: AdamW learning rate per role (constant).
        temperature: sampling temperature of the rollouts (TRL scores with the same one).
        epsilon: clip range of the surrogate.
        seed: the question draw's seed.
        rollout_seed: the sampling stream's seed (TRL's ``seed``, which reseeds torch when
            the trainers are built, so the rollouts start from it); ``None``: ``seed``.
            Give each method its own so two methods do not sample the same episodes.

    Raises:
        ValueError: a value out of range (named in the message).
    """

    steps: int = 20
    questions_per_step: int = 4
    group_size: int = 8
    w: float = 0.5
    lr: float = 1e-4
    temperature: float = 1.0
    epsilon: float = 0.2
    seed: int = 0
    rollout_seed: int | None = None

    def __post_init__(self) -> None:
        if self.steps < 0 or self.questions_per_step < 1:
            raise ValueError(
                f"need steps >= 0 and questions_per_step >= 1, got {self.steps}, {self.questions_per_step}"
            )
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2 (a group advantage), got {self.group_size}")
        if not 0.0 <= self.w <= 1.0:
            raise ValueError(f"w must be in [0, 1], got {self.w}")
        if not self.lr > 0 or not self.temperature > 0 or not 0 < self.epsilon < 1:
            raise ValueError("need lr > 0, temperature > 0 and 0 < epsilon < 1")


def _payload(turns: Sequence[Turn | None], rewards: np.ndarray, eos: int) -> dict[str, Any]:
    """A ``rollout_func`` result: one completion per episode (an empty role turn becomes one
    masked EOS token)."""
    prompts, comps, masks = [], [], []
    for t in turns:
        if t is None or not t.completion:
            prompts.append([eos])
            comps.append([eos])
            masks.append([0])
        else:
            prompts.append(list(t.prompt))
            comps.append(list(t.completion))
            masks.append(list(t.mask))
    return {
        "prompt_ids": prompts,
        "completion_ids": comps,
        "logprobs": None,
        "env_mask": masks,
        "role_reward": [float(r) for r in rewards],
    }


def role_reward(
    prompts: list[Any], completions: list[Any], role_reward: Sequence[float], **_: Any
) -> list[float]:
    """The TRL reward function of every role: the reward the episode runner computed."""
    return [float(r) for r in role_reward]


class _RoleTrainers:
    """One ``GRPOTrainer`` per policy, fed by replay (module docstring)."""

    def __init__(
        self, policies: Mapping[str, RolePolicy], settings: TrainSettings, max_len: int
    ) -> None:
        from icml26.shared.llm.grpo import GRPOSettings, make_grpo_trainer

        self.settings = settings
        self.policies = dict(policies)
        self.pending: dict[str, dict[str, Any]] = {}
        self.expected: list[str] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="icml26-decor-")
        grpo = GRPOSettings(
            steps=1,
            prompts_per_step=settings.questions_per_step,
            num_generations=settings.group_size,
            max_completion_length=max_len,
            lr=settings.lr,
            temperature=settings.temperature,
            epsilon=settings.epsilon,
            loss_type="dapo",
            seed=settings.seed if settings.rollout_seed is None else settings.rollout_seed,
        )
        rows = [{"prompt": f"q{i}"} for i in range(settings.questions_per_step)]
        self.trainers: dict[str, Any] = {}
        for name, policy in self.policies.items():
            policy.activate()
            trainer = make_grpo_trainer(
                policy.model,
                policy.tokenizer,
                [role_reward],
                rows,
                replace(grpo, scale_rewards="none") if name == "filter" else grpo,
                output_dir=Path(self._tmp.name) / name,
                rollout_func=self._replay(name),
                shuffle_dataset=False,
            )
            trainer.create_optimizer()  # over this role's parameters (its adapter's, if any)
            self.trainers[name] = trainer

    def _replay(self, name: str) -> Callable[[list[Any], Any], dict[str, Any]]:
        def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
            if list(prompts) != self.expected:
                raise RuntimeError(f"{name}: TRL asked for other prompts than the episodes played")
            return self.pending.pop(name)

        return rollout

    def update(
        self, name: str, questions: Sequence[Question], payload: dict[str, Any]
    ) -> dict[str, float]:
        """One TRL step of ``name`` on ``payload`` (the episodes of ``questions``, in order)."""
        from datasets import Dataset

        g = self.settings.group_size
        self.expected = [q.text for q in questions for _ in range(g)]
        self.pending[name] = payload
        trainer, policy = self.trainers[name], self.policies[name]
        trainer.train_dataset = Dataset.from_list([{"prompt": q.text} for q in questions])
        trainer.args.max_steps = 1
        policy.activate()
        policy.model.train()
        gc.freeze()  # accelerate's free_memory() would otherwise collect the whole heap
        try:
            trainer.train()
        finally:
            gc.unfreeze()
            policy.model.eval()
        logs = [h for h in trainer.state.log_history if "loss" in h and "reward" in h]
        trainer.state.log_history.clear()
        return {
            k: float(v) for k, v in (logs[-1] if logs else {}).items() if isinstance(v, int | float)
        }


def _draw(questions: Sequence[Question], n: int, rng: np.random.Generator) -> list[Question]:
    by_text = {q.text: q for q in questions}  # one question per text (TRL keys prompts by it)
    pool = list(by_text.values())
    idx = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    return [pool[int(i)] for i in idx]


def _check(questions: Sequence[Question], settings: TrainSettings) -> None:
    if len({q.text for q in questions}) < settings.questions_per_step:
        raise ValueError(
            f"{len({q.text for q in questions})} distinct questions for "
            f"questions_per_step={settings.questions_per_step}: give more questions or fewer per step"
        )


def train_decor(
    team: Mapping[str, RolePolicy],
    search: Search,
    questions: Sequence[Question],
    settings: TrainSettings,
    *,
    episode_settings: EpisodeSettings | None = None,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
) -> list[dict[str, float]]:
    """Train the Planner, Filter and Answerer of ``team`` jointly, in place (module docstring).

    Args:
        team: ``planner``, ``filter`` and ``answerer`` policies (:func:`make_tiny_team` or
            :func:`make_lora_team`), warm-started (a random policy earns no reward).
        search: the retriever the Planner's queries go to.
        questions: training questions; those without gold passage ids (a user's QA data)
            take the retrieved passages containing an answer as their evidence.
        settings: the RL knobs.
        episode_settings: episode budgets (default :class:`EpisodeSettings`).
        on_step: called with ``(step, log)`` after each step.

    Returns:
        One log per step: the mean reward components (``em``, ``f1``, ``planner_intrinsic``,
        ``filter_intrinsic``, ``filter_judged``), each role's TRL ``loss_<role>``,
        ``search_calls`` and ``seconds``.

    Raises:
        ValueError: a role missing from ``team``, or fewer distinct questions than
            ``questions_per_step``.
    """
    missing = [r for r in ROLES if r not in team]
    if missing:
        raise ValueError(f"the team has no {missing} policy (needs {list(ROLES)})")
    _check(questions, settings)
    eps_settings = episode_settings or EpisodeSettings()
    roles = {r: team[r] for r in ROLES}
    trainers = _RoleTrainers(roles, settings, eps_settings.max_context)
    rng = np.random.default_rng(settings.seed)
    sampling = Sampling(greedy=False, temperature=settings.temperature)
    history = []
    for step in range(settings.steps):
        t0 = time.perf_counter()
        drawn = _draw(questions, settings.questions_per_step, rng)
        batch = [q for q in drawn for _ in range(settings.group_size)]
        episodes = run_team(roles, search, batch, eps_settings, sampling)
        rewards = hybrid_rewards(episodes, settings.w)
        log = _reward_log(rewards)
        for role in ROLES:
            turns = [(e.turns.get(role) or [None])[0] for e in episodes]
            if role == "filter":  # not trained where not judged: those tokens leave the loss
                r = judged_advantages(rewards[role], settings.group_size)  # scale_rewards "none"
                turns = [
                    t if np.isfinite(x) else _masked(t)
                    for t, x in zip(turns, rewards[role], strict=True)
                ]
            else:
                r = filled_rewards(rewards[role], settings.group_size)
            eos = int(roles[role].tokenizer.eos_token_id)
            trl = trainers.update(role, drawn, _payload(turns, r, eos))
            log[f"loss_{role}"] = trl.get("loss", 0.0)
        log["search_calls"] = float(np.mean([e.search_calls for e in episodes]))
        log["seconds"] = time.perf_counter() - t0
        history.append(log)
        if on_step is not None:
            on_step(step, log)
    return history


def _masked(turn: Turn | None) -> Turn | None:
    return None if turn is None else Turn(turn.prompt, turn.completion, [0] * len(turn.mask))


def _reward_log(rewards: Mapping[str, np.ndarray]) -> dict[str, float]:
    judged = ~np.isnan(rewards["filter_intrinsic"])
    log = {k: float(np.mean(rewards[k])) for k in ("em", "f1", "planner_intrinsic")}
    log["filter_intrinsic"] = (
        float(rewards["filter_intrinsic"][judged].mean()) if judged.any() else 0.0
    )
    log["filter_judged"] = float(judged.mean())
    return log


def train_monolithic(
    agent: RolePolicy,
    search: Search,
    questions: Sequence[Question],
    settings: TrainSettings,
    *,
    shaped: bool = False,
    episode_settings: EpisodeSettings | None = None,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
) -> list[dict[str, float]]:
    """GRPO of the monolithic agent through the same trainer, in place.

    Args:
        agent: the monolithic policy (searches and answers).
        search: as for :func:`train_decor`.
        questions: as for :func:`train_decor`.
        settings: as for :func:`train_decor`.
        episode_settings: as for :func:`train_decor`.
        on_step: as for :func:`train_decor`.
        shaped: add the evidence shaping DECOR's roles get
            (:func:`icml26.decor.rewards.monolithic_rewards`).

    Returns:
        One log per step: ``em``, ``f1``, ``reward``, ``loss_monolithic``, ``search_calls``,
        ``seconds``.

    Raises:
        ValueError: fewer distinct questions than ``questions_per_step``.
    """
    from icml26.decor.rewards import answer_scores

    _check(questions, settings)
    eps_settings = episode_settings or EpisodeSettings()
    trainers = _RoleTrainers({"monolithic": agent}, settings, eps_settings.max_context)
    rng = np.random.default_rng(settings.seed)
    sampling = Sampling(greedy=False, temperature=settings.temperature)
    eos = int(agent.tokenizer.eos_token_id)
    history = []
    for step in range(settings.steps):
        t0 = time.perf_counter()
        drawn = _draw(questions, settings.questions_per_step, rng)
        batch = [q for q in drawn for _ in range(settings.group_size)]
        label = "monolithic_shaped" if shaped else "monolithic"
        episodes: list[Episode] = run_monolithic(
            agent, search, batch, eps_settings, sampling, method=label
        )
        reward = monolithic_rewards(episodes, settings.w, shaped=shaped)
        turns = [e.turns["monolithic"][0] for e in episodes]
        trl = trainers.update("monolithic", drawn, _payload(turns, reward, eos))
        em, f1 = (np.array(v) for v in zip(*map(answer_scores, episodes), strict=True))
        log = {
            "em": float(em.mean()),
            "f1": float(f1.mean()),
            "reward": float(reward.mean()),
            "loss_monolithic": trl.get("loss", 0.0),
            "search_calls": float(np.mean([e.search_calls for e in episodes])),
            "seconds": time.perf_counter() - t0,
        }
        history.append(log)
        if on_step is not None:
            on_step(step, log)
    return history
