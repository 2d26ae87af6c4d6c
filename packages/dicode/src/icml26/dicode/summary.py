"""The run's metric keys from the finished (method, seed) units: means over seeds with their
standard errors, the curriculum's figures, the dreamers' compile rates."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from icml26.dicode.config import BASELINES, RunConfig
from icml26.dicode.tech import ACHIEVEMENTS, DEEP_ACHIEVEMENTS, LATE_ACHIEVEMENTS
from icml26.shared.stats import mean_se, paired_difference

__all__ = ["archive_figures", "interval", "paired_return_gains", "summarise"]

_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(values: list[float]) -> tuple[float, float | None, float | None]:
    """Mean and a 95% Student-t interval over seeds.

    Args:
        values: one value per seed.

    Returns:
        ``(mean, lo, hi)``; ``lo`` and ``hi`` are ``None`` for a single seed.
    """
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if arr.size < 2:
        return mean, None, None
    half = _T95.get(arr.size - 1, 1.96) * float(arr.std(ddof=1)) / math.sqrt(arr.size)
    return mean, mean - half, mean + half


def _auc(unit: dict[str, Any]) -> float:
    """Normalised area under the target-return curve: ``∫ R(s) ds / S``."""
    steps = np.asarray(unit["curve_steps"], dtype=float)
    ret = np.asarray(unit["curve_return"], dtype=float)
    return float(np.trapezoid(ret, steps) / max(steps[-1], 1.0))


def _se(values: list[float]) -> float:
    return float(mean_se(values).se) if len(values) > 1 else float("nan")


def paired_return_gains(units: dict[str, list[dict[str, Any]]]) -> dict[str, float]:
    """Paired differences of the final return over seeds, every method against every baseline.

    ``return_gain.<method>.over.<baseline>`` is the mean over seeds of (method - baseline)
    on the same seed (the units share the seed and its evaluation maps), with ``.se`` its
    standard error; a method against itself gains 0 with SE 0, so a key-part placebo that
    swaps the method for a baseline reads an exact zero.

    Args:
        units: per method, one unit dict per seed.

    Returns:
        The gain keys for every pair with at least 2 common seeds.
    """
    per_seed = {
        method: {int(u["seed"]): float(np.mean(u["returns"])) for u in us}
        for method, us in units.items()
    }
    out: dict[str, float] = {}
    for method, mine in per_seed.items():
        for base in BASELINES:
            theirs = per_seed.get(base)
            if theirs is None:
                continue
            seeds = sorted(set(mine) & set(theirs))
            if len(seeds) < 2:
                continue
            gap = paired_difference([mine[s] for s in seeds], [theirs[s] for s in seeds])
            out[f"return_gain.{method}.over.{base}"] = float(gap.mean)
            out[f"return_gain.{method}.over.{base}.se"] = float(gap.se)
    return out


def _goal_concentration(unit: dict[str, Any]) -> float | None:
    """Share of the kept children whose goal is the unit's most common one (1: every child
    has one goal; the single-goal collapse)."""
    goals = [e["goal"] for e in unit["archive"] if e["parent"] is not None]
    return Counter(goals).most_common(1)[0][1] / len(goals) if goals else None


def archive_figures(us: list[dict[str, Any]]) -> dict[str, float]:
    """A curriculum method's archive over its seeds (means; ``.se`` over seeds).

    Args:
        us: the method's unit dicts (with ``archive``, ``dreamed``, ``valid``, ``rejections``).

    Returns:
        ``frontier_fraction``, ``archive_size``, ``archive_evaluated``, ``goal_concentration``
        (share of the kept children with the seed's most common goal), and the dreamer's
        ``program_valid_rate`` (programs that passed the sandbox: kept or rejected as a
        ``duplicate`` of their parent's world) and ``program_duplicate_rate``, over dreamed.
    """
    out: dict[str, float] = {}
    if us and all("dreamed" in u for u in us):
        dreamed = max(1, sum(u["dreamed"] for u in us))
        duplicates = sum(u.get("rejections", {}).get("duplicate", 0) for u in us)
        out["program_valid_rate"] = (sum(u["valid"] for u in us) + duplicates) / dreamed
        out["program_duplicate_rate"] = duplicates / dreamed
    if not us or not all("archive" in u for u in us):
        return out
    per_seed = {
        "frontier_fraction": [u["frontier_fraction"] for u in us],
        "archive_size": [u["archive_size"] for u in us],
        "archive_evaluated": [u.get("archive_evaluated", 0) for u in us],
        "goal_concentration": [_goal_concentration(u) for u in us],
    }
    for name, values in per_seed.items():
        if any(v is None for v in values):
            continue
        out[name] = float(np.mean(values))
        if len(values) > 1:
            out[f"{name}.se"] = _se([float(v) for v in values])
    return out


def _curriculum_gains(units: dict[str, list[dict[str, Any]]]) -> dict[str, float]:
    """DiCode minus the uniform ablation, paired by seed: ``frontier_gain_over_random`` and
    ``learning_progress_gain_over_random`` (each with ``.se``)."""
    mine = {int(u["seed"]): u for u in units.get("dicode", [])}
    theirs = {int(u["seed"]): u for u in units.get("dicode_random", [])}
    seeds = sorted(set(mine) & set(theirs))
    out: dict[str, float] = {}
    for key in ("frontier_fraction", "learning_progress"):
        pairs = [(mine[s].get(key), theirs[s].get(key)) for s in seeds]
        if len(pairs) < 2 or any(a is None or b is None for a, b in pairs):
            continue
        gap = paired_difference([a for a, _ in pairs], [b for _, b in pairs])
        name = "frontier" if key == "frontier_fraction" else key
        out[f"{name}_gain_over_random"] = float(gap.mean)
        out[f"{name}_gain_over_random.se"] = float(gap.se)
    return out


def summarise(units: dict[str, list[dict[str, Any]]], config: RunConfig) -> dict[str, Any]:
    """The issue's metric keys from the units (means over seeds, ``.se`` their standard error).

    Args:
        units: per method, one unit dict per seed (:func:`~icml26.dicode.training.train_unit`).
        config: the run's config (the step budget).

    Returns:
        The flat metric dict the claims read.
    """
    m: dict[str, Any] = {}
    for method, us in units.items():
        per_seed = [float(np.mean(u["returns"])) for u in us]
        mean, lo, hi = interval(per_seed)
        m[f"return.{method}"] = mean
        if lo is not None:
            m[f"return.{method}.lo"] = lo
            m[f"return.{method}.hi"] = hi
            m[f"return.{method}.se"] = _se(per_seed)
        m[f"auc.{method}"] = float(np.mean([_auc(u) for u in us]))
        for a in ACHIEVEMENTS:
            m[f"achievement_success.{a}.{method}"] = float(
                np.mean([u["achievement_success"][a] for u in us])
            )
        m[f"deep_success.{method}"] = max(
            m[f"achievement_success.{a}.{method}"] for a in DEEP_ACHIEVEMENTS
        )
        # the late tier (iron tools, diamond): per seed the best late achievement's success
        late = [max(u["achievement_success"][a] for a in LATE_ACHIEVEMENTS) for u in us]
        m[f"late_success.{method}"] = float(np.mean(late))
        if len(us) > 1:
            m[f"late_success.{method}.se"] = _se(late)
        for key in ("frontier_fraction", "learning_progress"):
            values = [u.get(key) for u in us]
            if us and all(v is not None for v in values):
                m[f"{key}.{method}"] = float(np.mean(values))
                if len(us) > 1:
                    m[f"{key}.{method}.se"] = _se(values)
    dicode = units.get("dicode", [])
    if dicode:
        m["archive_size"] = float(np.mean([u["archive_size"] for u in dicode]))
        m["archive_evaluated"] = float(np.mean([u.get("archive_evaluated", 0) for u in dicode]))
        m["frontier_fraction"] = m["frontier_fraction.dicode"]  # the key: evaluated only
    m.update(_curriculum_gains(units))
    m.update(paired_return_gains(units))
    dreamers: dict[str, list[dict[str, Any]]] = {}
    for method in ("dicode", "dicode_random"):
        us = units.get(method, [])
        for key in ("goal_concentration", "goal_concentration.se"):
            if key in (fig := archive_figures(us)):
                m[key.replace("goal_concentration", f"goal_concentration.{method}")] = fig[key]
        for u in us:
            dreamers.setdefault(u["dreamer"], []).append(u)
    for name, us in dreamers.items():
        fig = archive_figures(us)
        m[f"program_valid_rate.{name}"] = fig["program_valid_rate"]
        m[f"program_duplicate_rate.{name}"] = fig["program_duplicate_rate"]
    accel = units.get("accel", [])
    if accel and all("edits_proposed" in u for u in accel):  # failed edits counted once
        m["program_valid_rate.accel_edits"] = sum(u["edits_valid"] for u in accel) / max(
            1, sum(u["edits_proposed"] for u in accel)
        )
    seconds = sum(u["train_seconds"] for us in units.values() for u in us)
    steps = sum(u["train_steps"] for us in units.values() for u in us)
    m["steps_per_second"] = steps / seconds if seconds > 0 else float("nan")
    m["env_steps_per_method"] = float(config.rounds * config.steps_per_round)
    base = [m[f"return.{b}"] for b in BASELINES if f"return.{b}" in m]
    if base and "return.dicode" in m:
        strongest = max(base)
        m["return_gain_over_strongest_baseline"] = (m["return.dicode"] - strongest) / max(
            abs(strongest), 1e-9
        )
    return m
