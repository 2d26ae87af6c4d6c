"""The ``results.json`` schema shared by every paper package.

::

    {
      "paper": "ro-hnn", "version": "0.1.0", "profile": "quick", "kind": "run",
      "config": {...},
      "metrics": {"rollout_error.fput.rohnn.h10": 0.031, ...},   # flat dotted keys -> numbers
      "claims": [{"id", "statement", "paper_value", "measured", "rule", "holds"}, ...],
      "seconds": 212.4
    }

Metric values are finite numbers or ``null`` (a value that was NaN or infinite). Claims are
evaluated here, from the metrics, by :class:`icml26.shared.claims.Claim` rules.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from icml26.shared.claims import Claim

__all__ = [
    "RESULT_KEYS",
    "ResultsError",
    "build_results",
    "flatten_metrics",
    "load_results",
    "validate_results",
]

RESULT_KEYS = ("paper", "version", "profile", "config", "metrics", "claims", "seconds")
CLAIM_KEYS = ("id", "statement", "paper_value", "measured", "rule", "holds")


class ResultsError(ValueError):
    """A results object or file that does not follow the schema."""


def _as_number(key: str, value: Any) -> float | int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str | bytes):
        raise ResultsError(f"metric {key!r} must be a number, got the string {value!r}")
    try:
        number = float(value)  # numpy / torch / jax scalars
    except (TypeError, ValueError) as exc:
        raise ResultsError(f"metric {key!r} must be a number, got {type(value).__name__}") from exc
    return number if math.isfinite(number) else None


def flatten_metrics(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float | int | None]:
    """Flatten nested mappings into dotted keys and coerce values to JSON numbers.

    ``{"a": {"b": 1.0}}`` becomes ``{"a.b": 1.0}``; NaN and infinities become ``None``.

    Args:
        metrics: nested mappings of numbers.
        prefix: the dotted key the mapping sits under (``""`` at the top level).

    Returns:
        Dotted key -> number (or ``None`` for NaN and infinities).

    Raises:
        ResultsError: a non-numeric value, an empty key or one starting or ending with a dot,
            or a key given twice (``{"a.b": 1, "a": {"b": 2}}``).
    """
    flat: dict[str, float | int | None] = {}
    for raw_key, value in metrics.items():
        if (
            not isinstance(raw_key, str)
            or not raw_key
            or raw_key.startswith(".")
            or raw_key.endswith(".")
        ):
            raise ResultsError(f"bad metric key {raw_key!r} under {prefix or 'the top level'!r}")
        key = f"{prefix}.{raw_key}" if prefix else raw_key
        if isinstance(value, Mapping):
            nested = flatten_metrics(value, key)
            clash = flat.keys() & nested.keys()
            if clash:
                raise ResultsError(f"metric keys given twice: {sorted(clash)}")
            flat.update(nested)
        else:
            if key in flat:
                raise ResultsError(f"metric key given twice: {key!r}")
            flat[key] = _as_number(key, value)
    return flat


def build_results(
    *,
    paper: str,
    version: str,
    profile: str,
    config: Mapping[str, Any],
    metrics: Mapping[str, Any],
    claims: Sequence[Claim],
    seconds: float,
    kind: str = "run",
    cpu_seconds: float | None = None,
) -> dict[str, Any]:
    """Assemble and validate a results object; every claim's ``holds`` is computed here.

    ``cpu_seconds`` (optional) is the process CPU time, all threads: on a shared machine it
    tells how long the run would take unloaded better than the wall-clock ``seconds``.

    Args:
        paper: the paper's slug.
        version: the package version that ran.
        profile: the profile's name.
        config: the resolved config, as a JSON-ready dict.
        metrics: the job's metrics (nested mappings are flattened to dotted keys).
        claims: the claims to decide on the metrics.
        seconds: wall-clock seconds of the job.
        kind: ``"run"`` or ``"bench"``.
        cpu_seconds: process CPU seconds of the job, if measured.

    Returns:
        The results object (what ``results.json`` holds), validated.

    Raises:
        ResultsError: the metrics do not flatten (see :func:`flatten_metrics`) or the object
            breaks the schema.
    """
    flat = flatten_metrics(metrics)
    results = {
        "paper": paper,
        "version": version,
        "profile": profile,
        "kind": kind,
        "config": dict(config),
        "metrics": flat,
        "claims": [claim.evaluate(flat, profile) for claim in claims],
        "seconds": round(float(seconds), 3),
    }
    if cpu_seconds is not None:
        results["cpu_seconds"] = round(float(cpu_seconds), 3)
    validate_results(results)
    return results


def validate_results(obj: Any) -> None:
    """Check ``obj`` against the ``results.json`` schema.

    Args:
        obj: a parsed results object.

    Raises:
        ResultsError: naming the first problem (a missing or mistyped field, a bad claim).
    """
    if not isinstance(obj, dict):
        raise ResultsError(f"results must be a JSON object, got {type(obj).__name__}")
    missing = [k for k in RESULT_KEYS if k not in obj]
    if missing:
        raise ResultsError(f"results are missing keys: {', '.join(missing)}")
    for key in ("paper", "version", "profile"):
        if not isinstance(obj[key], str) or not obj[key]:
            raise ResultsError(f"results[{key!r}] must be a non-empty string")
    if not isinstance(obj["config"], dict):
        raise ResultsError("results['config'] must be an object")
    if not isinstance(obj["metrics"], dict):
        raise ResultsError("results['metrics'] must be an object of dotted keys to numbers")
    for key, value in obj["metrics"].items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ResultsError(f"metric {key!r} must be a number or null, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ResultsError(f"metric {key!r} is not finite")
    seconds = obj["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ResultsError(f"results['seconds'] must be a non-negative number, got {seconds!r}")
    if not isinstance(obj["claims"], list):
        raise ResultsError("results['claims'] must be a list")
    for i, claim in enumerate(obj["claims"]):
        if not isinstance(claim, dict):
            raise ResultsError(f"claim #{i} must be an object")
        absent = [k for k in CLAIM_KEYS if k not in claim]
        if absent:
            raise ResultsError(
                f"claim #{i} ({claim.get('id', '?')}) is missing {', '.join(absent)}"
            )
        if claim["holds"] not in (True, False, None):
            raise ResultsError(f"claim {claim['id']!r}: 'holds' must be true, false or null")
        if not isinstance(claim["measured"], dict):
            raise ResultsError(f"claim {claim['id']!r}: 'measured' must be an object")


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a ``results.json``.

    Args:
        path: the file.

    Returns:
        The results object.

    Raises:
        ResultsError: no such file, invalid JSON or a schema violation (naming the file and
            the problem).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ResultsError(f"{path}: no such file") from exc
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        validate_results(obj)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from exc
    return obj
