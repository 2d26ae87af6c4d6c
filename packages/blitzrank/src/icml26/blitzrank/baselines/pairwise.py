"""Pairwise ranking prompting (PRP, Qin et al. 2024): top-m by heap sort on pairwise calls.

Each call shows two items and asks which is better (``top=1``). A binary heap over the
first-stage list finds the best of a parent and its two children with two pairwise calls.
With ``both_orders`` every comparison is asked in both presentations (PRP's debiasing), so the
cost doubles: an item wins only if it wins both; when the two orders disagree the pair is a
PRP tie (half a point each in PRP-Allpair). A heap step needs one winner, so a tie goes to the
item ranked higher by the first stage, whichever was shown first: the answer then does not
depend on presentation order, which is what the debiasing is for. ``ties`` counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from icml26.blitzrank.baselines._common import BaselineResult, ask, check_m, start
from icml26.blitzrank.baselines.setwise import heap_select
from icml26.blitzrank.oracles.base import Comparison, Oracle
from icml26.blitzrank.ranker import RankResult

__all__ = ["Pairwise", "pairwise"]


class _BothOrders:
    """An oracle view that asks each pair twice (a, b) and (b, a) and resolves by agreement."""

    def __init__(self, oracle: Oracle, first_stage: Sequence[int]) -> None:
        self.inner = oracle
        self.n, self.k, self.usage = oracle.n, 2, oracle.usage
        self.calls = 0
        self.ties = 0
        self.rank = {int(item): r for r, item in enumerate(first_stage)}

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        a, b = items
        first = ask(self.inner, [a, b], top=1).order[0]
        second = ask(self.inner, [b, a], top=1).order[0]
        self.calls += 2
        if first == second:
            winner = first
        else:  # the orders disagree: a tie, broken by the first stage, not by position
            self.ties += 1
            winner = a if self.rank[a] < self.rank[b] else b
        loser = b if winner == a else a
        return Comparison(order=(winner,), rest=(loser,))

    async def acompare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return self.compare(items, top)


def pairwise(
    oracle: Oracle,
    prior: Sequence[int] | None = None,
    *,
    m: int = 10,
    both_orders: bool = True,
) -> BaselineResult:
    """Heap-sort top-``m`` selection with pairwise calls.

    Args:
        oracle: the oracle (two items per call are shown).
        prior: the first-stage order (default ``0..n-1``).
        m: how many items to select.
        both_orders: ask every pair in both presentations (PRP's debiasing, the authors'
            heap PRP and the default; twice the calls). False: one order per pair.

    Returns:
        The :class:`~icml26.blitzrank.baselines.BaselineResult`.

    Raises:
        ValueError: ``m`` outside ``1..n``.
    """
    order = start(oracle, prior, 2, m)
    if both_orders:
        view = _BothOrders(oracle, order)
        ranking, _ = heap_select(view, order, m, arity=2)
        calls = view.calls
    else:
        pair_view = _PairOnly(oracle)
        ranking, calls = heap_select(pair_view, order, m, arity=2)
    return BaselineResult(ranking=ranking, calls=calls, rounds=calls)


class _PairOnly:
    """Restricts an oracle to two items per call, so heap selection uses pairwise knockouts."""

    def __init__(self, oracle: Oracle) -> None:
        self.inner = oracle
        self.n, self.k, self.usage = oracle.n, 2, oracle.usage

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return ask(self.inner, items, top)

    async def acompare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return ask(self.inner, items, top)


@dataclass(frozen=True)
class Pairwise:
    """Pairwise (PRP) heap selection as a :class:`~icml26.blitzrank.ranker.Ranker`.

    Args:
        m: how many items to select.
        both_orders: ask every pair in both presentations (default: the authors' PRP).

    Raises:
        ValueError: ``m < 1``.
    """

    m: int = 10
    both_orders: bool = True

    def __post_init__(self) -> None:
        check_m(self.m)

    @property
    def k(self) -> int:
        """Items per call: two."""
        return 2

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Select the top-m with :func:`pairwise`.

        Args:
            oracle: the oracle.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The ranking, not certified (``certified=None``).

        Raises:
            ValueError: as :func:`pairwise`.
        """
        out = pairwise(oracle, prior, m=self.m, both_orders=self.both_orders)
        return out.as_rank_result(self.m)
