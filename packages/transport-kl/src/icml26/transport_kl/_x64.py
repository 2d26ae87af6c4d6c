"""Float64 inside the package's functions, never switched on globally at import.

The divergences involve matrix square roots, logarithms and inverses of covariances whose
eigenvalues span many decades (``Sigma = 1e-12 I``); float32 turns those into NaNs. Every
public function runs under :func:`jax.enable_x64` so a user's own float32 JAX code is left
alone, and returns float64 arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import jax

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["x64"]


def x64(fn: F) -> F:
    """Decorator: run ``fn`` with 64-bit JAX types enabled (context-local)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
