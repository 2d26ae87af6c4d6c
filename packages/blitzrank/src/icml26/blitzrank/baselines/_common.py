"""What every baseline returns, and shared argument checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml26.blitzrank.oracles.base import Oracle
from icml26.blitzrank.ranker import check_prior

__all__ = ["BaselineResult", "start"]


@dataclass(frozen=True)
class BaselineResult:
    """A baseline's output: every item best first, oracle calls, sequential rounds."""

    ranking: list[int]
    calls: int
    rounds: int

    def top(self, m: int) -> list[int]:
        return self.ranking[:m]


def start(
    oracle: Oracle, prior: Sequence[int] | None, window: int, m: int | None = None
) -> list[int]:
    """Validate the common arguments and return the initial order as a list."""
    n = int(oracle.n)
    if isinstance(window, bool) or not isinstance(window, int) or window < 2:
        raise ValueError(f"the window (items per call) must be an integer >= 2, got {window!r}")
    if window > oracle.k:
        raise ValueError(f"window={window} exceeds the oracle's k={oracle.k}")
    if m is not None and not 1 <= m <= n:
        raise ValueError(f"m must be in 1..n={n}, got {m}")
    return [int(i) for i in np.asarray(check_prior(prior, n))]
