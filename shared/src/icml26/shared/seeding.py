"""One seeding function for every package: Python's ``random``, NumPy and (when in use) torch.

JAX needs no global seeding: JAX packages derive explicit keys with
``jax.random.key(config.seed)``.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys

import numpy as np

__all__ = ["rng_for", "seed_everything", "seed_for", "seed_sequence"]


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


def _stream_key(part: str | int) -> int:
    if isinstance(part, bool) or not isinstance(part, str | int):
        raise TypeError(f"a stream name part must be a str or int, got {part!r}")
    if isinstance(part, int):
        if part < 0:
            raise ValueError(f"a stream name part must be non-negative, got {part}")
        return part
    if not part:
        raise ValueError("a stream name part must be a non-empty string")
    digest = hashlib.blake2b(part.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def seed_sequence(seed: int, *stream: str | int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of one named random stream under ``seed``.

    Streams with different names are statistically independent (NumPy's ``SeedSequence``
    spawn keys), and the same name always gives the same stream: demonstrations, environments,
    data splits and model initialisation each draw from their own, so no two of them replay
    each other's numbers.

    Args:
        seed: the run's non-negative integer seed.
        *stream: the stream's name, as one or more parts (``"env"``, ``"train", 3``); at least
            one part.

    Returns:
        A ``numpy.random.SeedSequence``.

    Raises:
        ValueError: a negative or non-integer seed, no name, or an empty part.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not stream:
        raise ValueError("name the stream: rng_for(seed, 'env'), not rng_for(seed)")
    return np.random.SeedSequence(int(seed), spawn_key=tuple(_stream_key(p) for p in stream))


def rng_for(seed: int, *stream: str | int) -> np.random.Generator:
    """A NumPy ``Generator`` for one named stream (see :func:`seed_sequence`).

    Example: ``rng_for(config.seed, "demos")`` and ``rng_for(config.seed, "env")`` never
    replay each other, whatever the seed.

    Args:
        seed: the run's seed.
        *stream: the stream's name parts.

    Returns:
        ``numpy.random.Generator`` (PCG64) seeded from the stream.
    """
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, *stream)))


def seed_for(seed: int, *stream: str | int) -> int:
    """A 63-bit integer seed for one named stream, for APIs that take an int.

    Use it for ``torch.Generator().manual_seed``, ``jax.random.key`` or an environment's
    ``reset(seed=...)``.

    Args:
        seed: the run's seed.
        *stream: the stream's name parts.

    Returns:
        A non-negative ``int`` below ``2**63``.
    """
    state = seed_sequence(seed, *stream).generate_state(2, np.uint32)
    return int(state[0]) | (int(state[1]) & 0x7FFFFFFF) << 32
