"""Sliding-window listwise reranking (RankGPT, Sun et al. 2023).

A window of ``window`` items slides from the bottom of the first-stage list to the top with
step ``stride``; each window is reordered by the oracle in place. One pass carries the best
``window - stride`` items of the list to the top when the oracle is perfect (that is all it
guarantees); ``passes`` repeats the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence

from icml26.blitzrank.baselines._common import BaselineResult, start
from icml26.blitzrank.oracles.base import Oracle

__all__ = ["sliding_window"]


def sliding_window(
    oracle: Oracle,
    prior: Sequence[int] | None = None,
    *,
    window: int = 20,
    stride: int = 10,
    passes: int = 1,
    depth: int | None = None,
) -> BaselineResult:
    """Rerank the first ``depth`` items (default all) with back-to-front sliding windows."""
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
            ans = oracle.compare(order[begin:end])
            order[begin:end] = list(ans.order + ans.rest)
            calls += 1
            if begin == 0:
                break
            end -= stride
    return BaselineResult(ranking=order, calls=calls, rounds=calls)
