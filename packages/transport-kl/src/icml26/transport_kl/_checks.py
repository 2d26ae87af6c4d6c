"""Input validation with clear messages (eager: skipped for JAX tracers under ``jit``)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_gaussian_pair", "check_nonnegative", "is_concrete"]


def is_concrete(*xs: Any) -> bool:
    """True when every input has concrete values (not a tracer inside ``jit``/``vmap``)."""
    import jax

    return not any(isinstance(x, jax.core.Tracer) for x in xs)


def _check_cov(name: str, cov: np.ndarray, d: int, rtol: float) -> None:
    if cov.shape[-2:] != (d, d):
        raise ValueError(
            f"{name} must have shape (..., {d}, {d}) to match the mean, got {cov.shape}"
        )
    if not np.all(np.isfinite(cov)):
        raise ValueError(f"{name} contains NaN or inf")
    scale = np.maximum(np.max(np.abs(cov), axis=(-1, -2)), np.finfo(float).tiny)
    asym = np.max(np.abs(cov - np.swapaxes(cov, -1, -2)), axis=(-1, -2))
    if np.any(asym > 1e-8 * scale):
        raise ValueError(f"{name} is not symmetric (max |C - C^T| = {float(np.max(asym)):.3g})")
    eig_min = np.linalg.eigvalsh(0.5 * (cov + np.swapaxes(cov, -1, -2)))[..., 0]
    if np.any(eig_min < -rtol * scale):
        raise ValueError(
            f"{name} is not positive semi-definite (smallest eigenvalue {float(np.min(eig_min)):.3g})"
        )


def check_gaussian_pair(
    mean1: Any, cov1: Any, mean2: Any, cov2: Any, *, rtol: float = 1e-9
) -> None:
    """Raise ``ValueError`` naming the problem for mismatched, non-finite or non-PSD inputs."""
    if not is_concrete(mean1, cov1, mean2, cov2):
        return
    m1, c1, m2, c2 = (np.asarray(a, dtype=np.float64) for a in (mean1, cov1, mean2, cov2))
    for name, m in (("mean1", m1), ("mean2", m2)):
        if m.ndim < 1:
            raise ValueError(f"{name} must be a vector (..., d), got a scalar")
        if not np.all(np.isfinite(m)):
            raise ValueError(f"{name} contains NaN or inf")
    d = m1.shape[-1]
    if m2.shape[-1] != d:
        raise ValueError(f"dimension mismatch: mean1 has d={d}, mean2 has d={m2.shape[-1]}")
    _check_cov("cov1", c1, d, rtol)
    _check_cov("cov2", c2, d, rtol)


def check_nonnegative(name: str, value: Any) -> None:
    if not is_concrete(value):
        return
    v = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
