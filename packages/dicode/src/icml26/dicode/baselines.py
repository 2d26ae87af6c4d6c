"""The baselines' world schedulers, with the same interface as :class:`DiCodeCurriculum`.

* :class:`TargetOnly` (``ppo_target``): PPO on the target world only.
* :class:`DomainRandomisation` (``domain_randomisation``): fresh uniform draws from the same
  code space (:func:`~icml26.dicode.dreamer.random_program`) every round.
* :class:`PLR` (``plr``): prioritised level replay (Jiang et al., 2021) over randomly generated
  worlds, scored by the positive value loss ``mean_t max(Â_t, 0)``; replay with probability
  ``replay_prob`` from a buffer ranked by score (rank prioritisation, temperature β) mixed
  with staleness, otherwise a new random world.
* :class:`ACCEL` (``accel``): PLR whose new worlds are, once the buffer is warm, *edits* of
  high-scoring buffer worlds (Parker-Holder et al., 2022) by the same AST mutations as the
  offline dreamer, so the comparison with ``dicode`` isolates learnability selection, the
  frontier and lineage rather than the edit operators.

Every scheduler's ``worlds(rng, keep)`` leaves a slot whose ``keep`` flag is set on last round's
world (its episodes have not all finished since the world was assigned), so a slot keeps its
world for at least one full episode. Curriculum baselines give ``target_slots`` slots to the target world as DiCode does, so every
method mixes in the same share of target episodes and only the rest differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.dicode.curriculum import SlotStats
from icml26.dicode.dreamer import MutationDreamer, random_program
from icml26.dicode.program import ProgramError, WorldProgram, compile_program

__all__ = ["ACCEL", "PLR", "DomainRandomisation", "TargetOnly"]


class TargetOnly:
    """Every slot plays the target world."""

    name = "ppo_target"

    def __init__(self, target: WorldProgram, n_slots: int) -> None:
        self.target = target
        self.n_slots = n_slots

    def worlds(
        self, rng: np.random.Generator, keep: list[bool] | None = None
    ) -> list[WorldProgram]:
        return [self.target] * self.n_slots

    def observe(self, stats: list[SlotStats]) -> None:
        pass

    def end_round(self, profile: dict[str, float], rng: np.random.Generator) -> None:
        pass


class DomainRandomisation(TargetOnly):
    """Target slots plus fresh random worlds each round."""

    name = "domain_randomisation"

    def __init__(self, target: WorldProgram, n_slots: int, target_slots: int) -> None:
        super().__init__(target, n_slots)
        self.target_slots = target_slots

        self._last: list[WorldProgram] = []

    def worlds(
        self, rng: np.random.Generator, keep: list[bool] | None = None
    ) -> list[WorldProgram]:
        out = [self.target] * self.target_slots
        for i in range(self.target_slots, self.n_slots):
            held = keep is not None and bool(keep[i]) and len(self._last) == self.n_slots
            out.append(self._last[i] if held else compile_program(random_program(rng)))
        self._last = out
        return out


@dataclass(eq=False)
class _Level:
    program: WorldProgram
    score: float
    last_seen: int
    seen: bool = False  # scored once: added to the buffer then (an evicted level stays out)


class PLR(TargetOnly):
    """Prioritised level replay over random worlds (positive-value-loss scores).

    Args:
        buffer_size: levels kept (lowest score evicted).
        replay_prob: probability that a slot replays a buffer level.
        temperature: β of the rank prioritisation ``P ∝ (1 / rank)^(1/β)``.
        staleness: weight ρ of the staleness distribution in the replay mixture.
    """

    name = "plr"

    def __init__(
        self,
        target: WorldProgram,
        n_slots: int,
        target_slots: int,
        *,
        buffer_size: int = 64,
        replay_prob: float = 0.5,
        temperature: float = 0.3,
        staleness: float = 0.3,
    ) -> None:
        super().__init__(target, n_slots)
        self.target_slots = target_slots
        self.buffer_size = buffer_size
        self.replay_prob = replay_prob
        self.temperature = temperature
        self.staleness = staleness
        self.buffer: list[_Level] = []
        self.round = 0
        self._slots: list[_Level | None] = []  # None: a target slot
        self.proposed = 0
        self.valid = 0

    def _replay_distribution(self) -> np.ndarray:
        scores = np.asarray([lv.score for lv in self.buffer])
        ranks = np.empty(len(scores))
        ranks[np.argsort(-scores)] = np.arange(1, len(scores) + 1)
        p_score = (1.0 / ranks) ** (1.0 / self.temperature)
        p_score /= p_score.sum()
        stale = np.asarray([self.round - lv.last_seen for lv in self.buffer], dtype=float)
        p_stale = stale / stale.sum() if stale.sum() > 0 else np.full(len(stale), 1 / len(stale))
        return (1 - self.staleness) * p_score + self.staleness * p_stale

    def _new_level(self, rng: np.random.Generator) -> WorldProgram:
        self.proposed += 1
        self.valid += 1
        return compile_program(random_program(rng))

    def worlds(
        self, rng: np.random.Generator, keep: list[bool] | None = None
    ) -> list[WorldProgram]:
        slots: list[_Level | None] = [None] * self.target_slots
        p = self._replay_distribution() if self.buffer else None
        for i in range(self.target_slots, self.n_slots):
            if keep is not None and keep[i] and len(self._slots) == self.n_slots:
                slots.append(self._slots[i])
            elif p is not None and rng.random() < self.replay_prob:
                slots.append(self.buffer[int(rng.choice(len(self.buffer), p=p))])
            else:
                slots.append(_Level(self._new_level(rng), 0.0, self.round))
        self._slots = slots
        return [self.target if lv is None else lv.program for lv in slots]

    def observe(self, stats: list[SlotStats]) -> None:
        for level, s in zip(self._slots, stats, strict=True):
            if level is None:
                continue
            level.score = s.positive_value_loss
            level.last_seen = self.round
            if not level.seen:
                level.seen = True
                self.buffer.append(level)
        if len(self.buffer) > self.buffer_size:
            self.buffer.sort(key=lambda lv: -lv.score)
            del self.buffer[self.buffer_size :]

    def end_round(self, profile: dict[str, float], rng: np.random.Generator) -> None:
        self.round += 1


class ACCEL(PLR):
    """PLR with edited levels: new slots are mutations of high-scoring buffer levels.

    Args:
        edit_prob: probability that a new level is an edit (once the buffer holds
            ``warmup`` levels) rather than a random draw.
    """

    name = "accel"
    edits_proposed = 0  # class defaults: checkpoints written before these counts existed
    edits_valid = 0

    def __init__(
        self,
        target: WorldProgram,
        n_slots: int,
        target_slots: int,
        *,
        edit_prob: float = 0.8,
        warmup: int = 4,
        **kwargs: float,
    ) -> None:
        super().__init__(target, n_slots, target_slots, **kwargs)  # type: ignore[arg-type]
        self.edit_prob = edit_prob
        self.warmup = warmup
        self.editor = MutationDreamer()
        self.edits_proposed = 0  # edits only (``proposed`` / ``valid`` also count random levels)
        self.edits_valid = 0
        self._profile: dict[str, float] = {}
        self._rng: np.random.Generator | None = None

    def _new_level(self, rng: np.random.Generator) -> WorldProgram:
        if len(self.buffer) >= self.warmup and rng.random() < self.edit_prob:
            p = self._replay_distribution()
            parent = self.buffer[int(rng.choice(len(self.buffer), p=p))].program
            source, _ = self.editor.mutate(parent, rng, self._profile, k=int(rng.integers(1, 3)))
            self.edits_proposed += 1
            try:
                program = compile_program(source)
            except ProgramError:
                return super()._new_level(rng)  # a failed edit: a random level instead
            self.edits_valid += 1
            self.proposed += 1
            self.valid += 1
            return program
        return super()._new_level(rng)

    def end_round(self, profile: dict[str, float], rng: np.random.Generator) -> None:
        self._profile = dict(profile)
        super().end_round(profile, rng)
