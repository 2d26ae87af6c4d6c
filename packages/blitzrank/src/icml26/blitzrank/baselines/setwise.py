"""Setwise reranking with a c-ary heap (Zhuang et al. 2024, "A Setwise Approach").

Each comparison shows a parent and its children (up to ``window`` items) and asks only for the
best one (``top=1``: a one-label answer, so few output tokens). A max-heap is built bottom-up
over the first-stage list and the top ``m`` are popped, ``window - 1`` children per node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from icml26.blitzrank.baselines._common import BaselineResult, ask, check_m, start
from icml26.blitzrank.oracles.base import Oracle
from icml26.blitzrank.ranker import RankResult

__all__ = ["Setwise", "heap_select", "setwise"]


def heap_select(oracle: Oracle, order: list[int], m: int, arity: int) -> tuple[list[int], int]:
    """Top-``m`` of ``order`` by heap selection with ``arity`` children per node.

    With ``arity + 1`` items per call, each sift step is one "best of" call; with a pairwise
    oracle (``oracle.k == 2``) the best of a parent and its children is found by a knockout of
    pairwise calls. Returns (the full ranking: the top-m popped, then the rest), calls.
    """
    heap = list(order)
    calls = 0

    def best_of(items: list[int]) -> int:
        nonlocal calls
        if len(items) <= oracle.k:
            calls += 1
            return ask(oracle, items, top=1).order[0]
        champion = items[0]
        for challenger in items[1:]:
            calls += 1
            champion = ask(oracle, [champion, challenger], top=1).order[0]
        return champion

    def sift_down(i: int, size: int) -> None:
        while True:
            kids = [c for c in range(arity * i + 1, arity * i + 1 + arity) if c < size]
            if not kids:
                return
            members = [heap[i]] + [heap[c] for c in kids]
            winner = best_of(members)
            if winner == heap[i]:
                return
            j = kids[[heap[c] for c in kids].index(winner)]
            heap[i], heap[j] = heap[j], heap[i]
            i = j

    size = len(heap)
    for i in range((size - 2) // arity, -1, -1):
        sift_down(i, size)
    top: list[int] = []
    for _ in range(min(m, size)):
        top.append(heap[0])
        size -= 1
        heap[0] = heap[size]
        if size > 1:
            sift_down(0, size)
    rest = [i for i in order if i not in set(top)]
    return top + rest, calls


def setwise(
    oracle: Oracle,
    prior: Sequence[int] | None = None,
    *,
    m: int = 10,
    window: int = 4,
) -> BaselineResult:
    """Setwise heap selection of the top ``m`` with ``window`` items per call (parent + children).

    Args:
        oracle: the oracle (its ``k`` at least ``window``).
        prior: the first-stage order (default ``0..n-1``).
        m: how many items to select.
        window: items per call: a parent and ``window - 1`` children.

    Returns:
        The :class:`~icml26.blitzrank.baselines.BaselineResult`: the top-m popped in order,
        then the rest in first-stage order.

    Raises:
        ValueError: a window below 2 or above the oracle's ``k``, or ``m`` outside ``1..n``.
    """
    order = start(oracle, prior, window, m)
    ranking, calls = heap_select(oracle, order, m, arity=window - 1)
    return BaselineResult(ranking=ranking, calls=calls, rounds=calls)


@dataclass(frozen=True)
class Setwise:
    """Setwise heap selection as a :class:`~icml26.blitzrank.ranker.Ranker`.

    Args:
        m: how many items to select.
        window: items per call (a parent and its children).

    Raises:
        ValueError: ``m < 1`` (the window is checked by :meth:`rank`).
    """

    m: int = 10
    window: int = 4

    def __post_init__(self) -> None:
        check_m(self.m)

    @property
    def k(self) -> int:
        """Items per call: the window."""
        return self.window

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Select the top-m with :func:`setwise`.

        Args:
            oracle: the oracle.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The ranking, not certified (``certified=None``).

        Raises:
            ValueError: as :func:`setwise`.
        """
        return setwise(oracle, prior, m=self.m, window=self.window).as_rank_result(self.m)
