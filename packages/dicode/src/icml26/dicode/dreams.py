"""What every dreamer returns and sees: :class:`Dream` records (the source, the compiled
program or ``None``, the rejection reason), the :class:`DreamContext`, the :class:`Dreamer`
protocol, and the archive's roots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from icml26.dicode.program import (
    ProgramError,
    WorldProgram,
    compile_program,
    target_program,
)
from icml26.dicode.tech import ACHIEVEMENT_DEPTH, ACHIEVEMENTS

__all__ = [
    "Dream",
    "DreamContext",
    "Dreamer",
    "compile_dream",
    "frontier_goals",
    "seed_programs",
    "summarise_reasons",
]


@dataclass(frozen=True)
class Dream:
    """One generated world program."""

    source: str
    program: WorldProgram | None
    reason: str = ""  # ProgramError reason when rejected
    detail: str = ""
    operator: str = ""

    @property
    def valid(self) -> bool:
        return self.program is not None


@dataclass
class DreamContext:
    """What a dreamer sees: parents (with success rate and learnability) and the agent.

    Attributes:
        parents: ``(program, success rate or None, learnability or None)``.
        profile: success rate of each achievement on the target world (latest evaluation).
        archive: a summary of the archive for prompts (``(program, p, learnability)``).
    """

    parents: list[tuple[WorldProgram, float | None, float | None]]
    profile: dict[str, float] = field(default_factory=dict)
    archive: list[tuple[WorldProgram, float | None, float | None]] = field(default_factory=list)


class Dreamer(Protocol):
    name: str

    def dream(self, context: DreamContext, n: int, rng: np.random.Generator) -> list[Dream]: ...


def compile_dream(source: str, operator: str) -> Dream:
    """Validate ``source`` in the sandbox: a valid :class:`Dream`, or one with the reason."""
    try:
        return Dream(source, compile_program(source), operator=operator)
    except ProgramError as exc:
        return Dream(source, None, exc.reason, exc.detail, operator)


def frontier_goals(profile: dict[str, float], *, low: float = 0.1, high: float = 0.9) -> list[str]:
    """Achievements just beyond the agent's competence on the target world: success below
    ``high``, ordered by tech depth, keeping those whose depth is at most one more than the
    deepest achievement already above ``low``."""
    mastered = [
        ACHIEVEMENT_DEPTH[a] for a, p in profile.items() if p >= low and a in ACHIEVEMENT_DEPTH
    ]
    reach = (max(mastered) if mastered else 0) + 1
    goals = [
        a for a in ACHIEVEMENTS if profile.get(a, 0.0) < high and ACHIEVEMENT_DEPTH[a] <= reach
    ]
    return goals or list(ACHIEVEMENTS)


# ---------------------------------------------------------------- AST editing helpers


def seed_programs() -> list[WorldProgram]:
    """The archive's roots: the target world itself."""
    return [target_program()]


def summarise_reasons(dreams: Sequence[Dream]) -> dict[str, int]:
    """Rejections by reason (``size``, ``syntax``, ``forbidden``, ``limit``, ``runtime``,
    ``invalid``; for JSON edits also ``schema`` and ``noop``)."""
    counts: dict[str, int] = {}
    for d in dreams:
        if not d.valid:
            counts[d.reason] = counts.get(d.reason, 0) + 1
    return counts
