"""The name -> Ranker table: every method is a Ranker returning a RankResult, finds the truth
a perfect oracle gives it, and the comparison harness pairs options with the engine."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.blitzrank import Ranker, RankResult
from icml26.blitzrank.config import LLM_METHODS
from icml26.blitzrank.data import make_simulated_queries
from icml26.blitzrank.evaluate import FIRST_STAGE, EvalSettings, evaluate, standard_error
from icml26.blitzrank.methods import RANKERS, RankerSettings, comparison_methods, method
from icml26.blitzrank.oracles import PerfectOracle, PlackettLuceOracle

SETTINGS = RankerSettings(m=5, window=8, stride=2, setwise_window=4)  # one pass: top 6 exact


def _method(name: str):  # the per-k rankers at k = 6
    return method(name, 6 if RANKERS[name].per_k else None)


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_every_ranker_finds_the_perfect_oracles_top(name: str) -> None:
    scores = np.random.default_rng(3).normal(size=30)
    ranker = _method(name).build(SETTINGS, seed=1)
    assert isinstance(ranker, Ranker)
    oracle = PerfectOracle(scores, ranker.k)
    res = ranker.rank(oracle)
    assert isinstance(res, RankResult)
    truth = [int(i) for i in np.argsort(-scores)]
    assert sorted(res.ranking) == list(range(30))
    assert res.calls == oracle.usage.calls > 0
    if name == "tourrank":  # guarantees the winner only (points, not a full order)
        assert res.top[0] == truth[0]
    else:
        assert res.top == truth[:5]
    assert (res.certified is None) == (
        name in ("sliding_window", "setwise", "pairwise", "tourrank")
    )


def test_method_names_and_pairs() -> None:
    names = [m.name for m in comparison_methods((10, 20))]
    assert names == [
        "blitzrank_k10",
        "blitzrank_k20",
        "sliding_window",
        "setwise",
        "pairwise",
        "tourrank",
        "blitzrank_reask_k10",
        "blitzrank_reask_k20",
        "blitzrank_prior_k10",
        "blitzrank_prior_k20",
    ]
    assert method("blitzrank_reask", 20).paired == "blitzrank_k20"
    assert method("blitzrank_prior", 10).paired == "blitzrank_k10"
    assert method("setwise").paired == "setwise"
    assert "blitzrank_reask_k10" not in [m.name for m in comparison_methods((10,), reask=False)]
    assert set(LLM_METHODS) <= set(RANKERS)


@pytest.mark.parametrize(
    ("name", "k", "match"), [("bm42", None, "unknown"), ("setwise", 4, "takes no k")]
)
def test_bad_methods(name: str, k: int | None, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        method(name, k)


def test_evaluate_pairs_options_with_the_engine() -> None:
    queries = make_simulated_queries(3, 30, seed=4)
    methods = [method("blitzrank", 6), method("sliding_window"), method("blitzrank_prior", 6)]

    def oracles(q, meth, qi):  # type: ignore[no-untyped-def]
        return lambda k: PlackettLuceOracle(q.scores, k, temperature=0.0, seed=qi)

    res = evaluate("t", queries, methods, oracles, EvalSettings(SETTINGS, flip_probes=2, flip_k=6))
    engine, prior = res["blitzrank_k6"], res["blitzrank_prior_k6"]
    assert engine["certified_rate"] == 1.0
    assert "certified_rate" not in res["sliding_window"]
    # A noiseless oracle ignores the presentation order: the option gains exactly nothing.
    assert prior["ndcg10_gain"] == 0.0
    assert prior["ndcg10_gain_se"] == 0.0
    assert engine["ndcg10_diff_sw"] == pytest.approx(
        engine["ndcg10"] - res["sliding_window"]["ndcg10"]
    )
    assert res["oracle"]["position_flip"] == 0.0
    assert 0.0 <= res[FIRST_STAGE]["ndcg10"] <= 1.0


def test_standard_error_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    v = np.random.default_rng(0).normal(size=17)
    assert standard_error(v) == pytest.approx(stats.sem(v))
    assert standard_error([1.0]) == 0.0
