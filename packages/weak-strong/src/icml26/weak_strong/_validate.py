"""Input checks shared by every module: scores in [0, 1], binary labels, levels in (0, 1).

Each check raises a ``ValueError`` naming the argument and the offending value, so a user's
bad stream fails at the boundary rather than deep inside a policy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "check_label",
    "check_labels",
    "check_level",
    "check_score",
    "check_scores",
    "check_stream",
]

_REAL = (int, float, np.integer, np.floating)


def check_level(value: Any, name: str = "alpha") -> float:
    """``value`` as a float strictly inside (0, 1), else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    value = float(value)
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")
    return value


def check_score(value: Any, name: str = "score") -> float:
    """One weak-verifier score: a real number (not a bool, not a string) in [0, 1]."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, _REAL):
        raise ValueError(
            f"{name} must be a real number in [0, 1], got {value!r} ({type(value).__name__})"
        )
    score = float(value)
    if math.isnan(score) or not (0.0 <= score <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return score


def check_scores(scores: Any, name: str = "scores") -> NDArray[np.float64]:
    """A 1-D float array of weak-verifier scores, each finite and in [0, 1] (real numbers
    only: strings and booleans are refused, not converted)."""
    if isinstance(scores, list | tuple):  # NumPy would turn True into 1.0 and "0.5" into 0.5
        for i, v in enumerate(scores):
            if isinstance(v, bool | np.bool_ | str | bytes) or v is None:
                raise ValueError(f"{name} must hold real numbers in [0, 1]; index {i} holds {v!r}")
    raw = np.asarray(scores)
    if raw.size and raw.dtype.kind not in "fiu":
        raise ValueError(
            f"{name} must hold real numbers in [0, 1], got an array of {raw.dtype} "
            f"(first value {raw.ravel()[0]!r})"
        )
    arr = raw.astype(np.float64)
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
    """A 1-D boolean array of strong-verifier verdicts (1/True = the answer is correct):
    booleans or the numbers 0 and 1, nothing else (no strings, no 2, no NaN)."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr
    if arr.size and arr.dtype.kind not in "fiu":
        raise ValueError(
            f"{name} must be booleans or 0/1, got an array of {arr.dtype} "
            f"(first value {arr.ravel()[0]!r})"
        )
    if arr.size and not np.all(np.isin(arr, (0, 1))):
        bad = int(np.flatnonzero(~np.isin(arr, (0, 1)))[0])
        raise ValueError(f"{name} must be 0/1 or booleans; index {bad} holds {arr[bad]!r}")
    return arr.astype(np.bool_)


def check_label(value: Any, name: str = "label") -> bool:
    """One strong verdict: ``True``/``False`` or the number 0 or 1, else a ``ValueError``
    (the string ``"no"``, 2 and NaN are refused, not read as truthy)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, _REAL) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{name} must be True/False or 0/1, got {value!r}")


def check_stream(scores: Any, labels: Any) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Validated ``(scores, labels)`` of equal length."""
    s = check_scores(scores)
    y = check_labels(labels)
    if s.shape != y.shape:
        raise ValueError(f"scores and labels differ in length: {s.shape[0]} vs {y.shape[0]}")
    return s, y
