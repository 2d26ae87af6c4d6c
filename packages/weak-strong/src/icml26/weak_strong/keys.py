"""Metric keys of the weak-strong job, through the shared encoding (``0.1 -> "a0p1"``).

Renamed from 0.1.0 (dots inside a key part): ``a0.05`` -> ``a0p05``, ``a0.1`` -> ``a0p1``,
``a0.2`` -> ``a0p2``; every other part is unchanged.
"""

from __future__ import annotations

from icml26.shared.keys import metric_key, number_part

__all__ = ["akey", "eta_key", "key"]


def akey(alpha: float) -> str:
    """The target's part of a metric key: ``0.1 -> "a0p1"``."""
    return "a" + number_part(alpha)


def eta_key(step_size: float) -> str:
    """A step size's part of a metric key: ``0.01 -> "eta0p01"``."""
    return "eta" + number_part(step_size)


def key(*parts: str | int | float) -> str:
    """``metric_key`` of ``parts`` (text parts as they are, numbers encoded)."""
    return metric_key(*parts)
