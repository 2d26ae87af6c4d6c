"""TourRank (Chen et al. 2025): tournament-style selection with points, repeated r times.

One tournament: the candidates are dealt into groups of at most ``window``; from each group
the oracle selects the best few (``top=q``) who advance; stages shrink the field
(``100 -> 50 -> 20 -> 10 -> 5 -> 2 -> 1`` by default, scaled to n). Every advance earns a
point. ``tournaments`` independent tournaments (shuffled groupings) run in parallel and the
final ranking sorts by total points, ties by the first-stage order. Rounds = stages (the
queries of a stage, and the tournaments, are independent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml26.blitzrank.baselines._common import BaselineResult, ask, check_m, start
from icml26.blitzrank.oracles.base import Oracle
from icml26.blitzrank.ranker import RankResult

__all__ = ["TourRank", "default_stages", "tourrank"]


def default_stages(n: int, m: int) -> list[int]:
    """Field sizes after each stage: halving-ish down to 1, always passing through ``m``."""
    sizes: list[int] = []
    for frac in (0.5, 0.2, 0.1, 0.05, 0.02):
        s = max(1, round(n * frac))
        if not sizes or s < sizes[-1]:
            sizes.append(s)
    if m < n and m not in sizes:
        sizes.append(m)
    sizes.append(1)
    return sorted({s for s in sizes if s < n}, reverse=True)


def tourrank(
    oracle: Oracle,
    prior: Sequence[int] | None = None,
    *,
    m: int = 10,
    window: int = 20,
    tournaments: int = 1,
    stages: Sequence[int] | None = None,
    seed: int = 0,
) -> BaselineResult:
    """TourRank-``tournaments`` with groups of at most ``window`` items.

    Args:
        oracle: the oracle (its ``k`` at least ``window``).
        prior: the first-stage order (default ``0..n-1``).
        m: the field size the stages pass through.
        window: the most items per group (per call).
        tournaments: independent tournaments (the first in first-stage order, the others
            shuffled). Default 1: the budget of the BlitzRank paper's TourRank row (about
            the sliding window's tokens, 57k vs 54k); TourRank's own paper also reports
            TourRank-r for larger r at r times the cost.
        stages: the field sizes after each stage (default :func:`default_stages`).
        seed: seeds the shuffles.

    Returns:
        The :class:`~icml26.blitzrank.baselines.BaselineResult` (rounds: the stages).

    Raises:
        ValueError: ``tournaments < 1``, stages that do not strictly decrease, or a bad window
            or ``m``.
    """
    order = start(oracle, prior, window, m)
    n = len(order)
    if tournaments < 1:
        raise ValueError(f"tournaments must be >= 1, got {tournaments}")
    plan = list(stages) if stages is not None else default_stages(n, m)
    if any(b >= a for a, b in zip([n, *plan[:-1]], plan, strict=True)) or plan[-1] < 1:
        raise ValueError(f"stages must strictly decrease from n={n} to >= 1, got {plan}")
    rng = np.random.default_rng(seed)
    points = np.zeros(n)
    calls = 0
    for t in range(tournaments):
        field_ = list(order) if t == 0 else [order[i] for i in rng.permutation(n)]
        for target in plan:
            groups = max(1, -(-len(field_) // window))
            members = [field_[g::groups] for g in range(groups)]
            quota = _split(target, [len(x) for x in members])
            advanced = []
            for grp, q in zip(members, quota, strict=True):
                if q == 0 or len(grp) < 2:
                    advanced.extend(grp[:q])
                    continue
                if q >= len(grp):
                    advanced.extend(grp)
                    continue
                ans = ask(oracle, grp, top=q)
                calls += 1
                advanced.extend(ans.order)
            points[advanced] += 1
            field_ = advanced
    rank_prior = {item: r for r, item in enumerate(order)}
    ranking = sorted(order, key=lambda i: (-points[i], rank_prior[i]))
    return BaselineResult(ranking=ranking, calls=calls, rounds=len(plan))


@dataclass(frozen=True)
class TourRank:
    """TourRank as a :class:`~icml26.blitzrank.ranker.Ranker`.

    Args:
        m: the field size the stages pass through (and the result's ``top``).
        window: the most items per group.
        tournaments: independent tournaments (default 1, the BlitzRank paper's budget).
        seed: seeds the shuffles.

    Raises:
        ValueError: ``m < 1`` (the other settings are checked by :meth:`rank`).
    """

    m: int = 10
    window: int = 20
    tournaments: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        check_m(self.m)

    @property
    def k(self) -> int:
        """Items per call: the window."""
        return self.window

    def rank(self, oracle: Oracle, prior: Sequence[int] | None = None) -> RankResult:
        """Rank with :func:`tourrank`.

        Args:
            oracle: the oracle.
            prior: the first-stage order (default ``0..n-1``).

        Returns:
            The ranking by points, not certified (``certified=None``).

        Raises:
            ValueError: as :func:`tourrank`.
        """
        out = tourrank(
            oracle,
            prior,
            m=self.m,
            window=self.window,
            tournaments=self.tournaments,
            seed=self.seed,
        )
        return out.as_rank_result(self.m)


def _split(total: int, sizes: list[int]) -> list[int]:
    """``total`` advancing places shared among groups in proportion to their sizes."""
    n = sum(sizes)
    raw = [total * s / n for s in sizes]
    quota = [min(s, int(np.floor(r))) for r, s in zip(raw, sizes, strict=True)]
    rema = sorted(range(len(sizes)), key=lambda g: -(raw[g] - quota[g]))
    for g in rema:
        if sum(quota) >= total:
            break
        if quota[g] < sizes[g]:
            quota[g] += 1
    return quota
