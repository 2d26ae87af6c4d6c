"""Running a policy on a batch of instances, and the trajectories that come out.

A policy acts on ``n`` instances at once (one row per instance): :meth:`Policy.act` returns
``n`` arm indices for step ``t``, :meth:`Policy.update` receives the chosen arms' rewards and,
in the full-information setting, every arm's reward.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from icml26.rmft.envs import EnvSpec, Instances

__all__ = ["Policy", "Trajectories", "rollout"]


@runtime_checkable
class Policy(Protocol):
    """A batched online decision-maker."""

    name: str

    def reset(self, spec: EnvSpec, n: int, rng: np.random.Generator) -> None:
        """Start ``n`` fresh episodes of ``spec``."""

    def act(self, t: int) -> np.ndarray:
        """Arms ``(n,)`` (ints in ``0..K-1``) for step ``t`` (0-based)."""

    def update(
        self, t: int, actions: np.ndarray, rewards: np.ndarray, full: np.ndarray | None
    ) -> None:
        """Feedback for step ``t``: the chosen arms' rewards ``(n,)``; ``full`` is the
        ``(n, K)`` reward vector in the full-information setting, else ``None``."""


@dataclass
class Trajectories:
    """``n`` episodes of one policy.

    Attributes:
        instances: the instances played.
        actions: ``(n, T)`` chosen arms.
        rewards: ``(n, T)`` rewards received.
        regret: ``(n, T)`` cumulative regret curves (exact, see :mod:`icml26.rmft.envs`).
        invalid: ``(n, T)`` True where the policy's output could not be parsed and a random
            arm was played instead (LLM policies; all False otherwise).
        records: per-episode, per-step extra data (an LLM's prompt and reply text).
    """

    instances: Instances
    actions: np.ndarray
    rewards: np.ndarray
    regret: np.ndarray
    invalid: np.ndarray
    records: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def final_regret(self) -> np.ndarray:
        """``(n,)`` regret after the last step."""
        return self.regret[:, -1]

    @property
    def n(self) -> int:
        return int(self.actions.shape[0])

    def subset(self, index: np.ndarray) -> Trajectories:
        """The episodes at ``index`` (an integer array)."""
        index = np.asarray(index, dtype=np.int64)
        inst = Instances(
            self.instances.spec, self.instances.means[index], self.instances.rewards[index]
        )
        records = [self.records[i] for i in index] if self.records else []
        return Trajectories(
            inst,
            self.actions[index],
            self.rewards[index],
            self.regret[index],
            self.invalid[index],
            records,
        )


def rollout(policy: Policy, instances: Instances, rng: np.random.Generator) -> Trajectories:
    """Play ``policy`` on every instance for the whole horizon.

    Args:
        policy: a batched :class:`Policy` (reset for ``instances.n`` episodes).
        instances: the instances and their reward tables.
        rng: the policy's randomness (exploration, sampling, LLM seeds).

    Returns:
        :class:`Trajectories`: actions, rewards, the exact regret curves, invalid steps and
        the policy's records.

    Raises:
        ValueError: the policy returned actions of the wrong shape or outside ``0..K-1``.
    """
    spec = instances.spec
    n, horizon, k = instances.n, spec.horizon, spec.n_arms
    policy.reset(spec, n, rng)
    actions = np.zeros((n, horizon), dtype=np.int64)
    rewards = np.zeros((n, horizon))
    rows = np.arange(n)
    for t in range(horizon):
        a = np.asarray(policy.act(t))
        if a.shape != (n,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"policy {policy.name!r} returned {a.shape} {a.dtype}, expected ({n},) ints"
            )
        if a.min() < 0 or a.max() >= k:
            raise ValueError(f"policy {policy.name!r} chose arms outside 0..{k - 1}")
        r = instances.rewards[rows, t, a]
        actions[:, t], rewards[:, t] = a, r
        policy.update(t, a, r, instances.rewards[:, t, :] if spec.full_information else None)
    invalid = getattr(policy, "invalid", None)
    records = getattr(policy, "records", None)
    return Trajectories(
        instances,
        actions,
        rewards,
        np.cumsum(instances.step_regret(actions), axis=1),
        np.asarray(invalid, dtype=bool) if invalid is not None else np.zeros((n, horizon), bool),
        list(records) if records else [],
    )
