"""The re-ask option: share 0 is the paper's engine, a planted lie at the cut is outvoted,
a persistent oracle costs one confirming call, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.blitzrank import BlitzRank, PlackettLuceOracle
from icml26.blitzrank.graph import TournamentGraph
from icml26.blitzrank.oracles import PerfectOracle, PersistentOracle
from icml26.blitzrank.reask import agrees, blitzrank_reask, tier_vote_ranking, verify_window

SCORES = -np.arange(40, dtype=float)  # item i has true rank i


class LiesOnceAtTheCut(PerfectOracle):
    """Perfect, except that its first answer holding items 9 and 10 puts 10 above 9."""

    lied = False

    def _order(self, items: np.ndarray) -> np.ndarray:
        order = super()._order(items)
        if not self.lied and 9 in order and 10 in order:
            self.lied = True
            i, j = list(order).index(9), list(order).index(10)
            order[i], order[j] = 10, 9
        return order


def test_share_zero_is_the_papers_engine() -> None:
    a = PlackettLuceOracle(SCORES, 10, temperature=3.0, seed=3)
    b = PlackettLuceOracle(SCORES, 10, temperature=3.0, seed=3)
    res = BlitzRank(10, k=10).rank(a)
    rr = blitzrank_reask(b, 10, k=10, share=0.0)
    assert rr.ranking == res.ranking
    assert rr.calls == res.calls
    assert rr.verify_calls == 0
    assert a.usage.tokens == b.usage.tokens
    assert not rr.changed


def test_a_lie_at_the_cut_is_outvoted() -> None:
    engine = BlitzRank(10, k=10).rank(LiesOnceAtTheCut(SCORES, 10))
    assert engine.certified
    assert 10 in engine.top
    assert 9 not in engine.top
    rr = blitzrank_reask(LiesOnceAtTheCut(SCORES, 10), 10, k=10, share=1.0)
    assert rr.ranking[:10] == list(range(10))
    assert rr.changed
    assert 2 <= rr.verify_calls <= 3  # a tie after the first re-ask, decided by the second


def test_persistent_errors_cost_one_confirming_call() -> None:
    def oracle() -> PersistentOracle:
        return PersistentOracle(SCORES, 10, temperature=5.0, persistence=1.0, item_seed=4)

    engine = BlitzRank(10, k=10).rank(oracle())
    rr = blitzrank_reask(oracle(), 10, k=10, share=1.0)
    assert rr.verify_calls == 1
    assert rr.ranking[:10] == engine.top
    assert not rr.changed


def test_tier_vote_orders_a_cycle_by_its_own_votes() -> None:
    g = TournamentGraph(3)
    for order in ([0, 1, 2], [1, 0], [1, 0], [2, 1]):  # 1 beats 0 twice, 0 beats 1 once
        g.add_ordering(order)
    assert len(g.tiers()) == 1  # one cycle: 0 > 1 > 2 > 1 > 0
    assert tier_vote_ranking(g, np.arange(3))[0] == 1


def test_window_and_agreement() -> None:
    ranking = list(range(30))
    assert verify_window(ranking, 10, 10) == list(range(14, 4, -1))
    assert verify_window(ranking[:12], 10, 10) == list(range(11, 1, -1))  # shifted to fit
    assert agrees([3, 4, 25, 20], ranking, 10)  # 25 vs 20 lies below the cut
    assert not agrees([4, 3], ranking, 10)


def test_bad_share() -> None:
    with pytest.raises(ValueError, match="share"):
        blitzrank_reask(PerfectOracle(SCORES, 10), 10, share=-0.1)


class _Recorder(PerfectOracle):
    """Remembers the order every query was shown in."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.shown: list[tuple[int, ...]] = []

    def _order(self, items: np.ndarray) -> np.ndarray:
        self.shown.append(tuple(int(i) for i in items))
        return super()._order(items)


def test_present_prior_shows_every_query_in_the_first_stage_order() -> None:
    prior = list(np.random.default_rng(2).permutation(40))
    rank = {item: r for r, item in enumerate(prior)}
    o = _Recorder(SCORES, 10)
    res = BlitzRank(10, k=10, present="prior").rank(o, prior)
    assert res.certified
    assert res.top == list(range(10))
    assert all(list(q) == sorted(q, key=rank.__getitem__) for q in o.shown)
    current = _Recorder(SCORES, 10)
    BlitzRank(10, k=10).rank(current, prior)
    assert current.shown != o.shown  # the default shows later queries in its own order
    with pytest.raises(ValueError, match="present"):
        BlitzRank(10, present="random")
