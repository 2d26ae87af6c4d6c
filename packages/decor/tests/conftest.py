"""Keep tests to one CPU thread: the machine is shared."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ICML26_QUIET", "1")

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


import pytest


@pytest.fixture(scope="session")
def factbook():  # type: ignore[no-untyped-def]
    """The factbook environment, built once per session (a few seconds)."""
    from icml26.decor.data.factbook import build_factbook

    return build_factbook()
