"""The bench (``icml26 bench blitzrank``): the engine's time per oracle call against n.

With a perfect oracle (calls are then the fewest the schedule needs), for each n of ``ns``
the engine certifies the ordered top-m ``repeats`` times; the engine's time (graph update,
closure, certification, schedule) per call is compared with one LLM call of
``llm_call_ms``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.blitzrank.config import BenchConfig
from icml26.blitzrank.figures import engine_overhead_plot
from icml26.blitzrank.oracles.simulated import PerfectOracle
from icml26.blitzrank.ranker import BlitzRank
from icml26.shared import RunDir, Stages, log, rng_for

__all__ = ["bench", "engine_overhead"]


def engine_overhead(config: BenchConfig) -> dict[str, dict[str, float]]:
    """Median engine milliseconds per call, and mean calls, for each n.

    Args:
        config: the bench's config (scores for repeat ``r`` from stream ``rng_for(seed, "bench_scores", r)``).

    Returns:
        ``{"engine_ms_per_call": {n<n>: ms}, "calls": {n<n>: calls},
        "engine_share_of_llm_call": {n<n>: ms / llm_call_ms}}``.
    """
    ms, calls, share = {}, {}, {}
    for n in config.ns:
        per_call, used = [], []
        for r in range(config.repeats):
            scores = rng_for(config.seed, "bench_scores", r).normal(size=n)
            res = BlitzRank(config.m, k=config.k).rank(PerfectOracle(scores, config.k))
            per_call.append(1000.0 * res.engine_seconds / res.calls)
            used.append(res.calls)
        ms[f"n{n}"] = float(np.median(per_call))
        calls[f"n{n}"] = float(np.mean(used))
        share[f"n{n}"] = ms[f"n{n}"] / config.llm_call_ms
        log(f"bench n={n}: {ms[f'n{n}']:.2f} ms engine per call, {calls[f'n{n}']:.1f} calls")
    return {"engine_ms_per_call": ms, "calls": calls, "engine_share_of_llm_call": share}


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """The bench job: one stage, one figure.

    Args:
        config: the bench's config.
        run_dir: the run folder.

    Returns:
        :func:`engine_overhead`'s metrics.
    """
    metrics = Stages(run_dir).once("engine_overhead", lambda: engine_overhead(config))
    engine_overhead_plot(
        run_dir,
        config.ns,
        metrics["engine_ms_per_call"],
        metrics["calls"],
        llm_call_ms=config.llm_call_ms,
        k=config.k,
        m=config.m,
    )
    return metrics
