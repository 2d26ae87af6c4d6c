"""Seed aggregation: the mean of every metric over training seeds, and its standard error.

Each seed trains its own models and draws its own sampling noise, so the spread over seeds is
the noise a single-seed comparison would hide. For ``n`` seeds with values ``x_i``::

    mean = sum_i x_i / n,        SE = std(x, ddof = 1) / sqrt(n)      (NaN for n = 1),

and a claim that a change is positive is checked on ``mean - 2 SE`` (``_lcb``), one that it is
negative on ``mean + 2 SE`` (``_ucb``): about a 95 % normal interval, wider in truth for the
few seeds a CPU run affords (the t quantile for 3 seeds is 4.3, not 2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = ["mean_and_se", "merge_seeds", "with_spread"]


def mean_and_se(values: Sequence[float]) -> tuple[float, float]:
    """``(mean, standard error)`` of ``values``; SE is NaN for fewer than two values, and both
    are NaN when any value is not finite (a diverged seed is not averaged away)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or len(x) == 0:
        raise ValueError(f"need a non-empty 1-d sequence of values, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        return math.nan, math.nan
    se = float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan
    return float(x.mean()), se


def merge_seeds(per_seed: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The seed mean of every key present in every seed's metrics (keys of the first seed
    missing in another raise: the seeds must have run the same measurements)."""
    if not per_seed:
        raise ValueError("no seeds to merge")
    keys = list(per_seed[0])
    for i, m in enumerate(per_seed[1:], start=1):
        missing = [k for k in keys if k not in m]
        if missing:
            raise ValueError(f"seed {i} lacks metrics {missing[:3]} of seed 0")
    return {k: mean_and_se([float(m[k]) for m in per_seed])[0] for k in keys}


def with_spread(
    per_seed: Sequence[Mapping[str, float]],
    prefixes: Iterable[str],
    *,
    bounds: Iterable[str] = (),
) -> dict[str, float]:
    """``<prefix>_se.<rest>`` for every key ``<prefix>.<rest>`` of the first seed, and for the
    prefixes in ``bounds`` also ``<prefix>_lcb.<rest>`` / ``<prefix>_ucb.<rest>`` (mean -/+ 2 SE)."""
    prefixes, bounds = tuple(prefixes), set(bounds)
    out: dict[str, float] = {}
    for key in per_seed[0]:
        head, sep, rest = key.partition(".")
        if not sep or head not in prefixes:
            continue
        mean, se = mean_and_se([float(m[key]) for m in per_seed])
        out[f"{head}_se.{rest}"] = se
        if head in bounds:
            out[f"{head}_lcb.{rest}"] = mean - 2 * se
            out[f"{head}_ucb.{rest}"] = mean + 2 * se
    return out
