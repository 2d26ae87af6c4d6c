"""Pool the replicates (seeds) of a run into the claims' metrics: means, standard errors and
paired gaps.

For every per-seed metric ``key``: ``key`` is its mean over seeds and ``key_se``-style
companions are written as ``se.<key>`` (the standard error of that mean). For the defender
comparisons the claims read **paired** gaps (each seed's defenders share the warm start,
the prompt draws and the evaluation sets): ``gap.<metric>.<eval>.<a>.<b>`` is the mean over
seeds of ``<metric>.<eval>.<a> - <metric>.<eval>.<b>`` and ``se.gap.<metric>.<eval>.<a>.<b>``
its standard error, for every ordered pair of defenders (``a == b`` included: a gap of 0 with
a standard error of 0, which is what a claim reads under its placebo). The same for the two
attackers' ``novel_strategy_rate`` and (free-text attacker) ``novelty``.

A per-seed value of ``None`` or NaN (an attacker with no successful attack has no novelty
rate) makes every pooled figure that reads it NaN, so a claim on it is undecided, never
decided on a substitute; ``defined_seeds.novel_strategy_rate.<attacker>`` counts the seeds
where the rate is defined.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np

from icml26.shared.stats import mean_se

__all__ = ["GAP_EVALS", "pool_seeds", "stage_seconds", "t_quantile_975"]

#: ``(metric, eval set)`` pairs whose defender gaps are written.
GAP_EVALS = (
    ("asr", "seed_ops"),
    ("asr", "heldout_combos"),
    ("asr", "unseen_ops"),
    ("asr", "adaptive"),
    ("benign_compliance", "all"),
)
_ATTACKERS = ("attacker", "attacker_sft")
#: The attackers' novelty figures: the novel share of successes, and (free-text attacker) the
#: mean distance of its successes to the seed-pool rewrites.
_NOVELTY = ("novel_strategy_rate", "novelty")


#: Student's t 0.975 quantile by degrees of freedom 1..30 (standard tables; the tests check
#: them against SciPy). The claims' margins are ``t975`` standard errors of a paired gap.
_T975 = (
    12.7062,
    4.3027,
    3.1824,
    2.7764,
    2.5706,
    2.4469,
    2.3646,
    2.3060,
    2.2622,
    2.2281,
    2.2010,
    2.1788,
    2.1604,
    2.1448,
    2.1314,
    2.1199,
    2.1098,
    2.1009,
    2.0930,
    2.0860,
    2.0796,
    2.0739,
    2.0687,
    2.0639,
    2.0595,
    2.0555,
    2.0518,
    2.0484,
    2.0452,
    2.0423,
)


def t_quantile_975(df: int) -> float:
    """Student's t 0.975 quantile with ``df`` degrees of freedom (the two-sided 95% margin
    of a mean over ``df + 1`` paired replicates, in standard errors).

    Args:
        df: degrees of freedom, at least 1.

    Returns:
        The quantile: tabulated to ``df = 30``, beyond it the Cornish-Fisher expansion
        around the normal quantile (within 1e-4 there).

    Raises:
        ValueError: ``df`` below 1.
    """
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"df must be an integer >= 1, got {df!r}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def _num(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _stats(values: Sequence[float | None]) -> tuple[float, float]:
    arr = np.asarray([_num(v) for v in values], dtype=float)
    if not np.all(np.isfinite(arr)):
        return float("nan"), float("nan")
    ms = mean_se(arr)
    return float(ms.mean), float(ms.se)


def pool_seeds(
    per_seed: Sequence[dict[str, float | None]], defenders: Sequence[str]
) -> dict[str, Any]:
    """Means, standard errors and paired gaps over replicates.

    Args:
        per_seed: each replicate's flat metrics (the same keys in each; ``None`` for a
            figure that is undefined on that seed).
        defenders: the defenders whose pairwise gaps are written.

    Returns:
        The pooled metrics, with ``seeds`` (how many were pooled) and ``t975`` (Student's t
        0.975 quantile at ``seeds - 1`` degrees of freedom: the claims' margin in standard
        errors).

    Raises:
        ValueError: fewer than two replicates, or replicates with different keys.
    """
    if len(per_seed) < 2:
        raise ValueError(f"need at least 2 replicates for a standard error, got {len(per_seed)}")
    keys = set(per_seed[0])
    for i, m in enumerate(per_seed[1:], 1):
        if set(m) != keys:
            raise ValueError(f"replicate {i} has keys {sorted(set(m) ^ keys)} the first has not")
    out: dict[str, Any] = {
        "seeds": float(len(per_seed)),
        "t975": t_quantile_975(len(per_seed) - 1),
    }
    for key in sorted(keys):
        out[key], out[f"se.{key}"] = _stats([m[key] for m in per_seed])
    pairs = [
        (f"{metric}.{e}.{a}", f"{metric}.{e}.{b}", f"gap.{metric}.{e}.{a}.{b}")
        for metric, e in GAP_EVALS
        for a, b in product(defenders, repeat=2)
    ]
    pairs += [
        (f"{metric}.{a}", f"{metric}.{b}", f"gap.{metric}.{a}.{b}")
        for metric in _NOVELTY
        for a, b in product(_ATTACKERS, repeat=2)
    ]
    for ka, kb, name in pairs:
        if ka in keys and kb in keys:
            out[name], out[f"se.{name}"] = _stats([_num(m[ka]) - _num(m[kb]) for m in per_seed])
    for a, metric in product(_ATTACKERS, _NOVELTY):
        key = f"{metric}.{a}"
        if key in keys:
            out[f"defined_seeds.{key}"] = float(sum(np.isfinite(_num(m[key])) for m in per_seed))
    return out


def stage_seconds(
    records: Sequence[dict[str, Any]],
    results: dict[str, Sequence[dict[str, Any]]],
    defenders: Sequence[str],
) -> dict[str, float]:
    """The run's measured costs: ``completed_seeds.<defender>`` (its finished stages, a
    skipped defender's included), ``method_seconds.<defender>`` (mean wall seconds of one
    seed's stage), ``train_step_seconds.<defender>`` (mean wall seconds per GRPO step of the
    defenders pooled here), ``warm_start_seconds`` and ``judge_seconds``.

    Args:
        records: the run's ``metrics.jsonl`` records (stage timings among them).
        results: each pooled defender's stages (``seconds`` of :func:`run_method`).
        defenders: every defender the run asked for.
    """
    walls: dict[str, list[float]] = {}
    for rec in records:
        name, wall = rec.get("stage"), rec.get("wall_s")
        if isinstance(name, str) and isinstance(wall, int | float):
            if name.startswith("warm"):
                key = "warm_start_seconds"
            elif "-seed" in name:
                key = f"method_seconds.{name.split('-seed')[0]}"
            else:
                key = f"{name}_seconds"
            walls.setdefault(key, []).append(float(wall))
    out = {k: float(np.mean(v)) for k, v in walls.items()}
    for d in defenders:
        out[f"completed_seeds.{d}"] = float(len(walls.get(f"method_seconds.{d}", [])))
    for d, runs in results.items():
        per_step = [
            r["seconds"]["train"] / r["seconds"]["train_steps"]
            for r in runs
            if r["seconds"]["train_steps"]
        ]
        if per_step:
            out[f"train_step_seconds.{d}"] = float(np.mean(per_step))
    return out
