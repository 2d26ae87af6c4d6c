"""The DiCode curriculum: an archive of dreamed worlds, learnability, a frontier, lineage.

Each training round the agent plays ``n_slots`` worlds (a slot is a group of environments):
``target_slots`` play the target world (the mixing of target episodes into training), the
newest unevaluated children get a slot each so their success rate is measured, and the rest
are drawn from the archive with probability proportional to their learnability

    L(w) = p_w (1 - p_w),    p_w = the agent's success rate on w's goal,

which is 0 for solved (p = 1) and hopeless (p = 0) worlds and highest at p = 1/2. The
*frontier* is the set of worlds with ``lo < p < hi`` (neither solved nor hopeless).

After the round the dreamer writes children of parents chosen *lineage-aware*: a parent's
score is its own learnability plus ``lineage_weight`` times the mean learnability of its
evaluated children, so productive lineages keep being extended. ``selection="uniform"`` is
the ``dicode_random`` ablation: the same loop with uniform choices from the archive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from icml26.dicode.dreams import Dream, DreamContext, Dreamer
from icml26.dicode.program import WorldProgram

__all__ = [
    "Archive",
    "ArchiveEntry",
    "DiCodeCurriculum",
    "SlotStats",
    "learnability",
    "same_world",
]


def learnability(p: Any) -> Any:
    """``p (1 - p)``: 0 at ``p ∈ {0, 1}``, maximal (1/4) at ``p = 1/2``."""
    p_arr = np.asarray(p, dtype=float)
    if np.any((p_arr < 0) | (p_arr > 1)) or not np.all(np.isfinite(p_arr)):
        raise ValueError(f"success rates must lie in [0, 1], got {p}")
    out = p_arr * (1.0 - p_arr)
    return float(out) if out.ndim == 0 else out


def _our_lowering(program: WorldProgram) -> dict[str, Any]:
    return program.arrays()


def same_world(a: Any, b: Any) -> bool:
    """Whether two lowered worlds (pytrees of arrays) are identical: same structure, equal leaves."""
    leaves_a, tree_a = jax.tree_util.tree_flatten(a)
    leaves_b, tree_b = jax.tree_util.tree_flatten(b)
    if tree_a != tree_b:
        return False
    return all(
        np.shape(x) == np.shape(y) and np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(leaves_a, leaves_b, strict=True)
    )


@dataclass
class SlotStats:
    """What one slot's environments measured during a round.

    Attributes:
        episodes: episodes finished.
        successes: episodes that reached the world's goal.
        positive_value_loss: the mean positive advantage over the round's steps (PLR's score).
        returns: the summed returns of the finished episodes.

    Raises:
        ValueError: if a field is not finite, ``episodes`` is negative, or ``successes``
            lies outside ``[0, episodes]``.
    """

    episodes: float
    successes: float
    positive_value_loss: float
    returns: float

    def __post_init__(self) -> None:
        for name in ("episodes", "successes", "positive_value_loss", "returns"):
            value = getattr(self, name)
            if not np.isfinite(value):
                raise ValueError(f"SlotStats.{name} must be finite, got {value}")
        if self.episodes < 0:
            raise ValueError(f"SlotStats.episodes must be >= 0, got {self.episodes}")
        if not 0 <= self.successes <= self.episodes:
            raise ValueError(
                f"SlotStats.successes must lie in [0, episodes={self.episodes}], "
                f"got {self.successes}"
            )


@dataclass
class ArchiveEntry:
    """A world in the archive with its lineage and a running success-rate estimate."""

    id: int
    program: WorldProgram
    parent: int | None
    generation: int
    born: int
    operator: str = "root"
    episodes: float = 0.0  # decayed counts (the success-rate estimate)
    successes: float = 0.0
    finished: float = 0.0  # episodes finished in all (not decayed)
    history: list[tuple[int, float]] = field(default_factory=list)

    @property
    def success_rate(self) -> float | None:
        return self.successes / self.episodes if self.episodes > 0 else None

    @property
    def learnability(self) -> float | None:
        p = self.success_rate
        return None if p is None else learnability(p)

    def update(self, stats: SlotStats, round_: int, decay: float) -> None:
        """Decayed counts: old evidence fades as the agent changes."""
        if stats.episodes <= 0:
            return
        self.episodes = decay * self.episodes + stats.episodes
        self.successes = decay * self.successes + stats.successes
        self.finished += stats.episodes
        self.history.append((round_, self.successes / self.episodes))


class Archive:
    """Worlds by id; roots have ``parent=None``."""

    def __init__(self) -> None:
        self.entries: list[ArchiveEntry] = []

    def __len__(self) -> int:
        return len(self.entries)

    def add(
        self, program: WorldProgram, *, parent: int | None, born: int, operator: str = "root"
    ) -> ArchiveEntry:
        gen = 0 if parent is None else self.entries[parent].generation + 1
        entry = ArchiveEntry(len(self.entries), program, parent, gen, born, operator)
        self.entries.append(entry)
        return entry

    def evaluated(self, min_episodes: float = 1) -> list[ArchiveEntry]:
        """Worlds with at least ``min_episodes`` finished episodes (1: measured at all)."""
        return [
            e
            for e in self.entries
            if e.success_rate is not None and (min_episodes <= 1 or e.finished >= min_episodes)
        ]

    def pending(self) -> list[ArchiveEntry]:
        return [e for e in self.entries if e.success_rate is None]

    def frontier(
        self, lo: float = 0.05, hi: float = 0.95, min_episodes: float = 1
    ) -> list[ArchiveEntry]:
        """Evaluated worlds neither solved nor hopeless: ``lo < p < hi``."""
        return [
            e
            for e in self.evaluated(min_episodes)
            if lo < e.success_rate < hi  # type: ignore[operator]
        ]

    def children(self, entry_id: int) -> list[ArchiveEntry]:
        return [e for e in self.entries if e.parent == entry_id]

    def lineage_score(self, entry: ArchiveEntry, weight: float) -> float:
        """Own learnability + ``weight`` x mean learnability of evaluated children."""
        own = entry.learnability or 0.0
        kids = [c.learnability for c in self.children(entry.id) if c.learnability is not None]
        return own + weight * (float(np.mean(kids)) if kids else 0.0)


class DiCodeCurriculum:
    """The DiCode world scheduler (see the module doc).

    Args:
        dreamer: writes children (:class:`~icml26.dicode.dreamer.MutationDreamer` offline,
            :class:`~icml26.dicode.dreamer.LLMDreamer` with a foundation model).
        roots: the archive's first programs (the target world first).
        n_slots: world slots per round.
        target_slots: how many of them play the target.
        children_per_round: programs dreamed per round.
        selection: ``"learnability"`` (DiCode) or ``"uniform"`` (the ``dicode_random`` ablation).
        lineage_weight: weight of the children's learnability in a parent's score.
        decay: forgetting factor of the success-rate estimates per observation.
        frontier: ``(lo, hi)`` of the frontier.
        min_episodes: finished episodes before a world counts as *evaluated* in the reported
            figures (:meth:`frontier_fraction`, the history); selection draws from every
            world measured at all.
        lower: program -> the world the agent actually plays (a pytree of arrays). A child
            whose lowered world equals its parent's is rejected as a ``"duplicate"`` (it
            would spend a slot re-measuring its parent). Default: our crafting world's
            arrays (:meth:`WorldProgram.arrays`); for Craftax pass
            :func:`icml26.dicode.craftax_target.lower_to_craftax`, which drops what Craftax
            cannot express (densities, map size, zombie damage).
    """

    def __init__(
        self,
        dreamer: Dreamer,
        roots: list[WorldProgram],
        *,
        n_slots: int,
        target_slots: int,
        children_per_round: int = 4,
        selection: str = "learnability",
        lineage_weight: float = 0.5,
        decay: float = 0.5,
        frontier: tuple[float, float] = (0.05, 0.95),
        lower: Callable[[WorldProgram], Any] | None = None,
        min_episodes: int = 8,
    ) -> None:
        if selection not in ("learnability", "uniform"):
            raise ValueError(f"selection must be 'learnability' or 'uniform', got {selection!r}")
        if n_slots < 1:
            raise ValueError(f"n_slots must be >= 1, got {n_slots}")
        if not 0 <= target_slots <= n_slots:
            raise ValueError(f"target_slots must be in [0, n_slots], got {target_slots}")
        if children_per_round < 1:
            raise ValueError(
                f"children_per_round must be >= 1 (0 would never dream), got {children_per_round}"
            )
        if not 0 < decay <= 1:
            raise ValueError(f"decay must be in (0, 1] (1: no forgetting), got {decay}")
        lo, hi = frontier
        if not 0 <= lo < hi <= 1:
            raise ValueError(f"frontier must be (lo, hi) with 0 <= lo < hi <= 1, got {frontier}")
        if not (np.isfinite(lineage_weight) and lineage_weight >= 0):
            raise ValueError(f"lineage_weight must be finite and >= 0, got {lineage_weight}")
        if not roots:
            raise ValueError("roots must hold at least one program (the target world first)")
        if min_episodes < 1:
            raise ValueError(f"min_episodes must be >= 1, got {min_episodes}")
        self.dreamer = dreamer
        self.n_slots = n_slots
        self.target_slots = target_slots
        self.children_per_round = children_per_round
        self.selection = selection
        self.lineage_weight = lineage_weight
        self.decay = decay
        self.frontier_bounds = frontier
        self.lower = lower if lower is not None else _our_lowering
        self.min_episodes = min_episodes
        self.archive = Archive()
        for program in roots:
            self.archive.add(program, parent=None, born=0)
        self.round = 0
        self.dreamed = 0
        self.valid = 0
        self.rejections: dict[str, int] = {}
        self.history: list[dict[str, float]] = []
        self._slots: list[int] = []

    def __getstate__(self) -> dict[str, Any]:
        # the dreamer may hold a network client or a model: checkpoints keep only the archive
        state = dict(self.__dict__)
        state["dreamer"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("min_episodes", 1)  # checkpoints written before it existed

    @property
    def name(self) -> str:
        return "dicode" if self.selection == "learnability" else "dicode_random"

    def _pick(self, candidates: list[ArchiveEntry], k: int, rng: np.random.Generator) -> list[int]:
        if not candidates or k <= 0:
            return []
        if self.selection == "uniform":
            w = np.ones(len(candidates))
        else:
            w = np.asarray([(e.learnability or 0.0) + 1e-3 for e in candidates])
        idx = rng.choice(len(candidates), size=k, replace=True, p=w / w.sum())
        return [candidates[i].id for i in idx]

    @property
    def new_capacity(self) -> int:
        """Slots a round gives to unevaluated children (at most; also the dreaming queue's cap)."""
        free = self.n_slots - self.target_slots
        return max(1, free // 2) if free else 0

    def queue(self) -> list[ArchiveEntry]:
        """Dreamed children not yet evaluated and not in a slot, oldest first."""
        playing = set(self._slots)
        return sorted(
            (e for e in self.archive.pending() if e.parent is not None and e.id not in playing),
            key=lambda e: (e.born, e.id),
        )

    def worlds(
        self, rng: np.random.Generator, keep: list[bool] | None = None
    ) -> list[WorldProgram]:
        """The program of each slot for the next round.

        Args:
            rng: the scheduler's random stream.
            keep: per slot, whether it must keep last round's world (its episodes have not
                all finished since the world was assigned); ``None``: no slot is held.

        Returns:
            One program per slot: the target in the first ``target_slots``; held slots keep
            their world; the other slots go first to queued children (oldest first, so every
            child is evaluated), then to archive worlds drawn by learnability.
        """
        if keep is not None and len(keep) != self.n_slots:
            raise ValueError(f"keep has {len(keep)} entries for {self.n_slots} slots")
        held = list(keep) if keep is not None and self._slots else [False] * self.n_slots
        slots = [0] * self.target_slots + [-1] * (self.n_slots - self.target_slots)
        for i in range(self.target_slots, self.n_slots):
            if held[i]:
                slots[i] = self._slots[i]
        open_ = [i for i in range(self.target_slots, self.n_slots) if slots[i] < 0]
        in_new = sum(
            1
            for i in range(self.target_slots, self.n_slots)
            if slots[i] >= 0 and self.archive.entries[slots[i]].success_rate is None
        )
        queued = self.queue()[: max(0, self.new_capacity - in_new)] if open_ else []
        new = [e.id for e in queued[: len(open_)]]
        pool = self.archive.evaluated() or self.archive.entries
        picks = new + self._pick(pool, len(open_) - len(new), rng)
        for i, entry_id in zip(open_, picks, strict=True):
            slots[i] = entry_id
        self._slots = slots
        return [self.archive.entries[i].program for i in slots]

    def observe(self, stats: list[SlotStats]) -> None:
        """Update the success rates of the worlds just played.

        Raises:
            ValueError: if ``stats`` does not hold one entry per slot of the last
                :meth:`worlds` call.
        """
        if len(stats) != len(self._slots):
            raise ValueError(
                f"observe got {len(stats)} slot stats for {len(self._slots)} slots"
                + ("" if self._slots else " (call worlds() first)")
            )
        merged: dict[int, SlotStats] = {}
        for entry_id, s in zip(self._slots, stats, strict=True):
            m = merged.setdefault(entry_id, SlotStats(0.0, 0.0, 0.0, 0.0))
            m.episodes += s.episodes
            m.successes += s.successes
        for entry_id, s in merged.items():
            self.archive.entries[entry_id].update(s, self.round, self.decay)

    def context(self, profile: dict[str, float], parents: list[int]) -> DreamContext:
        """What the dreamer sees for ``parents``: their programs with success rate and
        learnability, the agent's ``profile``, and the evaluated archive.

        Args:
            profile: the agent's success rate per achievement on the target.
            parents: archive ids of the parents.

        Returns:
            The :class:`~icml26.dicode.dreamer.DreamContext`.
        """
        summary = [(e.program, e.success_rate, e.learnability) for e in self.archive.evaluated()]
        return DreamContext(
            parents=[
                (
                    self.archive.entries[i].program,
                    self.archive.entries[i].success_rate,
                    self.archive.entries[i].learnability,
                )
                for i in parents
            ],
            profile=dict(profile),
            archive=summary,
        )

    def end_round(self, profile: dict[str, float], rng: np.random.Generator) -> list[Dream]:
        """Dream children of lineage-selected parents; add the valid ones to the archive."""
        candidates = self.archive.evaluated() or self.archive.entries
        if self.selection == "uniform":
            w = np.ones(len(candidates))
        else:
            w = np.asarray(
                [self.archive.lineage_score(e, self.lineage_weight) + 1e-3 for e in candidates]
            )
        # dream only what the next rounds can evaluate: the queue of unevaluated children
        # never exceeds the slots a round gives them, so no child is left unmeasured
        k = min(self.children_per_round, max(0, self.new_capacity - len(self.queue())))
        if k == 0:
            self._close_round()
            return []
        parents = [candidates[i].id for i in rng.choice(len(candidates), size=k, p=w / w.sum())]
        dreams = self.dreamer.dream(self.context(profile, parents), k, rng)
        for parent, dream in zip(parents, dreams, strict=True):
            self.dreamed += 1
            if dream.program is None:
                self.rejections[dream.reason] = self.rejections.get(dream.reason, 0) + 1
                continue
            if self._duplicate(dream.program, parent):
                self.rejections["duplicate"] = self.rejections.get("duplicate", 0) + 1
                continue
            self.valid += 1
            self.archive.add(
                dream.program, parent=parent, born=self.round + 1, operator=dream.operator
            )
        self._close_round()
        return dreams

    def _duplicate(self, program: WorldProgram, parent: int) -> bool:
        """Whether ``program`` lowers to exactly its parent's world."""
        parent_program = self.archive.entries[parent].program
        if program == parent_program:
            return True
        return same_world(self.lower(program), self.lower(parent_program))

    def _close_round(self) -> None:
        lo, hi = self.frontier_bounds
        evaluated = self.archive.evaluated(self.min_episodes)
        learn = [e.learnability or 0.0 for e in evaluated]
        self.history.append(
            {
                "round": float(self.round),
                "archive_size": float(len(self.archive)),
                "evaluated": float(len(evaluated)),
                "frontier_size": float(len(self.archive.frontier(lo, hi, self.min_episodes))),
                "mean_learnability": float(np.mean(learn)) if learn else 0.0,
                "max_learnability": float(np.max(learn)) if learn else 0.0,
            }
        )
        self.round += 1

    def frontier_fraction(self) -> float:
        """Share of the *evaluated* archive (``min_episodes`` finished episodes) on the
        frontier: children still being measured do not count."""
        lo, hi = self.frontier_bounds
        evaluated = self.archive.evaluated(self.min_episodes)
        return len(self.archive.frontier(lo, hi, self.min_episodes)) / max(1, len(evaluated))
