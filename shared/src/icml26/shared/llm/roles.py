"""Several policies trained in one run: one LoRA adapter per role on one base model.

MAGIC trains an attacker and a defender, DECOR a planner, a filter and an answerer; each role
has its own prompts, its own reward and its own optimiser, and the roles take turns (or all
train every step). Here:

* one peft ``PeftModel`` holds one adapter per role (the base weights are shared and frozen);
  ``set_adapter(role)`` before each phase makes that role's adapter the active and only
  trainable one;
* each role has its own TRL ``GRPOTrainer`` (its reward functions, :class:`GRPOSettings`,
  optional ``rollout_func``) and its own optimiser over its own adapter's parameters only, so
  an idle role's adapter stays bit-identical while another trains (a test checks it);
* each role draws its prompts from a callable (``prompts(rng) -> rows``), so one role's
  outputs can become another's inputs (a proposer's problems for a solver, an attacker's
  rewrites for a defender);
* a schedule decides who trains: :class:`Alternating` (switch every ``N`` steps),
  :class:`AlternatingOnMetric` (switch when the training role's metric, e.g. an attack
  success rate, crosses a threshold, or after ``max_steps``), :class:`Joint` (every role every
  step).

One step of a role is TRL's ``training_step`` (generation, rewards, group advantages, the
clipped loss and its backward pass) followed by that role's optimiser step, driven by
:class:`MultiRoleTrainer` instead of ``Trainer.train`` (which owns one optimiser and one
data loader). Single process only: for several GPUs, run one process per role or use
:func:`icml26.shared.llm.grpo.make_grpo_trainer` per phase under accelerate.
"""

from __future__ import annotations

import abc
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from icml26.shared.llm.grpo import GRPOSettings, RewardFn, make_grpo_trainer

__all__ = [
    "Alternating",
    "AlternatingOnMetric",
    "Joint",
    "MultiRoleTrainer",
    "Role",
    "RoleError",
    "Schedule",
]


class RoleError(ValueError):
    """A role name with no adapter, repeated role names, or a schedule naming no role."""


@dataclass
class Role:
    """One policy of a multi-role run.

    Attributes:
        name: the role's adapter name in the ``PeftModel``.
        reward_funcs: its TRL reward functions.
        prompts: ``prompts(rng) -> rows``: one step's ``settings.prompts_per_step`` rows, each
            ``{"prompt": ..., **columns the reward functions read}``.
        settings: its GRPO settings (``steps`` is ignored: the schedule decides).
        rollout_func: optional TRL ``rollout_func`` (multi-turn episodes).
    """

    name: str
    reward_funcs: Sequence[RewardFn]
    prompts: Callable[[np.random.Generator], list[dict[str, Any]]]
    settings: GRPOSettings = field(default_factory=GRPOSettings)
    rollout_func: Callable[..., dict[str, Any]] | None = None


class Schedule(abc.ABC):
    """Decides which roles train at each step (subclasses below)."""

    @abc.abstractmethod
    def roles_for_step(
        self, step: int, roles: Sequence[str], history: list[dict[str, Any]]
    ) -> list[str]:
        """The roles to train at ``step`` (Alternating, AlternatingOnMetric, Joint)."""


