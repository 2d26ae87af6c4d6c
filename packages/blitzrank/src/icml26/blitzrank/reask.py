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

from icml26.blitzrank.graph import TournamentGraph
from icml26.blitzrank.oracles.base import Oracle
from icml26.blitzrank.ranker import BlitzRank, check_prior

__all__ = ["ReaskResult", "agrees", "blitzrank_reask", "tier_vote_ranking", "verify_window"]


@dataclass(frozen=True)
class ReaskResult:
    """The outcome: ``ranking`` best first, ``calls`` in all (engine + verification),
    ``engine_calls`` (the paper's engine alone), ``verify_calls``, ``rounds`` (sequential),
    ``certified`` (the engine's certificate before verification) and ``changed`` (whether
    verification changed the ordered top-m)."""

    ranking: list[int]
    calls: int
    engine_calls: int
    verify_calls: int
    rounds: int
    certified: bool
    changed: bool


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
    """The paper's engine, then up to ``ceil(share * engine calls)`` verification calls."""
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
        certified=res.certified,
        changed=ranking[:m] != first_top,
    )
