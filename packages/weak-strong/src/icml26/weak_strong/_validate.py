"""Input checks shared by every module: scores in [0, 1], binary labels, levels in (0, 1).

Each check raises a ``ValueError`` naming the argument and the offending value, so a user's
bad stream fails at the boundary rather than deep inside a policy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["check_labels", "check_level", "check_score", "check_scores", "check_stream"]


def check_level(value: Any, name: str = "alpha") -> float:
    """``value`` as a float strictly inside (0, 1), else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    value = float(value)
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")
    return value


def check_score(value: Any, name: str = "score") -> float:
    """One weak-verifier score: a finite float in [0, 1]."""
    try:
        score = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}") from exc
    if math.isnan(score) or not (0.0 <= score <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return score


def check_scores(scores: Any, name: str = "scores") -> NDArray[np.float64]:
    """A 1-D float array of weak-verifier scores, each finite and in [0, 1]."""
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.size and not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} holds a non-finite value at index {bad} ({arr[bad]})")
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        bad = int(np.flatnonzero((arr < 0.0) | (arr > 1.0))[0])
        raise ValueError(f"{name} must lie in [0, 1]; index {bad} holds {arr[bad]}")
    return arr


def check_labels(labels: Any, name: str = "labels") -> NDArray[np.bool_]:
    """A 1-D boolean array of strong-verifier verdicts (1/True = the answer is correct)."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr
    if arr.size and not np.all(np.isin(arr, (0, 1))):
        bad = int(np.flatnonzero(~np.isin(arr, (0, 1)))[0])
        raise ValueError(f"{name} must be 0/1 or booleans; index {bad} holds {arr[bad]!r}")
    return arr.astype(np.bool_)


def check_stream(scores: Any, labels: Any) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Validated ``(scores, labels)`` of equal length."""
    s = check_scores(scores)
    y = check_labels(labels)
    if s.shape != y.shape:
        raise ValueError(f"scores and labels differ in length: {s.shape[0]} vs {y.shape[0]}")
    return s, y
