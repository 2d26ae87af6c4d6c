"""BlitzRank: ask k-wise questions until the top-m is certified (or a budget is spent).

Also the :class:`Ranker` protocol that the engine, its options and every baseline implement
(``rank(oracle) -> RankResult``), so a comparison runs them all the same way.

The loop: certify the current tournament graph; if the top-m is not determined, let the
schedule pick the next k items (``parallel`` disjoint queries per round for a batched or
async oracle), ask the oracle, add each answer's induced tournament to the graph, repeat.
Because every query holds an undetermined pair, the loop ends after at most ``n choose 2``
answers even when the oracle is inconsistent; cycles then show up as tiers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from icml26.blitzrank.certify import Mode, certify
from icml26.blitzrank.graph import TournamentGraph
from icml26.blitzrank.oracles.base import Comparison, Oracle
from icml26.blitzrank.schedule import Schedule, schedule

__all__ = [
    "BlitzRank",
    "CallBudgetError",
    "OracleAnswerError",
    "RankResult",
    "Ranker",
    "check_answer",
    "check_prior",
    "rank_top_m",
]


@dataclass(frozen=True)
class RankResult:
    """The outcome of one ranking, by BlitzRank or by any other :class:`Ranker`.

    Attributes:
        ranking: every item, best first (tiers in order; inside a tier by net wins).
        top: the first ``m`` items of ``ranking``.
        tiers: the tiers (equivalence classes) covering positions 1..m, best first; a
            ranker without a preference graph (the baselines) reports one item per tier.
        certified: the top-m was certified (see :mod:`icml26.blitzrank.certify`); ``None``
            for a ranker that does not certify (the baselines).
        boundary_tie: a preference cycle straddles position m.
        calls: oracle calls made by this ranking.
        rounds: sequential rounds (a round sends up to ``parallel`` queries at once).
        queries: the items of every query, in order (BlitzRank's; empty for the baselines).
        engine_seconds: time spent in graph updates, certification and scheduling.
        oracle_seconds: time spent waiting for the oracle.
        graph: the final tournament graph (BlitzRank's; ``None`` for the baselines).
        verify_calls: calls spent verifying after certification (the re-ask option,
            :class:`~icml26.blitzrank.reask.BlitzRankReask`); ``None`` for other rankers.
        budget_exhausted: BlitzRank stopped because ``max_calls`` was spent (with
            ``on_budget="return"``).
    """

    ranking: list[int]
    top: list[int]
    tiers: list[list[int]]
    certified: bool | None
    boundary_tie: bool
    calls: int
    rounds: int
    queries: list[tuple[int, ...]] = field(default_factory=list, repr=False)
    engine_seconds: float = 0.0
    oracle_seconds: float = 0.0
    graph: TournamentGraph | None = field(default=None, repr=False)
    verify_calls: int | None = None
    budget_exhausted: bool = False


@runtime_checkable
class Ranker(Protocol):
    """What a comparison needs from a ranking method: the engine, its options, a baseline.

    Implemented by :class:`BlitzRank`, :class:`~icml26.blitzrank.reask.BlitzRankReask` and
    the baselines' classes (:class:`~icml26.blitzrank.baselines.SlidingWindow`,
    :class:`~icml26.blitzrank.baselines.Setwise`,
    :class:`~icml26.blitzrank.baselines.Pairwise`,
    :class:`~icml26.blitzrank.baselines.TourRank`).

    Attributes:
        k: the most items the ranker shows per oracle call (the oracle's window must be at
            least this); ``None`` for "the oracle's own ``k``".
    """

    @property
    def k(self) -> int | None: ...

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Rank ``oracle``'s items.

        Args:
            oracle: the k-wise oracle over items ``0..n-1``.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The ranking, its top-m, calls and rounds.
        """
        ...


def check_prior(prior: Sequence[int] | None, n: int) -> np.ndarray:
    """``prior`` (a first-stage order of ``0..n-1``) as an array; ``None`` -> ``0..n-1``."""
    if prior is None:
        return np.arange(n)
    arr = np.asarray(list(prior), dtype=np.int64)
    if arr.shape != (n,) or len(set(arr.tolist())) != n or arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"prior must be a permutation of 0..{n - 1} (duplicate or missing ids)")
    return arr


