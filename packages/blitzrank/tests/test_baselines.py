"""Baselines on a perfect oracle recover the truth they guarantee; bad arguments fail."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.blitzrank.baselines import pairwise, setwise, sliding_window, tourrank
from icml26.blitzrank.baselines.tourrank import default_stages
from icml26.blitzrank.oracles import PerfectOracle


def _case(n: int = 100, seed: int = 0) -> tuple[np.ndarray, list[int]]:
    scores = np.random.default_rng(seed).normal(size=n)
    return scores, [int(i) for i in np.argsort(-scores)]


def test_sliding_window_one_pass_brings_top_window_minus_stride() -> None:
    scores, truth = _case()
    out = sliding_window(PerfectOracle(scores, 20), window=20, stride=10)
    assert out.ranking[:10] == truth[:10]
    assert out.calls == 9
    assert sorted(out.ranking) == list(range(100))


@pytest.mark.parametrize("window", [3, 4, 6])
def test_setwise_heap_returns_exact_top_m(window: int) -> None:
    scores, truth = _case(seed=window)
    out = setwise(PerfectOracle(scores, window), m=10, window=window)
    assert out.ranking[:10] == truth[:10]
    assert sorted(out.ranking) == list(range(100))


@pytest.mark.parametrize("both", [False, True])
def test_pairwise_heap_returns_exact_top_m(both: bool) -> None:
    scores, truth = _case(seed=5)
    oracle = PerfectOracle(scores, 2)
    out = pairwise(oracle, m=10, both_orders=both)
    assert out.ranking[:10] == truth[:10]
    assert oracle.usage.calls == out.calls
    assert out.calls > 100  # heapify alone needs about n pairwise calls


def test_tourrank_perfect_oracle_ranks_the_best_first() -> None:
    scores, truth = _case(seed=2)
    out = tourrank(PerfectOracle(scores, 20), m=10, window=20, tournaments=2)
    assert out.ranking[0] == truth[0]
    assert set(out.ranking[:10]) == set(truth[:10])
    assert out.rounds == len(default_stages(100, 10))


def test_default_stages_decrease_and_pass_through_m() -> None:
    s = default_stages(100, 10)
    assert s == sorted(s, reverse=True)
    assert 10 in s
    assert s[-1] == 1


@pytest.mark.parametrize("stride", [0, 20, -1])
def test_sliding_window_rejects_bad_stride(stride: int) -> None:
    with pytest.raises(ValueError, match="stride"):
        sliding_window(PerfectOracle(np.zeros(30), 20), window=20, stride=stride)


def test_window_larger_than_oracle() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        setwise(PerfectOracle(np.zeros(30), 3), m=5, window=4)


class _FirstShownWins:
    """A fully position-biased judge: whatever it is shown first wins."""

    def __init__(self, n: int) -> None:
        from icml26.blitzrank.oracles.base import Usage

        self.n, self.k, self.usage = n, 2, Usage()

    def compare(self, items, top=None):  # type: ignore[no-untyped-def]
        from icml26.blitzrank.oracles.base import Comparison

        self.usage.record(calls=1)
        return Comparison(order=(items[0],), rest=tuple(items[1:]))


def test_pairwise_both_orders_disagreement_is_a_tie_not_a_first_shown_win() -> None:
    """Every pair disagrees across the two orders, so every comparison is a PRP tie: the
    first-stage order decides, and the top-m is the first stage's (with the first-shown item
    winning instead, the heap pops the first stage's 0, then its last items)."""
    n, m = 30, 8
    prior = [int(i) for i in np.random.default_rng(1).permutation(n)]
    out = pairwise(_FirstShownWins(n), prior, m=m, both_orders=True)
    assert out.ranking[:m] == prior[:m]
    assert sorted(out.ranking) == list(range(n))


def test_pairwise_both_orders_keeps_agreeing_answers() -> None:
    scores, truth = _case(n=40, seed=5)
    out = pairwise(PerfectOracle(scores, 2), list(reversed(truth)), m=5, both_orders=True)
    assert out.ranking[:5] == truth[:5]
