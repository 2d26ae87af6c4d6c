"""The run's wall-clock budget: which defenders still fit, from the stages' measured times.

A defender runs all its seeds or none (a claim is never decided on fewer seeds than the run
asks for): before its first unfinished seed, :meth:`StageBudget.fits` checks that every
remaining seed fits in what is left of the budget. A seed's cost is estimated from the run's
own ``metrics.jsonl`` (every finished stage records its wall seconds, earlier legs included):
the mean of this defender's finished stages, else the longest finished stage of any defender
(MAGIC's, which trains both roles, when only it ran), plus a warm start for each seed whose
``warm<s>`` stage is not done yet.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from icml26.shared import RunDir

__all__ = ["StageBudget"]


class StageBudget:
    """The budget of one leg of a run (``minutes`` of wall clock from its start; 0: none).

    Args:
        run_dir: the run folder (its stage timings).
        minutes: the budget (0: everything fits).
    """

    def __init__(self, run_dir: RunDir, minutes: float) -> None:
        if not minutes >= 0:
            raise ValueError(f"minutes must be >= 0, got {minutes!r}")
        self.run_dir, self.minutes = run_dir, float(minutes)
        self.start = time.perf_counter()

    def _walls(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for rec in self.run_dir.read_metrics():
            name, wall = rec.get("stage"), rec.get("wall_s")
            if isinstance(name, str) and isinstance(wall, int | float):
                key = "warm" if name.startswith("warm") else name.split("-seed")[0]
                out.setdefault(key, []).append(float(wall))
        return out

    def estimate(self, method: str, seeds: int, warm_starts: int) -> float:
        """Seconds for ``seeds`` seeds of ``method`` and ``warm_starts`` warm starts (0 when
        nothing has been measured yet)."""
        walls = self._walls()
        own = walls.get(method)
        others = [max(v) for k, v in walls.items() if k not in ("warm", "judge")]
        seed_s = float(np.mean(own)) if own else max(others, default=0.0)
        warm_s = float(np.mean(walls["warm"])) if "warm" in walls else 0.0
        return seeds * seed_s + warm_starts * warm_s

    def left(self) -> float:
        """Seconds left (infinite without a budget)."""
        if not self.minutes:
            return float("inf")
        return 60.0 * self.minutes - (time.perf_counter() - self.start)

    def fits(self, method: str, seeds: Sequence[int], warm_starts: int = 0) -> bool:
        """Whether ``method``'s unfinished ``seeds`` (and ``warm_starts``) fit what is left."""
        if not seeds:
            return True
        return self.estimate(method, len(seeds), warm_starts) <= self.left()
