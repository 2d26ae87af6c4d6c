"""The README's Python blocks run (the "use it on your own model" block on its tiny model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_its_first_python_block_early_and_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("```python"))
    assert first < 40
    assert len(lines) <= 150
    assert BLOCKS


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # blocks may write files (model.pt)
    namespace: dict[str, object] = {}
    exec(compile(BLOCKS[index], f"README block {index}", "exec"), namespace)
    if index == 0:  # the saved state dict is dense and loads into a plain model
        model = namespace["model"]
        plain = torch.nn.Sequential(
            torch.nn.Linear(32, 64),
            torch.nn.GELU(),
            torch.nn.LayerNorm(64),
            torch.nn.Linear(64, 10),
        )
        plain.load_state_dict(torch.load(tmp_path / "model.pt", weights_only=True))
        x = torch.randn(3, 32)
        torch.testing.assert_close(plain(x), model(x))  # type: ignore[operator]
