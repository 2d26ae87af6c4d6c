"""The benchmark (``icml26 bench weak-strong``): per-decision cost of the online policy."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml26.shared import RunDir
from icml26.weak_strong.baselines import FixedThresholds
from icml26.weak_strong.config import BenchConfig
from icml26.weak_strong.policies import OnlineWeakStrong, decide_and_verify, run_policy
from icml26.weak_strong.streams import make_stream

__all__ = ["bench"]


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, float]:
    """Per-decision cost of the online policy on a long calibrated stream (microseconds)."""
    stream = make_stream("calibrated", config.n_items, config.seed)
    scores, labels = stream.scores.tolist(), stream.labels.tolist()

    def decisions_only(policy: Any) -> float:
        t0 = time.perf_counter()
        for s, h in zip(scores, labels, strict=True):
            decide_and_verify(policy, s, h)
        return time.perf_counter() - t0

    best: dict[str, float] = {}
    for _ in range(config.rounds):
        timings = {
            "online": decisions_only(
                OnlineWeakStrong(config.alpha, config.alpha, seed=config.seed)
            ),
            "fixed": decisions_only(FixedThresholds(0.7, 0.3)),
        }
        t0 = time.perf_counter()
        run_policy(
            OnlineWeakStrong(config.alpha, config.alpha, seed=config.seed),
            stream.scores,
            stream.labels,
        )
        timings["online_traced"] = time.perf_counter() - t0
        for k, v in timings.items():
            best[k] = min(best.get(k, np.inf), v)
    n = config.n_items
    out = {f"overhead_us.{k}": 1e6 * v / n for k, v in best.items()}
    out["overhead_us.online_minus_fixed"] = out["overhead_us.online"] - out["overhead_us.fixed"]
    out["n_items"] = float(n)
    run_dir.log_metrics(None, **out)
    return out
