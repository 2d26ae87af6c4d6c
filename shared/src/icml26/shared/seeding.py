"""One seeding function for every package: Python's ``random``, NumPy and (when in use) torch.

JAX needs no global seeding: JAX packages derive explicit keys with
``jax.random.key(config.seed)``.
"""

from __future__ import annotations

import os
import random
import sys

import numpy as np

__all__ = ["seed_everything"]


def seed_everything(seed: int, *, torch: bool | None = None) -> np.random.Generator:
    """Seed ``random``, NumPy's legacy global state and torch; return a fresh NumPy Generator.

    Args:
        seed: a non-negative integer.
        torch: seed torch (CPU and all CUDA devices). ``None`` (default) seeds it only when
            torch has already been imported, so NumPy-only packages do not pay for importing
            it; torch packages import torch first or pass ``torch=True``.

    Returns:
        ``np.random.default_rng(seed)``, the generator new code should draw from.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - legacy global state, for third-party code
    os.environ["PYTHONHASHSEED"] = str(seed)  # inherited by subprocesses
    if torch or (torch is None and "torch" in sys.modules):
        import torch as _torch

        _torch.manual_seed(seed)
        if _torch.cuda.is_available():
            _torch.cuda.manual_seed_all(seed)
    return np.random.default_rng(seed)
