"""Shared test setup: one CPU thread (other jobs share the machine), quiet logs."""

from __future__ import annotations

import os

import pytest
import torch

torch.set_num_threads(1)
os.environ.setdefault("ICML26_QUIET", "1")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)
