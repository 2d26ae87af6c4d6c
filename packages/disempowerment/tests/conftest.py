"""Shared fixtures: quiet logs, one thread for torch and BLAS."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("ICML26_QUIET", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML26_QUIET", "1")