@dataclass(frozen=True)
class Alternating(Schedule):
    """Each role trains for ``every`` consecutive steps, in the order given (MAGIC: 15)."""

    every: int = 10

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError(f"every must be >= 1, got {self.every}")

    def roles_for_step(
        self, step: int, roles: Sequence[str], history: list[dict[str, Any]]
    ) -> list[str]:
        return [roles[(step // self.every) % len(roles)]]


@dataclass
class AlternatingOnMetric(Schedule):
    """The training role keeps training until its logged ``metric`` (mean over the last
    ``window`` of its steps) goes above (``above=True``) or below ``threshold``, or it has had
    ``max_steps`` steps in a row (at least ``min_steps``); then the next role trains.

    MAGIC's attacker trains until its attack success rate exceeds a threshold, then the
    defender until it falls below one: use one schedule per direction through
    ``thresholds={role: (metric, threshold, above)}``.
    """

    thresholds: dict[str, tuple[str, float, bool]]
    window: int = 3
    min_steps: int = 1
    max_steps: int = 50
    _current: int = 0
    _since: int = 0

    def __post_init__(self) -> None:
        if not self.thresholds:
            raise ValueError("thresholds must name at least one role")
        if not 1 <= self.min_steps <= self.max_steps or self.window < 1:
            raise ValueError("need 1 <= min_steps <= max_steps and window >= 1")

    def roles_for_step(
        self, step: int, roles: Sequence[str], history: list[dict[str, Any]]
    ) -> list[str]:
        unknown = set(self.thresholds) - set(roles)
        if unknown:
            raise RoleError(
                f"AlternatingOnMetric names roles {sorted(unknown)} that are not in {list(roles)}"
            )
        role = roles[self._current % len(roles)]
        if self._since >= self.min_steps:
            switch = self._since >= self.max_steps
            if role in self.thresholds and not switch:
                metric, threshold, above = self.thresholds[role]
                mine = [h[metric] for h in history if h["role"] == role and metric in h][
                    -self.window :
                ]
                if len(mine) >= min(self.window, self._since):
                    value = float(np.mean(mine))
                    switch = value > threshold if above else value < threshold
            if switch:
                self._current, self._since = self._current + 1, 0
                role = roles[self._current % len(roles)]
        self._since += 1
        return [role]


@dataclass(frozen=True)
class Joint(Schedule):
    """Every role trains every step (each on its own prompts, rewards and optimiser)."""

    def roles_for_step(
        self, step: int, roles: Sequence[str], history: list[dict[str, Any]]
    ) -> list[str]:
        return list(roles)


def _peft_with_roles(model: Any, names: Sequence[str], rank: int) -> Any:
    from peft import LoraConfig, PeftModel, get_peft_model

    if isinstance(model, PeftModel):
        missing = [n for n in names if n not in model.peft_config]
        if missing:
            raise RoleError(
                f"role(s) {missing} have no adapter in the PeftModel (its adapters: {sorted(model.peft_config)})"
            )
        return model

    def config() -> Any:
        return LoraConfig(
            r=rank,
            lora_alpha=2 * rank,
            lora_dropout=0.0,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )

    peft_model = get_peft_model(model, config(), adapter_name=names[0])
    for name in names[1:]:
        peft_model.add_adapter(name, config())
    return peft_model


class MultiRoleTrainer:
    """GRPO for several roles sharing one base model (see the module docstring).

    Args:
        model: a ``PeftModel`` with an adapter named after each role, or a plain model (then
            each role gets a fresh LoRA adapter of rank ``lora_rank``).
        tokenizer: shared by all roles.
        roles: the roles, in schedule order.
        schedule: who trains when (default ``Alternating(10)``).
        seed: the prompt generator's seed.

    Raises:
        RoleError: repeated role names, or a role with no adapter in ``model``.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        roles: Sequence[Role],
        *,
        schedule: Schedule | None = None,
        lora_rank: int = 8,
        seed: int = 0,
        output_dir: str | Path | None = None,
    ) -> None:
        names = [r.name for r in roles]
        if not names:
            raise RoleError("a multi-role run needs at least one role")
        if len(set(names)) != len(names):
            raise RoleError(f"role names repeat: {names}")
        self.model = _peft_with_roles(model, names, lora_rank)
        self.tokenizer = tokenizer
        self.roles = {r.name: r for r in roles}
        self.schedule = schedule or Alternating()
        self.rng = np.random.default_rng(seed)
        self.history: list[dict[str, Any]] = []
        self.step_count = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="icml26-roles-")
        root = Path(output_dir) if output_dir else Path(self._tmp.name)
        self.trainers: dict[str, Any] = {}
        for role in roles:
            self.model.set_adapter(role.name)
            trainer = make_grpo_trainer(
                self.model,
                tokenizer,
                role.reward_funcs,
                role.prompts(np.random.default_rng(seed)),
                role.settings,
                output_dir=root / role.name,
                rollout_func=role.rollout_func,
            )
            trainer.create_optimizer_and_scheduler(num_training_steps=max(role.settings.steps, 1))
            self.trainers[role.name] = trainer
        self.model.set_adapter(names[0])

    def adapter_state(self, role: str) -> dict[str, Any]:
        """A detached copy of ``role``'s adapter weights (to checkpoint or compare)."""
        from peft import get_peft_model_state_dict

        self._check(role)
        return {
            k: v.detach().clone()
            for k, v in get_peft_model_state_dict(self.model, adapter_name=role).items()
        }

    def _check(self, role: str) -> None:
        if role not in self.roles:
            raise RoleError(f"no role named {role!r}; roles: {sorted(self.roles)}")

    def train_step(self, role: str) -> dict[str, Any]:
        """One GRPO step of ``role`` on fresh prompts; returns its logged metrics (means)."""
        import torch

        self._check(role)
        spec, trainer = self.roles[role], self.trainers[role]
        rows = spec.prompts(self.rng)
        if len(rows) != spec.settings.prompts_per_step:
            raise ValueError(
                f"role {role!r}: prompts() returned {len(rows)} rows, settings.prompts_per_step is {spec.settings.prompts_per_step}"
            )
        batch = [dict(row) for row in rows for _ in range(spec.settings.num_generations)]
        self.model.set_adapter(role)
        self.model.train()
        loss = trainer.training_step(self.model, batch, None)
        params = [p for group in trainer.optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, trainer.args.max_grad_norm)
        trainer.optimizer.step()
        trainer.lr_scheduler.step()
        trainer.optimizer.zero_grad(set_to_none=True)
        trainer.state.global_step += 1
        logged = trainer._metrics["train"]
        metrics = {k: float(np.mean(v)) for k, v in logged.items() if v}
        logged.clear()
        metrics["loss"] = float(loss)
        self.model.eval()
        return metrics

    def train(self, steps: int) -> list[dict[str, Any]]:
        """``steps`` schedule steps; each trains the roles the schedule names. Returns (and
        extends :attr:`history` with) one record per role-step: ``{"step", "role", **metrics}``."""
        names = list(self.roles)
        out = []
        for _ in range(steps):
            chosen = self.schedule.roles_for_step(self.step_count, names, self.history)
            for role in chosen:
                record = {"step": self.step_count, "role": role, **self.train_step(role)}
                self.history.append(record)
                out.append(record)
            self.step_count += 1
        return out
