"""Re-asking at the cut: a budgeted verification pass after certification (not in the paper).

The paper's engine believes every answer once: as soon as the answers so far *imply* the
top-m it stops, so under independent noise one wrong answer near position m is never
revisited. This option spends a small extra budget where an error costs most:

1. run :class:`~icml26.blitzrank.ranker.BlitzRank` until it certifies (``c`` calls);
2. up to ``ceil(share * c)`` times, ask the ``k`` items ranked around position m (ranks
   ``m - k/2 .. m + k/2 - 1``, clipped to the list) again, shown in the *reverse* of the
   current order (so a primacy-biased oracle is asked against its previous answer), and add
   the answer to the graph. An answer that contradicts the closure closes a cycle: the items
   involved become one tier, ordered inside by their net wins *among themselves* (every vote
   counted, a Borda count of the answers on those items);
3. stop early when the ranking, with the answer added, orders every pair of the answer that
   touches the top-m as the answer does (the re-ask confirmed it, or its vote now decides).

Under independent noise a re-asked answer is a fresh vote, so the votes average; under fully
persistent noise the re-ask repeats the same error and only costs tokens. The paper's engine
is this with ``share = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml26.blitzrank.certify import certify
from icml26.blitzrank.graph import TournamentGraph
from icml26.blitzrank.oracles.base import Oracle
from icml26.blitzrank.ranker import BlitzRank, RankResult, check_answer, check_prior

__all__ = [
    "BlitzRankReask",
    "ReaskResult",
    "agrees",
    "blitzrank_reask",
    "tier_vote_ranking",
    "verify_window",
]


@dataclass(frozen=True)
class ReaskResult:
    """The outcome: ``ranking`` best first, ``calls`` in all (engine + verification),
    ``engine_calls`` (the paper's engine alone), ``verify_calls``, ``rounds`` (sequential),
    ``certified`` (the engine's certificate before verification), ``changed`` (whether
    verification changed the ordered top-m) and the final ``graph``."""

    ranking: list[int]
    calls: int
    engine_calls: int
    verify_calls: int
    rounds: int
    certified: bool
    changed: bool
    graph: TournamentGraph | None = None


def tier_vote_ranking(graph: TournamentGraph, prior: np.ndarray) -> list[int]:
    """Tiers in order; inside a tier, items by net wins over the tier's own members
    (``sum_j wins[i, j] - wins[j, i]``, ``j`` in the tier), then the graph's order."""
    base = graph.tiers(prior)
    out: list[int] = []
    for tier in base:
        if len(tier) == 1:
            out.extend(tier)
            continue
        idx = np.asarray(tier)
        sub = graph.wins[np.ix_(idx, idx)]
        net = sub.sum(axis=1) - sub.sum(axis=0)
        pos = np.arange(len(tier))  # the graph's own order breaks ties
        out.extend(int(i) for i in idx[np.lexsort((pos, -net))])
    return out


def agrees(answer: Sequence[int], ranking: Sequence[int], m: int) -> bool:
    """Whether ``ranking`` orders every pair of ``answer``'s items that involves one of its
    top ``m`` as ``answer`` does (the answer won every vote it took part in at the cut)."""
    pos = {item: r for r, item in enumerate(ranking)}
    ranks = [pos[i] for i in answer]
    return all(
        ranks[a] < ranks[b]
        for a in range(len(ranks))
        for b in range(a + 1, len(ranks))
        if min(ranks[a], ranks[b]) < m
    )


def verify_window(ranking: Sequence[int], m: int, k: int) -> list[int]:
    """The ``k`` items ranked around position ``m`` (``m - k//2 .. m + k - k//2 - 1``,
    shifted to fit the list), in the reverse of their current order."""
    n = len(ranking)
    size = min(k, n)
    start = min(max(0, m - k // 2), n - size)
    return list(reversed(list(ranking[start : start + size])))


def blitzrank_reask(
    oracle: Oracle,
    m: int,
    *,
    k: int | None = None,
    share: float = 0.25,
    prior: Sequence[int] | None = None,
) -> ReaskResult:
    """The paper's engine, then up to ``ceil(share * engine calls)`` verification calls.

    Args:
        oracle: the k-wise oracle.
        m: how many top items to determine.
        k: items per query (default the oracle's ``k``).
        share: the verification budget as a share of the engine's calls (0: the engine).
        prior: the first-stage order (default ``0..n-1``).

    Returns:
        The :class:`ReaskResult`.

    Raises:
        ValueError: a negative ``share``, or a setting :class:`BlitzRank` refuses.
    """
    if not share >= 0:
        raise ValueError(f"share must be >= 0 (a fraction of the engine's calls), got {share!r}")
    prior_arr = check_prior(prior, int(oracle.n))
    res = BlitzRank(m, k=k).rank(oracle, prior)
    graph = res.graph
    assert graph is not None
    kk = k if k is not None else int(oracle.k)
    budget = math.ceil(share * res.calls)
    ranking = list(res.ranking)  # the paper's output: share = 0 returns it unchanged
    first_top = ranking[:m]
    used = 0
    while used < budget:
        items = verify_window(ranking, m, kk)
        ans = oracle.compare(items)
        check_answer(oracle, items, ans)
        if ans.order:
            graph.add_ordering(ans.order, ans.rest)
        used += 1
        ranking = tier_vote_ranking(graph, prior_arr)
        if agrees(ans.order + ans.rest, ranking, m):
            break
    return ReaskResult(
        ranking=ranking,
        calls=res.calls + used,
        engine_calls=res.calls,
        verify_calls=used,
        rounds=res.rounds + used,
        certified=bool(res.certified),
        changed=ranking[:m] != first_top,
        graph=graph,
    )


class BlitzRankReask:
    """The re-ask option as a :class:`~icml26.blitzrank.ranker.Ranker`: the paper's engine,
    then a verification pass at position m (:func:`blitzrank_reask`; not in the paper).

    Args:
        m: how many top items to determine.
        k: items per query (default the oracle's ``k``).
        share: the verification budget as a share of the engine's calls.

    Raises:
        ValueError: ``m < 1``, ``k < 2`` or a negative ``share``.
    """

    def __init__(self, m: int, *, k: int | None = None, share: float = 0.25) -> None:
        BlitzRank(m, k=k)  # the engine's own checks of m and k
        if not share >= 0:
            raise ValueError(
                f"share must be >= 0 (a fraction of the engine's calls), got {share!r}"
            )
        self.m, self.k, self.share = m, k, share

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Rank with :func:`blitzrank_reask`.

        Args:
            oracle: the k-wise oracle.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The :class:`~icml26.blitzrank.ranker.RankResult`: ``certified`` is the engine's
            certificate before verification, ``verify_calls`` the verification's calls, and
            ``tiers`` the final graph's tiers covering the top-m, each in the vote order.

        Raises:
            ValueError: as :func:`blitzrank_reask`.
        """
        rr = blitzrank_reask(oracle, self.m, k=self.k, share=self.share, prior=prior)
        assert rr.graph is not None
        pos = {item: r for r, item in enumerate(rr.ranking)}
        tiers: list[list[int]] = []
        for tier in rr.graph.tiers(check_prior(prior, int(oracle.n))):
            if sum(map(len, tiers)) >= self.m:
                break
            tiers.append(sorted(tier, key=pos.__getitem__))
        return RankResult(
            ranking=rr.ranking,
            top=rr.ranking[: self.m],
            tiers=tiers,
            certified=rr.certified,
            boundary_tie=certify(rr.graph, self.m).boundary_tie,
            calls=rr.calls,
            rounds=rr.rounds,
            graph=rr.graph,
            verify_calls=rr.verify_calls,
        )
