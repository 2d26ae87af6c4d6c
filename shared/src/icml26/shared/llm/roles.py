"""Several policies trained in one run: one LoRA adapter per role on one base model.

MAGIC trains an attacker and a defender, DECOR a planner, a filter and an answerer; each role
has its own prompts, its own reward and its own optimiser, and the roles take turns (or all
train every step). Here:

* one peft ``PeftModel`` holds one adapter per role (the base weights are shared and frozen);
  ``set_adapter(role)`` before each phase makes that role's adapter the active and only
  trainable one;
* each role has its own TRL ``GRPOTrainer`` (its reward functions, :class:`GRPOSettings`,
  optional ``rollout_func``) and its own optimiser over its own adapter's parameters only
  (created while that adapter is the trainable one), so an idle role's adapter stays
  bit-identical while another trains (a test checks it);
* each role draws its prompts from a callable (``prompts(rng) -> rows``, one step's rows), so
  one role's outputs can become another's inputs (a proposer's problems for a solver, an
  attacker's rewrites for a defender);
* a schedule decides who trains: :class:`Alternating` (switch every ``N`` steps),
  :class:`AlternatingOnMetric` (switch when the training role's metric, e.g. an attack
  success rate, crosses a threshold, or after ``max_steps``), :class:`Joint` (every role every
  step).

A **phase** is a run of steps of one role, and it is one call of TRL's public
``Trainer.train()`` on that role's trainer: the role's prompts for the phase's longest
possible run are drawn when it starts (the other roles are frozen during it, so drawing them
then or step by step is the same distribution), and a ``TrainerCallback`` reads each step's
logged metrics, asks the schedule, and stops the phase when the schedule switches roles. So
every step is an ordinary TRL step: gradient accumulation, accelerate (each process builds
the same runner; the schedule sees the same gathered metrics on every rank), logging and
callbacks as in any TRL run. No private TRL name is used here.
"""

from __future__ import annotations

import abc
import gc
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
        """The roles to train at ``step`` (Alternating, AlternatingOnMetric, Joint); called
        once per step, in order (a schedule may keep state)."""

    def phase_limit(self, step: int) -> int | None:
        """After :meth:`roles_for_step` named one role for ``step``: the most steps, this one
        included, that role can train before the schedule must switch (``None``: unknown).
        The runner draws that many steps of prompts when a phase starts."""
        return None


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

    def phase_limit(self, step: int) -> int | None:
        return self.every - step % self.every


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

    def phase_limit(self, step: int) -> int | None:
        return self.max_steps - self._since + 1


@dataclass(frozen=True)
class Joint(Schedule):
    """Every role trains every step (each on its own prompts, rewards and optimiser)."""

    def roles_for_step(
        self, step: int, roles: Sequence[str], history: list[dict[str, Any]]
    ) -> list[str]:
        return list(roles)

    def phase_limit(self, step: int) -> int | None:
        return 1


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


def _metrics(logs: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in logs.items() if isinstance(v, int | float)}


