"""How many calls certification takes: with a perfect oracle, and on a budget under cycles.

* :func:`calls_perfect`: mean calls to certify the ordered top-m with a perfect oracle, per k
  (the authors' code's figures are :data:`REFERENCE_CALLS`);
* :func:`cyclic_task`: an adversarially non-transitive oracle; each query's budget is
  ``ceil(cyclic_budget * c)`` calls, ``c`` the calls a perfect oracle needs on the same items
  at the same k (the price of the cycles). Reports the certified rate within the budget and
  whether every multi-item tier lies inside one true preference cycle.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.oracles.simulated import CyclicOracle, PerfectOracle
from icml26.blitzrank.ranker import BlitzRank
from icml26.blitzrank.schedule import Schedule
from icml26.shared import log, rng_for

__all__ = ["REFERENCE_CALLS", "calls_perfect", "cyclic_task", "perfect_calls"]

#: Mean calls of the authors' code with a perfect oracle (n = 100, m = 10), from the notes.
REFERENCE_CALLS = {2: 150.0, 3: 68.0, 5: 33.0, 10: 14.2, 20: 6.4}


def calls_perfect(
    n: int,
    m: int,
    ks: tuple[int, ...],
    seeds: int,
    schedule: Schedule = "reach",
    base_seed: int = 0,
) -> dict[str, float]:
    """Mean calls to certify the ordered top-m with a perfect oracle, per k.

    Args:
        n: items.
        m: the top items to certify, in order.
        ks: items per query.
        seeds: random score vectors per k (stream ``rng_for(base_seed, "perfect_scores", s)``).
        schedule: BlitzRank's schedule.
        base_seed: the run's seed.

    Returns:
        ``k<k>`` -> mean calls.

    Raises:
        AssertionError: a certified top-m that is not the truth (an engine bug).
    """
    out = {}
    for k in ks:
        calls = []
        for s in range(seeds):
            scores = rng_for(base_seed, "perfect_scores", s).normal(size=n)
            res = BlitzRank(m, k=k, schedule=schedule).rank(PerfectOracle(scores, k))
            truth = list(np.lexsort((np.arange(n), -scores))[:m])
            if not res.certified or res.top != truth:
                raise AssertionError(f"perfect oracle, k={k}: certified {res.top} != truth {truth}")
            calls.append(res.calls)
        out[f"k{k}"] = float(np.mean(calls))
    return out


def perfect_calls(cfg: RunConfig) -> dict[str, dict[str, float]]:
    """:func:`calls_perfect` for the default (``reach``) and the ``entropy`` schedules.

    Args:
        cfg: the run's config (``perfect_n``, ``m``, ``perfect_ks``, ``perfect_seeds``).

    Returns:
        ``{"reach": {k<k>: calls}, "entropy": {k<k>: calls}}``.
    """
    t0 = time.perf_counter()
    args = (cfg.perfect_n, cfg.m, cfg.perfect_ks, cfg.perfect_seeds)
    reach = calls_perfect(*args, "reach", cfg.seed)
    entropy = calls_perfect(*args, "entropy", cfg.seed)
    log(f"calls_perfect: {reach} (entropy {entropy}) in {time.perf_counter() - t0:.1f}s")
    return {"reach": reach, "entropy": entropy}


def _cyclic_query(
    scores: np.ndarray, m: int, k: int, budget_share: float
) -> tuple[dict[str, float], list[float]]:
    """One query under the cyclic oracle: its figures, and the purity of each multi-item tier."""
    transitive = BlitzRank(m, k=k).rank(PerfectOracle(scores, k)).calls
    limit = max(1, math.ceil(budget_share * transitive))
    oracle = CyclicOracle(scores, k)
    res = BlitzRank(m, k=k, max_calls=limit, on_budget="return").rank(oracle)
    assert res.graph is not None
    multi = [t for t in res.graph.tiers() if len(t) > 1]
    figures = {
        "certified": float(bool(res.certified)),
        "calls": float(res.calls),
        "over": res.calls / transitive,
        "budget": float(limit),
        "cycles": float(len(multi)),
    }
    return figures, [float(len({int(oracle.group[i]) for i in t}) == 1) for t in multi]


def cyclic_task(cfg: RunConfig) -> dict[str, Any]:
    """Certification within a budget, and tier purity, under the adversarial cyclic oracle.

    Args:
        cfg: the run's config (``cyclic_ks``, ``cyclic_queries``, ``cyclic_budget``,
            ``sim_n``, ``m``; queries drawn from stream ``rng_for(seed, "cyclic")``).

    Returns:
        Per method ``blitzrank_k<k>``: ``certified_rate`` (share certified within the
        budget), ``calls`` (mean calls used), ``calls_over_perfect`` (mean ratio to the
        perfect oracle's calls on the same items), ``budget`` (mean budget); and over all
        queries ``tier_purity`` (share of multi-item tiers inside one cyclic group, 1 by
        construction of the engine, ``None`` when no tier has two items) and
        ``cycles_found`` (mean multi-item tiers per query).
    """
    out: dict[str, Any] = {
        "certified_rate": {},
        "calls": {},
        "calls_over_perfect": {},
        "budget": {},
    }
    purity: list[float] = []
    found: list[float] = []
    rng = rng_for(cfg.seed, "cyclic")
    for k in cfg.cyclic_ks:
        rows = []
        for _ in range(cfg.cyclic_queries):
            row, pure = _cyclic_query(rng.normal(size=cfg.sim_n), cfg.m, k, cfg.cyclic_budget)
            rows.append(row)
            purity.extend(pure)
            found.append(row["cycles"])
        name = f"blitzrank_k{k}"
        for key, col in (
            ("certified_rate", "certified"),
            ("calls", "calls"),
            ("calls_over_perfect", "over"),
            ("budget", "budget"),
        ):
            out[key][name] = float(np.mean([r[col] for r in rows]))
    out["tier_purity"] = float(np.mean(purity)) if purity else None
    out["cycles_found"] = float(np.mean(found))
    return out
