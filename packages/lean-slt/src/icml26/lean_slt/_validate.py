"""Argument checks shared by the numerical routines: clear errors naming the bad value."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = [
    "as_positive_array",
    "check_dimension",
    "check_nonnegative",
    "check_positive",
    "chi_mean",
]


def chi_mean(k: int) -> float:
    """``E ||g||_2`` for ``g ~ N(0, I_k)``: ``sqrt(2) Gamma((k + 1) / 2) / Gamma(k / 2)``."""
    return math.sqrt(2) * math.exp(gammaln((k + 1) / 2) - gammaln(k / 2))


def check_positive(name: str, value: float) -> float:
    """``value`` as a float, or ``ValueError`` if it is not a finite number > 0."""
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_nonnegative(name: str, value: float) -> float:
    """``value`` as a float, or ``ValueError`` if it is not a finite number >= 0."""
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def check_dimension(name: str, value: int, minimum: int = 1) -> int:
    """``value`` as an int, or ``ValueError`` if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or int(value) != value or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def as_positive_array(name: str, value: float | np.ndarray) -> np.ndarray:
    """``value`` as a float array, or ``ValueError`` if any entry is not finite and > 0.

    Covering radii ``eps`` go through here: ``N(eps)`` is only defined for ``eps > 0`` in the
    statements we mirror (``heps : 0 < eps`` in every covering theorem of the formalisation).
    """
    arr = np.asarray(value, dtype=float)
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one value")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        bad = arr[~np.isfinite(arr) | (arr <= 0)].ravel()[:3]
        raise ValueError(f"{name} must be finite and > 0, got {bad.tolist()}")
    return arr
