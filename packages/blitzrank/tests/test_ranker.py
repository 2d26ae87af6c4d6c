"""BlitzRank loop: schedule informativeness, tiers under cycles, budgets, async, bad input."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from icml26.blitzrank import BlitzRank, PlackettLuceOracle
from icml26.blitzrank.graph import TournamentGraph
from icml26.blitzrank.oracles import CyclicOracle, PerfectOracle
from icml26.blitzrank.oracles.base import Comparison
from icml26.blitzrank.ranker import CallBudgetError


class Watchful:
    """Wraps an oracle; checks each query against the answers seen so far."""

    def __init__(self, inner: PerfectOracle | CyclicOracle | PlackettLuceOracle) -> None:
        self.inner, self.n, self.k, self.usage = inner, inner.n, inner.k, inner.usage
        self.shadow = TournamentGraph(inner.n)

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        comp = self.shadow.comparable()
        labels = self.shadow.state().labels
        assert len({int(labels[i]) for i in items}) == len(items), "two items of one tier"
        assert any(not comp[a, b] for a in items for b in items if a != b), (
            f"query {list(items)} holds no undetermined pair"
        )
        ans = self.inner.compare(items, top)
        self.shadow.add_ordering(ans.order, ans.rest)
        return ans

    async def acompare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return self.compare(items, top)


@pytest.mark.parametrize("schedule", ["reach", "entropy"])
@pytest.mark.parametrize(
    "make",
    [
        lambda s, k: PerfectOracle(s, k),
        lambda s, k: PlackettLuceOracle(s, k, temperature=0.5, seed=1),
        lambda s, k: CyclicOracle(s, k),
    ],
)
def test_schedule_never_asks_a_fully_determined_query(schedule: str, make) -> None:  # type: ignore[no-untyped-def]
    for k in (2, 5):
        scores = np.random.default_rng(k).normal(size=30)
        res = BlitzRank(5, k=k, schedule=schedule).rank(Watchful(make(scores, k)))  # type: ignore[arg-type]
        assert res.certified


def test_cyclic_oracle_yields_pure_tiers_in_group_order() -> None:
    found = 0
    for seed in range(12):
        scores = np.random.default_rng(seed).normal(size=60)
        oracle = CyclicOracle(scores, 5)
        res = BlitzRank(10, k=5).rank(oracle)
        assert res.certified
        assert res.graph is not None
        tiers = res.graph.tiers()
        multi = [t for t in tiers if len(t) > 1]
        found += len(multi)
        for t in multi:  # a tier never mixes cyclic groups
            assert len({int(oracle.group[i]) for i in t}) == 1
        # the certified top tiers follow the (consistent) order between groups
        groups = [int(oracle.group[i]) for t in res.tiers for i in t]
        assert groups == sorted(groups)
        assert set(groups) == set(range(max(groups) + 1))
    assert found > 0, "rotating answers on 3-cycles should reveal some cycle"


def test_true_cycle_ground_truth_is_a_regular_tournament() -> None:
    oracle = CyclicOracle(np.arange(6.0)[::-1], 3)
    a, b, c = (int(i) for i in np.flatnonzero(oracle.group == 0))
    assert oracle.beats(a, b)
    assert oracle.beats(b, c)
    assert oracle.beats(c, a)
    ans = [oracle.compare([a, b, c]).order for _ in range(3)]
    assert len(set(ans)) == 3  # the adversary rotates its linear answer


def test_budget_raises_by_default_naming_the_budget() -> None:
    scores = np.random.default_rng(0).normal(size=50)
    with pytest.raises(CallBudgetError, match="max_calls=3"):
        BlitzRank(10, k=5, max_calls=3).rank(PerfectOracle(scores, 5))


def test_budget_stops_early_uncertified_when_asked_to_return() -> None:
    scores = np.random.default_rng(0).normal(size=50)
    res = BlitzRank(10, k=5, max_calls=3, on_budget="return").rank(PerfectOracle(scores, 5))
    assert res.calls == 3
    assert res.budget_exhausted
    assert not res.certified
    assert len(res.ranking) == 50
    assert len(set(res.ranking)) == 50


def test_parallel_rounds_async_matches_truth() -> None:
    scores = np.random.default_rng(3).normal(size=60)
    oracle = PerfectOracle(scores, 6)
    res = asyncio.run(BlitzRank(8, k=6, parallel=3).arank(oracle))
    assert res.certified
    assert res.top == list(np.argsort(-scores)[:8])
    assert res.rounds < res.calls
    for r in range(0, len(res.queries), 3):  # queries of one round are disjoint
        chunk = res.queries[r : r + 3]
        flat = [i for q in chunk for i in q]
        assert len(flat) == len(set(flat)) or len(chunk) < 3


def test_tokens_charged_from_the_prompt_as_built() -> None:
    """The default token model reads the prompt listwise_messages builds (4 chars a token),
    not hand-set constants: an independent count from the message text."""
    import math

    from icml26.blitzrank.oracles.prompts import listwise_messages

    scores = np.zeros(10)
    lengths = np.arange(10) * 10 + 20
    oracle = PerfectOracle(scores, 4, passage_tokens=lengths, query_tokens=7)
    oracle.compare([1, 2, 3])
    chars = sum(len(m["content"]) for m in listwise_messages("", ["", "", ""]))
    assert oracle.usage.input_tokens == math.ceil(chars / 4) + 2 * 7 + (30 + 40 + 50)
    assert oracle.usage.output_tokens == math.ceil(len("[1] > [2] > [3]") / 4)
    oracle.compare([4, 5], top=1)
    best_of = sum(len(m["content"]) for m in listwise_messages("", ["", ""], top=1))
    assert oracle.usage.input_tokens == (
        math.ceil(chars / 4) + math.ceil(best_of / 4) + 4 * 7 + (30 + 40 + 50) + (60 + 70)
    )
    assert oracle.usage.calls == 2
    assert oracle.usage.items_shown == 5
    assert oracle.usage.output_tokens == math.ceil(15 / 4) + math.ceil(len("[1]") / 4)


def test_hand_set_token_model_still_available() -> None:
    from icml26.blitzrank.oracles import TokenModel

    tm = TokenModel()
    oracle = PerfectOracle(np.zeros(10), 4, query_tokens=7, token_model=tm)
    oracle.compare([1, 2, 3])
    assert oracle.usage.input_tokens == tm.header + 7 + 300 + 3 * tm.per_item


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"m": 0}, "m must"),
        ({"m": 3, "k": 1}, "k must"),
        ({"m": 3, "parallel": 0}, "parallel"),
        ({"m": 3, "mode": "x"}, "mode"),
        ({"m": 3, "schedule": "x"}, "schedule"),
        ({"m": 3, "max_calls": 0}, "max_calls"),
    ],
)
def test_bad_ranker_arguments(kwargs: dict, match: str) -> None:
    m = kwargs.pop("m")
    with pytest.raises(ValueError, match=match):
        BlitzRank(m, **kwargs)


def test_m_larger_than_n_and_k_larger_than_window() -> None:
    oracle = PerfectOracle(np.zeros(5), 3)
    with pytest.raises(ValueError, match="exceeds the number of items"):
        BlitzRank(6).rank(oracle)
    with pytest.raises(ValueError, match="exceeds the oracle"):
        BlitzRank(2, k=4).rank(oracle)


def test_duplicate_ids_are_rejected() -> None:
    oracle = PerfectOracle(np.zeros(5), 3)
    with pytest.raises(ValueError, match="duplicate"):
        oracle.compare([1, 1, 2])
    with pytest.raises(ValueError, match="permutation"):
        BlitzRank(2).rank(oracle, prior=[0, 0, 1, 2, 3])


def test_oracle_input_validation() -> None:
    with pytest.raises(ValueError, match="NaN"):
        PerfectOracle([0.0, float("nan"), 1.0], 2)
    with pytest.raises(ValueError, match="k"):
        PerfectOracle([0.0, 1.0], 1)
    oracle = PerfectOracle([0.0, 1.0, 2.0], 2)
    with pytest.raises(ValueError, match="at most k"):
        oracle.compare([0, 1, 2])
    with pytest.raises(ValueError, match="outside"):
        oracle.compare([0, 7])