class BlitzRank:
    """Top-m selection with a k-wise oracle through the tournament graph.

    Args:
        m: how many top items to determine (``1 <= m <= n``).
        k: items per query; default the oracle's ``k``. Must be >= 2 and <= the oracle's k.
        mode: ``"ordered"`` certifies the top-m and their order; ``"set"`` only the set.
        schedule: ``"reach"`` (default) or ``"entropy"`` (see
            :mod:`icml26.blitzrank.schedule`).
        parallel: disjoint queries sent together per round (batched / async oracles).
        max_calls: budget of oracle calls; ``None`` for no budget (termination is guaranteed
            anyway: a round whose answers add no preference raises
            :class:`OracleAnswerError`, since the same query would come back forever).
        on_budget: what a spent budget does: ``"raise"`` (default) raises
            :class:`CallBudgetError` naming the budget and the calls made; ``"return"``
            returns the uncertified result (``certified=False``, ``budget_exhausted=True``).
        present: the order a query's items are shown in: ``"current"`` (default: the
            current best-known ranking) or ``"prior"`` (the first-stage order; an option, not
            the paper's: with a primacy-biased oracle it keeps the first stage's information
            in every answer, as the sliding window does).

    Raises:
        ValueError: a setting out of range (``m < 1``, ``k < 2``, an unknown ``mode``,
            ``schedule``, ``present`` or ``on_budget``, ``parallel < 1``, ``max_calls < 1``).

    Example::

        res = BlitzRank(m=10, k=10).rank(PlackettLuceOracle(scores, k=10))
        res.top, res.tiers, res.certified, res.calls
    """

    def __init__(
        self,
        m: int,
        *,
        k: int | None = None,
        mode: Mode = "ordered",
        schedule: Schedule = "reach",
        parallel: int = 1,
        max_calls: int | None = None,
        present: str = "current",
        on_budget: str = "raise",
    ) -> None:
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"m must be a positive integer, got {m!r}")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 2):
            raise ValueError(f"k must be an integer >= 2, got {k!r}")
        if mode not in ("ordered", "set"):
            raise ValueError(f"mode must be 'ordered' or 'set', got {mode!r}")
        if schedule not in ("reach", "entropy"):
            raise ValueError(f"schedule must be 'reach' or 'entropy', got {schedule!r}")
        if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
            raise ValueError(f"parallel must be an integer >= 1, got {parallel!r}")
        if max_calls is not None and max_calls < 1:
            raise ValueError(f"max_calls must be >= 1 or None, got {max_calls!r}")
        self.m = m
        self.k = k
        self.mode: Mode = mode
        self.schedule: Schedule = schedule
        self.parallel = parallel
        self.max_calls = max_calls
        if present not in ("current", "prior"):
            raise ValueError(f"present must be 'current' or 'prior', got {present!r}")
        self.present = present
        if on_budget not in ("raise", "return"):
            raise ValueError(f"on_budget must be 'raise' or 'return', got {on_budget!r}")
        self.on_budget = on_budget

    def _setup(self, oracle: Oracle, prior: Sequence[int] | None) -> tuple[int, int, np.ndarray]:
        n = int(oracle.n)
        if self.m > n:
            raise ValueError(f"m={self.m} exceeds the number of items n={n}")
        k = self.k if self.k is not None else int(oracle.k)
        if k > oracle.k:
            raise ValueError(f"k={k} exceeds the oracle's window of {oracle.k} items")
        if k < 2:
            raise ValueError(f"k must be >= 2, got {k}")
        return n, k, check_prior(prior, n)

    def _next_queries(
        self, graph: TournamentGraph, k: int, prior: np.ndarray, calls: int
    ) -> list[list[int]] | None:
        """The next round's queries, ``[]`` when certified, ``None`` when out of budget."""
        if certify(graph, self.m, self.mode).certified:
            return []
        if self.max_calls is not None and calls >= self.max_calls:
            if self.on_budget == "raise":
                raise CallBudgetError(
                    f"BlitzRank(m={self.m}) spent its budget of max_calls={self.max_calls} "
                    f"oracle calls without certifying the top-{self.m}; raise max_calls, or "
                    "pass on_budget='return' to get the uncertified ranking"
                )
            return None
        budget = self.parallel
        if self.max_calls is not None:
            budget = min(budget, self.max_calls - calls)
        queries: list[list[int]] = []
        taken: set[int] = set()
        for _ in range(budget):
            q = schedule(
                self.schedule, graph, self.m, k, mode=self.mode, prior=prior, exclude=taken
            )
            if not q:
                break
            queries.append(q)
            taken.update(q)
        if not queries:  # cannot happen while items are open: a scheduler bug
            raise RuntimeError("the top-m is not certified but no informative query exists")
        # Show each query in the current best-known order (how a reranker's prompt lists it),
        # or with present="prior" in the first-stage order.
        shown = prior if self.present == "prior" else graph.ranking(prior)
        pos = {int(item): r for r, item in enumerate(shown)}
        return [sorted(q, key=pos.__getitem__) for q in queries]

    def _result(
        self,
        graph: TournamentGraph,
        prior: np.ndarray,
        calls: int,
        rounds: int,
        queries: list[tuple[int, ...]],
        engine_s: float,
        oracle_s: float,
    ) -> RankResult:
        cert = certify(graph, self.m, self.mode)
        tiers_all = graph.tiers(prior)
        ranking = [i for t in tiers_all for i in t]
        tiers, covered = [], 0
        for t in tiers_all:
            if covered >= self.m:
                break
            tiers.append(t)
            covered += len(t)
        return RankResult(
            ranking=ranking,
            top=ranking[: self.m],
            tiers=tiers,
            certified=cert.certified,
            boundary_tie=cert.boundary_tie,
            calls=calls,
            rounds=rounds,
            queries=queries,
            engine_seconds=engine_s,
            oracle_seconds=oracle_s,
            graph=graph,
            budget_exhausted=not cert.certified
            and self.max_calls is not None
            and calls >= self.max_calls,
        )

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Ask ``oracle`` k-wise questions until the top-m is certified or the budget is spent.

        Args:
            oracle: the k-wise oracle over items ``0..n-1`` (any :class:`Oracle`).
            prior: the first-stage order, a permutation of ``0..n-1`` (default: ``0..n-1``);
                it breaks ties and orders the items shown in a prompt.

        Returns:
            The :class:`RankResult`: ranking, top-m, tiers, certificate, calls, rounds.

        Raises:
            ValueError: ``m`` larger than the oracle's ``n``, ``k`` larger than its window, or a
                ``prior`` that is not a permutation of ``0..n-1``.
        """
        loop = self._loop(oracle, prior)
        try:
            batch = next(loop)
            while True:
                batch = loop.send([oracle.compare(q) for q in batch])
        except StopIteration as done:
            return done.value

    async def arank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """As :meth:`rank`, sending each round's queries concurrently (``oracle.acompare``).

        Args:
            oracle: the k-wise oracle.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The :class:`RankResult`.

        Raises:
            ValueError: as :meth:`rank`.
        """
        loop = self._loop(oracle, prior)
        try:
            batch = next(loop)
            while True:
                answers = await asyncio.gather(*(oracle.acompare(q) for q in batch))
                batch = loop.send(list(answers))
        except StopIteration as done:
            return done.value

    def _loop(
        self, oracle: Oracle, prior: Sequence[int] | None
    ) -> Generator[list[list[int]], list[Comparison], RankResult]:
        """The loop of :meth:`rank` and :meth:`arank`: yields each round's queries, receives
        their answers, returns the result (the two differ only in how they ask)."""
        n, k, prior_arr = self._setup(oracle, prior)
        graph = TournamentGraph(n)
        calls = rounds = 0
        queries: list[tuple[int, ...]] = []
        engine_s = oracle_s = 0.0
        while True:
            t0 = time.perf_counter()
            batch = self._next_queries(graph, k, prior_arr, calls)
            engine_s += time.perf_counter() - t0
            if not batch:
                break
            t0 = time.perf_counter()
            answers = yield batch
            oracle_s += time.perf_counter() - t0
            engine_s += self._absorb(graph, batch, answers, queries, oracle)
            calls += len(batch)
            rounds += 1
        return self._result(graph, prior_arr, calls, rounds, queries, engine_s, oracle_s)

    @staticmethod
    def _absorb(
        graph: TournamentGraph,
        batch: list[list[int]],
        answers: list[Comparison],
        log: list[tuple[int, ...]],
        oracle: Oracle | None = None,
    ) -> float:
        t0 = time.perf_counter()
        before = graph.edges_added
        for q, ans in zip(batch, answers, strict=True):
            check_answer(oracle, q, ans)
            if ans.order:  # an answer that ranked nothing (all ids in rest) tells nothing
                graph.add_ordering(ans.order, ans.rest)
            log.append(tuple(q))
        if graph.edges_added == before:
            name = type(oracle).__name__ if oracle is not None else "the oracle"
            raise OracleAnswerError(
                f"{name}'s answers to {[tuple(q) for q in batch]} "
                f"({[(a.order, a.rest) for a in answers]}) resolved no open pair: the same "
                "queries would be asked forever (an oracle that leaves the ids unranked?)"
            )
        return time.perf_counter() - t0


class OracleAnswerError(ValueError):
    """An oracle's answer does not hold exactly the items it was asked about (or, for
    BlitzRank, a round of answers resolved nothing, so the ranking cannot progress).

    Raised by BlitzRank and by every baseline on every answer; the message names the oracle,
    the items asked and the answer.

    Attributes:
        args: ``(message,)``, as for every ``ValueError``.
    """


class CallBudgetError(RuntimeError):
    """A ranking spent its ``max_calls`` budget before it finished.

    Args:
        message: names the budget and the top-m left uncertified.
    """


def check_answer(oracle: object, asked: Sequence[int], answer: Comparison) -> None:
    """Refuse an answer that is not a reordering of the items asked (each once).

    An answer naming other items, dropping or repeating one would otherwise feed the graph
    preferences never asked for: the schedule can then loop (an item never compared) or
    certify a wrong top-m. Called on every answer by :class:`BlitzRank`.

    Args:
        oracle: the oracle (named in the error).
        asked: the items of the query.
        answer: its answer.

    Raises:
        OracleAnswerError: the answer's items are not exactly ``asked``.
    """
    items = answer.items
    if len(items) != len(asked) or set(items) != set(asked):
        name = type(oracle).__name__ if oracle is not None else "the oracle"
        raise OracleAnswerError(
            f"{name} answered {answer.order} > {answer.rest} to a query about "
            f"{tuple(asked)}: an answer must hold exactly the items asked, each once"
        )


def rank_top_m(oracle: Oracle, m: int, **kwargs: Any) -> RankResult:
    """One-call convenience: ``BlitzRank(m, **kwargs).rank(oracle, prior)``.

    Args:
        oracle: the k-wise oracle.
        m: how many top items to determine.
        **kwargs: :class:`BlitzRank`'s settings, and ``prior`` for :meth:`BlitzRank.rank`.

    Returns:
        The :class:`RankResult`.
    """
    prior = kwargs.pop("prior", None)
    return BlitzRank(m, **kwargs).rank(oracle, prior)
