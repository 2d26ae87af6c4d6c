from __future__ import annotations

from pathlib import Path

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    torch.set_num_threads(1)
    cache: Path = tmp_path_factory.getbasetemp() / "icml26-cache"
    monkeypatch.setenv("ICML26_CACHE", str(cache))
