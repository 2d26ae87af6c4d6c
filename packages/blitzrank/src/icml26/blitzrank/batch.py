"""Rerank many queries at once, rank_llm style: doc ids with scores in, TREC run out.

::

    results = rerank(queries, lambda q, k: ScoreOracle(my_scores(q), k=k), BlitzRank(m=10))
    write_trec_run(results, "blitzrank.run")   # from icml26.blitzrank.data

Each query's candidates are ranked by ``ranker`` with a fresh oracle from
``oracle_for(query, k)``; the result lists every candidate's doc id, best first, with a
score that decreases with the rank (``n - rank + 1``, as rank_llm writes reranked runs), and
the calls, tokens and certificate of that query.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.ranker import Ranker

__all__ = ["RerankedQuery", "as_trec", "rerank"]

#: ``oracle_for(query, k) -> oracle`` over the query's candidates (``k`` items per call).
OracleFor = Callable[[RerankQuery, int], BaseOracle]


@dataclass(frozen=True)
class RerankedQuery:
    """One reranked query.

    Attributes:
        qid: the query's id.
        hits: ``(doc_id, score)`` for every candidate, best first.
        calls: oracle calls spent.
        tokens: tokens the oracle counted (input and output).
        certified: whether the top-m was certified (None for a ranker that does not certify).
    """

    qid: str
    hits: tuple[tuple[str, float], ...]
    calls: int
    tokens: int
    certified: bool | None

    @property
    def doc_ids(self) -> list[str]:
        """The doc ids, best first."""
        return [d for d, _ in self.hits]


def rerank(
    queries: Sequence[RerankQuery], oracle_for: OracleFor, ranker: Ranker, *, workers: int = 1
) -> list[RerankedQuery]:
    """Rerank every query with ``ranker``, each with a fresh oracle.

    Args:
        queries: the queries, candidates in first-stage order (the ranker's prior).
        oracle_for: builds a query's oracle for ``k`` items per call (the ranker's ``k``).
        ranker: BlitzRank or any baseline.
        workers: queries ranked concurrently in threads (for an endpoint oracle that waits on
            the network; 1: one after another). Results keep the queries' order.

    Returns:
        One :class:`RerankedQuery` per query, in order.

    Raises:
        ValueError: an oracle over another number of items than the query's candidates, a
            ranker that does not say its ``k``, or ``workers < 1``.
    """
    k = ranker.k
    if k is None:
        raise ValueError(f"{type(ranker).__name__}: its k (items per call) must be set")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")

    def one(q: RerankQuery) -> RerankedQuery:
        oracle = oracle_for(q, k)
        if oracle.n != q.n:
            raise ValueError(
                f"query {q.qid!r}: the oracle ranks {oracle.n} items, the query has {q.n}"
            )
        res = ranker.rank(oracle)
        n = len(res.ranking)
        hits = tuple((q.doc_ids[i], float(n - r)) for r, i in enumerate(res.ranking))
        return RerankedQuery(q.qid, hits, res.calls, oracle.usage.tokens, res.certified)

    if workers == 1:
        return [one(q) for q in queries]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, queries))


def as_trec(results: Sequence[RerankedQuery]) -> dict[str, list[tuple[str, float]]]:
    """qid -> ``(doc_id, score)`` pairs, the input of
    :func:`~icml26.blitzrank.data.io.write_trec_run`.

    Args:
        results: what :func:`rerank` returned.

    Returns:
        The run, by query.
    """
    return {r.qid: list(r.hits) for r in results}
