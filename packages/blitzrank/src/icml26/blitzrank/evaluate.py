"""Run methods on reranking queries and summarise them: nDCG@10, calls, tokens, rounds.

``evaluate(task, queries, methods, oracles, settings)`` runs every :class:`Method` on every
query, each with a fresh oracle from ``oracles(query, method, query_index)(window)``, and
returns per method the mean per-query nDCG@10 (with its standard error), calls, rounds,
tokens (all, input) and repaired calls; for the engine and its options the certified rate;
for the re-ask option its verification calls; paired differences on the same queries: every
method against the sliding window (``ndcg10_diff_sw``) and every option against the engine
run it shares its answers with (``ndcg10_gain``); the first stage's nDCG@10 under
``first_stage``; and, with ``flip_probes``, the oracle's position flip rate under
:data:`ORACLE`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.blitzrank.data.types import RerankQuery
from icml26.blitzrank.methods import Method, RankerSettings, method
from icml26.blitzrank.metrics import ndcg_at_k
from icml26.blitzrank.oracles.base import BaseOracle
from icml26.blitzrank.probes import position_flip
from icml26.shared import log, rng_for, seed_for

__all__ = [
    "DIFF_STATS",
    "FIRST_STAGE",
    "ORACLE",
    "EvalSettings",
    "OracleFactory",
    "OracleSource",
    "TaskResult",
    "evaluate",
    "rank_query",
    "standard_error",
]

#: The entry of a task's result that describes the oracle itself, not a method.
ORACLE = "oracle"
#: The entry holding the first stage's own nDCG@10.
FIRST_STAGE = "first_stage"

#: ``make(window) -> oracle``: a fresh oracle over one query's candidates.
OracleFactory = Callable[[int], BaseOracle]
#: ``oracles(query, method, query_index) -> OracleFactory``.
OracleSource = Callable[[RerankQuery, Method, int], OracleFactory]
#: Method (or :data:`ORACLE`, :data:`FIRST_STAGE`) -> statistic -> value.
TaskResult = dict[str, dict[str, float]]


@dataclass(frozen=True)
class EvalSettings:
    """How one task is evaluated.

    Attributes:
        rankers: the rankers' settings.
        seed: the run's seed; query ``i``'s TourRank shuffles use stream
            ``seed_for(seed, "tourrank", i)`` and the flip probes draw their windows from
            ``rng_for(seed, "flip_probes")``.
        flip_probes: windows per query for the position flip rate (0 skips).
        flip_k: items per flip-probe window.
    """

    rankers: RankerSettings = field(default_factory=RankerSettings)
    seed: int = 0
    flip_probes: int = 0
    flip_k: int = 10


def standard_error(values: Sequence[float] | np.ndarray) -> float:
    """The standard error of the mean of ``values`` (0 for fewer than two).

    Args:
        values: the per-query values.

    Returns:
        ``std(values, ddof=1) / sqrt(len)``.
    """
    v = np.asarray(values, dtype=float)
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0


def rank_query(
    meth: Method, make: OracleFactory, settings: RankerSettings, seed: int = 0
) -> dict[str, Any]:
    """Run one method on one query with a fresh oracle ``make(window)``.

    Args:
        meth: the method.
        make: builds the query's oracle for a window of items.
        settings: the rankers' settings.
        seed: the query's seed.

    Returns:
        ``ranking``, ``calls``, ``rounds``, ``usage`` (the oracle's, as a dict), ``certified``
        and ``verify_calls`` (``None`` where the method has none).

    Raises:
        ValueError: a ranker that does not say how many items it shows per call.
    """
    ranker = meth.build(settings, seed)
    if ranker.k is None:
        raise ValueError(f"method {meth.name!r}: its ranker must set k (items per call)")
    oracle = make(ranker.k)
    res = ranker.rank(oracle)
    return {
        "ranking": res.ranking,
        "calls": res.calls,
        "rounds": res.rounds,
        "usage": oracle.usage.as_dict(),
        "certified": res.certified,
        "verify_calls": res.verify_calls,
    }


def _record(rec: dict[str, list[float]], out: dict[str, Any], relevance: Any) -> None:
    """Append one query's figures to a method's record."""
    rec.setdefault("ndcg10", []).append(ndcg_at_k(out["ranking"], relevance, 10))
    rec.setdefault("calls", []).append(out["calls"])
    rec.setdefault("rounds", []).append(out["rounds"])
    rec.setdefault("tokens", []).append(out["usage"]["tokens"])
    rec.setdefault("tokens_in", []).append(out["usage"]["input_tokens"])
    rec.setdefault("repaired_calls", []).append(out["usage"]["repaired_calls"])
    if out["certified"] is not None:
        rec.setdefault("certified_rate", []).append(float(out["certified"]))
    if out["verify_calls"] is not None:
        rec.setdefault("verify_calls", []).append(out["verify_calls"])


#: Paired-difference statistics against each baseline: ``ndcg10_diff_<short>`` (and ``_se``).
DIFF_STATS = {
    "sliding_window": "sw",
    "setwise": "setwise",
    "pairwise": "pairwise",
    "tourrank": "tourrank",
}


def _summary(acc: dict[str, dict[str, list[float]]], methods: Sequence[Method]) -> TaskResult:
    """Means, the standard error of nDCG@10, and the paired differences: every method
    against every baseline on the same queries (``ndcg10_diff_<baseline>``, itself included:
    0 with SE 0, so a placebo that puts a baseline in the method's place reads its own row),
    and every option against the engine run it shares its answers with."""
    result = {name: {key: float(np.mean(v)) for key, v in rec.items()} for name, rec in acc.items()}
    for meth in methods:
        rec, out = acc[meth.name], result[meth.name]
        out["ndcg10_se"] = standard_error(rec["ndcg10"])
        for base, short in DIFF_STATS.items():
            if base in acc:  # paired, same queries
                diff = np.asarray(rec["ndcg10"]) - np.asarray(acc[base]["ndcg10"])
                out[f"ndcg10_diff_{short}"] = float(diff.mean())
                out[f"ndcg10_diff_{short}_se"] = standard_error(diff)
        if meth.paired != meth.name and meth.paired in acc:  # an option against its engine run
            diff = np.asarray(rec["ndcg10"]) - np.asarray(acc[meth.paired]["ndcg10"])
            out["ndcg10_gain"] = float(diff.mean())
            out["ndcg10_gain_se"] = standard_error(diff)
    return result


def evaluate(
    task: str,
    queries: Sequence[RerankQuery],
    methods: Sequence[Method],
    oracles: OracleSource,
    settings: EvalSettings,
) -> TaskResult:
    """Every method on every query; the summary described in the module docstring.

    Args:
        task: the task's name (for the log).
        queries: the queries (candidates in first-stage order, graded relevance).
        methods: the methods.
        oracles: ``oracles(query, method, query_index)`` -> a factory of fresh oracles; the
            flip probes take the sliding window's.
        settings: the evaluation's settings.

    Returns:
        Method -> statistic -> value, plus :data:`FIRST_STAGE` and (with flip probes)
        :data:`ORACLE`.
    """
    acc: dict[str, dict[str, list[float]]] = {meth.name: {} for meth in methods}
    for qi, q in enumerate(queries):
        for meth in methods:
            out = rank_query(
                meth,
                oracles(q, meth, qi),
                settings.rankers,
                seed_for(settings.seed, "tourrank", qi),
            )
            _record(acc[meth.name], out, q.relevance)
    result = _summary(acc, methods)
    first = [ndcg_at_k(range(q.n), q.relevance, 10) for q in queries]
    result[FIRST_STAGE] = {"ndcg10": float(np.mean(first))}
    log(f"{task}: " + ", ".join(f"{k}={v['ndcg10']:.3f}" for k, v in result.items()))
    if settings.flip_probes:  # a fresh oracle (the sliding window's seed), not in any method
        rng = rng_for(settings.seed, "flip_probes")
        sw = method("sliding_window")
        flips = [
            position_flip(
                oracles(q, sw, qi)(settings.flip_k), settings.flip_k, settings.flip_probes, rng
            )
            for qi, q in enumerate(queries)
        ]
        result[ORACLE] = {"position_flip": float(np.mean(flips))}
    return result