def _phase_callback(runner: MultiRoleTrainer, role: str) -> Any:
    """A ``TrainerCallback`` that records each logged step of ``role`` with the runner and
    stops its ``train()`` when the runner says the phase is over (public hooks only)."""
    from transformers import TrainerCallback

    class PhaseCallback(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> Any:
            step_log = bool(logs) and "reward" in logs  # not the end-of-train summary
            if step_log and runner._after_step(role, _metrics(logs)):
                control.should_training_stop = True
            return control

    return PhaseCallback()


class MultiRoleTrainer:
    """GRPO for several roles sharing one base model (see the module docstring).

    Args:
        model: a ``PeftModel`` with an adapter named after each role, or a plain model (then
            each role gets a fresh LoRA adapter of rank ``lora_rank``).
        tokenizer: shared by all roles.
        roles: the roles, in schedule order.
        schedule: who trains when (default ``Alternating(10)``).
        seed: the prompt generator's seed.
        output_dir: where TRL's trainers write (default: a temporary folder).

    Raises:
        RoleError: repeated role names, or a role with no adapter in ``model``.
        ValueError: a role with ``num_iterations > 1`` (a generation batch would be reused
            across phases).
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
        for r in roles:
            if r.settings.num_iterations != 1:
                raise ValueError(
                    f"role {r.name!r}: num_iterations={r.settings.num_iterations}; the roles "
                    f"runner needs 1 (phases start and stop on whole generation batches)"
                )
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
                self._rows(role, 1, np.random.default_rng(seed)),
                role.settings,
                output_dir=root / role.name,
                rollout_func=role.rollout_func,
                callbacks=[_phase_callback(self, role.name)],
                shuffle_dataset=False,  # a phase's prompts are consumed in the order drawn
            )
            trainer.create_optimizer()  # over this role's adapter: the only trainable one now
            self.trainers[role.name] = trainer
        self.model.set_adapter(names[0])
        self._target = 0
        self._next: list[str] | None = None
        self._on_step: Callable[[dict[str, Any]], None] | None = None
        self._fixed_phase = False

    def _rows(self, role: Role, steps: int, rng: np.random.Generator) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for _ in range(steps):
            batch = role.prompts(rng)
            if len(batch) != role.settings.prompts_per_step:
                raise ValueError(
                    f"role {role.name!r}: prompts() returned {len(batch)} rows, "
                    f"settings.prompts_per_step is {role.settings.prompts_per_step}"
                )
            rows += [dict(r) for r in batch]
        return rows

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

    def _after_step(self, role: str, metrics: dict[str, float]) -> bool:
        """Record the step just logged; True when the phase must stop."""
        record = {"step": self.step_count, "role": role, **metrics}
        self.history.append(record)
        if self._on_step is not None:
            self._on_step(record)
        if self._fixed_phase:
            return True
        self.step_count += 1
        if self.step_count >= self._target:
            self._next = None
            return True
        self._next = self.schedule.roles_for_step(self.step_count, list(self.roles), self.history)
        return self._next != [role]

    def _phase(self, role: str, max_steps: int) -> None:
        """Train ``role`` for at most ``max_steps`` steps (fewer when the schedule switches)."""
        from datasets import Dataset

        spec, trainer = self.roles[role], self.trainers[role]
        trainer.train_dataset = Dataset.from_list(self._rows(spec, max_steps, self.rng))
        trainer.args.max_steps = max_steps
        self.model.set_adapter(role)
        self.model.train()
        # Each train() starts with accelerate's free_memory(), a full gc.collect(): about 0.6 s
        # with torch, transformers and TRL loaded, per phase. Freezing the heap first leaves
        # that collection the objects made since (nothing is lost: unfreeze puts the rest back).
        gc.freeze()
        try:
            trainer.train()
        finally:
            gc.unfreeze()
            self.model.eval()

    def train_step(self, role: str) -> dict[str, Any]:
        """One GRPO step of ``role`` alone on fresh prompts (outside any schedule); returns
        its logged metrics (``reward``, ``rewards/<name>/mean``, ``loss``, ...)."""
        self._check(role)
        self._fixed_phase = True
        try:
            self._phase(role, 1)
        finally:
            self._fixed_phase = False
        record = self.history.pop()
        return {k: v for k, v in record.items() if k not in ("step", "role")}

    def train(
        self,
        steps: int,
        *,
        on_step: Callable[[dict[str, Any]], None] | None = None,
        on_phase_end: Callable[[str, int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """``steps`` schedule steps; each trains the roles the schedule names. Returns (and
        extends :attr:`history` with) one record per role-step: ``{"step", "role", **metrics}``.

        Args:
            on_step: called with each record as it is logged.
            on_phase_end: called with ``(role, next_step)`` after each phase (a run of steps
                of one role; under :class:`Joint`, after each step of each role).
        """
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        names = list(self.roles)
        first = len(self.history)
        self._target = self.step_count + steps
        self._on_step = on_step
        try:
            chosen: list[str] | None = None
            while self.step_count < self._target:
                if chosen is None:
                    chosen = self.schedule.roles_for_step(self.step_count, names, self.history)
                if len(chosen) == 1:
                    [role] = chosen
                    limit = self.schedule.phase_limit(self.step_count) or steps
                    self._phase(role, max(1, min(limit, self._target - self.step_count)))
                    chosen = self._next
                    if on_phase_end is not None:
                        on_phase_end(role, self.step_count)
                    continue
                for role in chosen:  # Joint: one step of each role, then the next step
                    self._fixed_phase = True
                    try:
                        self._phase(role, 1)
                    finally:
                        self._fixed_phase = False
                    if on_phase_end is not None:
                        on_phase_end(role, self.step_count + 1)
                self.step_count += 1
                chosen = None
        finally:
            self._on_step = None
        return self.history[first:]
