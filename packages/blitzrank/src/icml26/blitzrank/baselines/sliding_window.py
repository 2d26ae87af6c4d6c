"""Sliding-window listwise reranking (RankGPT, Sun et al. 2023).

A window of ``window`` items slides from the bottom of the first-stage list to the top with
step ``stride``; each window is reordered by the oracle in place. One pass carries the best
``window - stride`` items of the list to the top when the oracle is perfect (that is all it
guarantees); ``passes`` repeats the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from icml26.blitzrank.baselines._common import BaselineResult, ask, check_m, start
from icml26.blitzrank.oracles.base import Oracle
from icml26.blitzrank.ranker import RankResult

__all__ = ["SlidingWindow", "sliding_window"]


def sliding_window(
    oracle: Oracle,
    prior: Sequence[int] | None = None,
    *,
    window: int = 20,
    stride: int = 10,
    passes: int = 1,
    depth: int | None = None,
) -> BaselineResult:
    """Rerank the first ``depth`` items (default all) with back-to-front sliding windows.

    Args:
        oracle: the listwise oracle (its ``k`` at least ``window``).
        prior: the first-stage order (default ``0..n-1``).
        window: items per call.
        stride: how far the window moves between calls (``1..window-1``).
        passes: sweeps from the bottom to the top.
        depth: rerank only the first ``depth`` items of the first stage.

    Returns:
        The :class:`~icml26.blitzrank.baselines.BaselineResult`.

    Raises:
        ValueError: a window larger than the oracle's ``k``, a stride outside
            ``1..window-1``, ``passes < 1`` or ``depth`` outside ``2..n``.
    """
    order = start(oracle, prior, window)
    n = len(order)
    if isinstance(stride, bool) or not isinstance(stride, int) or not 1 <= stride < window:
        # stride 0 would never move the window; stride >= window skips items between windows.
        raise ValueError(f"stride must be an integer in 1..window-1={window - 1}, got {stride!r}")
    if passes < 1:
        raise ValueError(f"passes must be >= 1, got {passes}")
    depth = n if depth is None else depth
    if not 2 <= depth <= n:
        raise ValueError(f"depth must be in 2..n={n}, got {depth}")
    calls = 0
    for _ in range(passes):
        end = depth
        while True:
            begin = max(0, end - window)
            ans = ask(oracle, order[begin:end])
            order[begin:end] = list(ans.order + ans.rest)
            calls += 1
            if begin == 0:
                break
            end -= stride
    return BaselineResult(ranking=order, calls=calls, rounds=calls)


@dataclass(frozen=True)
class SlidingWindow:
    """The sliding window as a :class:`~icml26.blitzrank.ranker.Ranker`.

    Args:
        m: the top items reported in the result's ``top``.
        window: items per call.
        stride: how far the window moves between calls.
        passes: sweeps from the bottom to the top.

    Raises:
        ValueError: ``m < 1`` (the other settings are checked by :meth:`rank`).
    """

    m: int = 10
    window: int = 20
    stride: int = 10
    passes: int = 1

    def __post_init__(self) -> None:
        check_m(self.m)

    @property
    def k(self) -> int:
        """Items per call: the window."""
        return self.window

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Rerank with :func:`sliding_window`.

        Args:
            oracle: the listwise oracle.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The ranking, not certified (``certified=None``).

        Raises:
            ValueError: as :func:`sliding_window`.
        """
        out = sliding_window(
            oracle, prior, window=self.window, stride=self.stride, passes=self.passes
        )
        return out.as_rank_result(self.m)
