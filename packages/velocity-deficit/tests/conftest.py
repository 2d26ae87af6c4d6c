"""One thread for torch and BLAS (other jobs share the CPU and the tests use tiny tensors)."""

from __future__ import annotations

import os

import pytest
import torch
from threadpoolctl import threadpool_limits

torch.set_num_threads(1)
threadpool_limits(1)
os.environ.setdefault("ICML26_QUIET", "1")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)
