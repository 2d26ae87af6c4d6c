"""What every baseline returns, and shared argument checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml26.blitzrank.oracles.base import Comparison, Oracle
from icml26.blitzrank.ranker import RankResult, check_answer, check_prior

__all__ = ["BaselineResult", "ask", "check_m", "start"]


def ask(oracle: Oracle, items: Sequence[int], top: int | None = None) -> Comparison:
    """Ask ``oracle`` about ``items`` and check the answer, as BlitzRank does.

    A baseline needs ``top`` winners (a heap needs one, a window a full order): when the
    answer ranked fewer (an LLM reply that left ids out, now in ``rest``), the unranked ids
    follow in presented order, RankGPT's repair. Stated here because it is the baseline's
    choice; the oracle itself never invents an order.

    Raises:
        OracleAnswerError: the answer does not hold exactly ``items``, each once (or is empty).
    """
    asked = [int(i) for i in items]
    ans = oracle.compare(asked, top)
    check_answer(oracle, asked, ans)
    q = len(asked) if top is None else min(top, len(asked))
    if len(ans.order) >= q:
        return ans
    pos = {item: r for r, item in enumerate(asked)}
    rest = sorted(ans.rest, key=pos.__getitem__)
    order = tuple(ans.order) + tuple(rest[: q - len(ans.order)])
    return Comparison(order=order, rest=tuple(rest[q - len(ans.order) :]))


@dataclass(frozen=True)
class BaselineResult:
    """A baseline's output: every item best first, oracle calls, sequential rounds."""

    ranking: list[int]
    calls: int
    rounds: int

    def top(self, m: int) -> list[int]:
        """The first ``m`` items of the ranking."""
        return self.ranking[:m]

    def as_rank_result(self, m: int) -> RankResult:
        """This result as a :class:`~icml26.blitzrank.ranker.RankResult` for top-``m``: one
        item per tier, not certified (``None``: a baseline does not certify)."""
        top = self.ranking[:m]
        return RankResult(
            ranking=list(self.ranking),
            top=top,
            tiers=[[i] for i in top],
            certified=None,
            boundary_tie=False,
            calls=self.calls,
            rounds=self.rounds,
        )


def check_m(m: int) -> int:
    """``m`` for a baseline's :class:`~icml26.blitzrank.ranker.Ranker` class, checked."""
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    return m


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
