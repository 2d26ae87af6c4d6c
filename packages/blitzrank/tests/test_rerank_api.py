"""A user's path: oracles that answer wrongly are refused, many queries rerank to doc ids
with scores, and TREC runs go out and come back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from icml26.blitzrank import BlitzRank, OracleAnswerError, ScoreOracle, rerank
from icml26.blitzrank.baselines import Pairwise, Setwise, SlidingWindow, TourRank
from icml26.blitzrank.batch import as_trec
from icml26.blitzrank.data import RerankQuery, read_trec_run, write_trec_run
from icml26.blitzrank.oracles.base import Comparison, Usage
from icml26.blitzrank.ranker import CallBudgetError


class _OtherIds:
    """Answers with valid ids, but not the ones asked (a public-protocol oracle)."""

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k, self.usage = n, k, Usage()

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        shifted = tuple((i + 1) % self.n for i in items)
        return Comparison(order=shifted)

    async def acompare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return self.compare(items, top)


class _DropsOne(_OtherIds):
    """Answers in the true order but drops the last item of every answer."""

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return Comparison(order=tuple(sorted(items))[:-1])


class _Empty(_OtherIds):
    """Answers with nothing at all."""

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return Comparison(order=())


class _RanksNothing(_OtherIds):
    """Names no id (every item in rest): a valid answer that tells nothing."""

    def compare(self, items: Sequence[int], top: int | None = None) -> Comparison:
        return Comparison(order=(), rest=tuple(items))


_RANKERS = [
    BlitzRank(m=3, k=4),
    SlidingWindow(m=3, window=4, stride=2),
    Setwise(m=3, window=4),
    Pairwise(m=3),
    Pairwise(m=3, both_orders=False),
    TourRank(m=3, window=4),
]


@pytest.mark.parametrize("oracle_cls", [_OtherIds, _DropsOne, _Empty])
@pytest.mark.parametrize("ranker", _RANKERS, ids=lambda r: type(r).__name__)
def test_an_answer_without_exactly_the_asked_items_is_an_error(oracle_cls, ranker) -> None:
    # every ranker, the baselines too, checks each answer with the same error
    with pytest.raises(OracleAnswerError, match=f"{oracle_cls.__name__} answered"):
        ranker.rank(oracle_cls(20, 4))


def test_blitzrank_refuses_to_loop_on_answers_that_rank_nothing() -> None:
    with pytest.raises(OracleAnswerError, match="resolved no open pair"):
        BlitzRank(m=3, k=4).rank(_RanksNothing(20, 4))


def test_baselines_fall_back_to_presented_order_on_unranked_answers() -> None:
    # a baseline needs a winner: the unranked ids follow in presented order (stated repair)
    res = Setwise(m=2, window=4).rank(_RanksNothing(8, 4))
    assert len(res.ranking) == 8
    assert sorted(res.ranking) == list(range(8))


def test_budget_error_is_a_clear_error_not_a_silent_result() -> None:
    scores = np.arange(30.0)
    with pytest.raises(CallBudgetError, match="without certifying"):
        BlitzRank(m=5, k=4, max_calls=2).rank(ScoreOracle(scores, k=4))


def test_public_defaults_are_the_authors_budgets() -> None:
    assert Pairwise().both_orders is True  # the authors' heap PRP asks both orders
    assert TourRank().tournaments == 1  # the BlitzRank paper's TourRank row (about 1x SW)


def _queries(rng: np.random.Generator, n: int = 30) -> tuple[list[RerankQuery], dict]:
    queries, scores = [], {}
    for i in range(3):
        rel = rng.integers(0, 3, size=n)
        q = RerankQuery(
            qid=f"q{i}",
            query="...",
            passages=("...",) * n,
            doc_ids=tuple(f"d{i}_{j}" for j in range(n)),
            relevance=rel,
        )
        queries.append(q)
        scores[q.qid] = rel + rng.normal(scale=0.3, size=n)
    return queries, scores


@pytest.mark.parametrize("ranker", [BlitzRank(m=5, k=5), SlidingWindow(m=5, window=10, stride=5)])
def test_rerank_returns_doc_ids_with_decreasing_scores(ranker, tmp_path: Path) -> None:
    queries, scores = _queries(np.random.default_rng(0))
    results = rerank(queries, lambda q, k: ScoreOracle(scores[q.qid], k=k), ranker)
    assert [r.qid for r in results] == ["q0", "q1", "q2"]
    for q, r in zip(queries, results, strict=True):
        assert sorted(r.doc_ids) == sorted(q.doc_ids)
        s = [score for _, score in r.hits]
        assert s == sorted(s, reverse=True)
        best = q.doc_ids[int(np.argmax(scores[q.qid]))]
        assert r.doc_ids[0] == best  # low noise: the top document comes first
        assert r.calls > 0
        assert r.tokens > 0
    path = write_trec_run(results, tmp_path / "run.trec", tag="mine")
    assert (
        path.read_text()
        == write_trec_run(as_trec(results), tmp_path / "b.trec", tag="mine").read_text()
    )
    threaded = rerank(queries, lambda q, k: ScoreOracle(scores[q.qid], k=k), ranker, workers=3)
    assert [r.hits for r in threaded] == [r.hits for r in results]  # same order, same answers
    back = read_trec_run(path)
    for r in results:
        assert [h.doc_id for h in back[r.qid]] == r.doc_ids
        assert [h.rank for h in back[r.qid]] == list(range(1, len(r.hits) + 1))


def test_trec_writer_and_reader_refuse_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="repeated"):
        write_trec_run({"q1": [("d1", 2.0), ("d1", 1.0)]}, tmp_path / "x")
    with pytest.raises(ValueError, match="one word"):
        write_trec_run({"q 1": [("d1", 1.0)]}, tmp_path / "x")
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 one 1.0 tag\n")
    with pytest.raises(ValueError, match=r"bad\.run:1"):
        read_trec_run(bad)
    with pytest.raises(FileNotFoundError):
        read_trec_run(tmp_path / "nope.run")


def test_rerank_refuses_an_oracle_of_another_size() -> None:
    queries, _ = _queries(np.random.default_rng(1))
    with pytest.raises(ValueError, match="the oracle ranks 10 items"):
        rerank(queries, lambda q, k: ScoreOracle(np.arange(10.0), k=k), BlitzRank(m=3, k=4))
