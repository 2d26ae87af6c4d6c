"""Learning progress on dreamed worlds: does the agent learn the worlds the curriculum dreams?

Every child dreamed before the last round is played by the policy of the moment on held-out
maps (a key stream never used in training) and again, at the end, by the final policy on the
*same* maps with the *same* keys. Its learning progress is the change in goal success
between the two,

    Δ(w) = p_final(w) - p_birth(w),

so a policy that does not change scores exactly the same twice (Δ = 0 for every world): the
figure reads the agent, not the scheduler that picked the worlds. Both measurements use the
target's evaluation budget (full episodes of at most the target's episode length).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from icml26.dicode.program import WorldProgram

__all__ = ["PROGRESS_STREAM", "ProgressLog", "mean_progress", "measure_goal_success"]

#: Fold-in tag of the progress probe's key stream (held-out maps, never used in training).
PROGRESS_STREAM = 1_000_033


def measure_goal_success(
    evaluator: Any, params: Any, programs: list[WorldProgram], key: jax.Array
) -> list[float]:
    """Goal success of ``params`` on each program, in one evaluation call of fixed shape.

    The ``evaluator.batch`` episodes are split evenly over the programs (the rest of the batch
    plays the target and is ignored), so every call compiles to the evaluator's own function.

    Args:
        evaluator: an :class:`~icml26.dicode.training.Evaluator` (its PPO, batch, lowering).
        params: the policy's parameters.
        programs: at most ``evaluator.batch`` programs.
        key: the evaluation key (the maps and the action samples).

    Returns:
        Per program, the share of its episodes that unlocked its goal.

    Raises:
        ValueError: if there are no programs or more than ``evaluator.batch``.
    """
    batch = evaluator.batch
    if not 0 < len(programs) <= batch:
        raise ValueError(f"goal_success takes 1 to {batch} programs, got {len(programs)}")
    per = batch // len(programs)
    rows = [p for p in programs for _ in range(per)]
    rows += [evaluator.target] * (batch - len(rows))
    worlds = evaluator.cache.batch(rows, 1)
    out = evaluator.ppo.evaluate(params, worlds, key, evaluator.target.episode_length)
    achieved = np.asarray(out["achievements"])
    names = list(evaluator.ppo.env.achievement_names)
    return [
        float(achieved[i * per : (i + 1) * per, names.index(p.goal)].mean())
        for i, p in enumerate(programs)
    ]


@dataclass
class ProgressLog:
    """The probe's record for one unit: groups of children measured at birth (checkpointed).

    Attributes:
        groups: per measured group, the children's archive ids, programs and goal success at
            birth; :meth:`finish` adds the final success.
        chunk: children per evaluation call (their episodes share the evaluator's batch).
    """

    chunk: int
    groups: list[dict[str, Any]] = field(default_factory=list)

    def birth(
        self, evaluator: Any, params: Any, children: list[tuple[int, WorldProgram]], key: Any
    ) -> None:
        """Measure new children with the current policy (``key``: the unit's progress stream)."""
        for start in range(0, len(children), self.chunk):
            part = children[start : start + self.chunk]
            k = jax.random.fold_in(key, len(self.groups))
            programs = [p for _, p in part]
            self.groups.append(
                {
                    "ids": [i for i, _ in part],
                    "programs": programs,
                    "birth": measure_goal_success(evaluator, params, programs, k),
                }
            )

    def finish(self, evaluator: Any, params: Any, key: Any) -> dict[int, tuple[float, float]]:
        """Measure every group again with the final policy on the same maps and keys.

        Returns:
            Per child id, ``(p_birth, p_final)``.
        """
        out: dict[int, tuple[float, float]] = {}
        for g, group in enumerate(self.groups):
            final = measure_goal_success(
                evaluator, params, group["programs"], jax.random.fold_in(key, g)
            )
            for i, before, after in zip(group["ids"], group["birth"], final, strict=True):
                out[i] = (before, after)
        return out


def mean_progress(pairs: dict[int, tuple[float, float]]) -> float | None:
    """Mean ``p_final - p_birth`` over the measured children (``None`` without any)."""
    if not pairs:
        return None
    return float(np.mean([after - before for before, after in pairs.values()]))
