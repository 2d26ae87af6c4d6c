"""The README's Python blocks run (the "use it on your own model" block on a tiny U-Net-shaped
model), and the README keeps the template's shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks() -> list[str]:
    return BLOCK.findall(README.read_text())


def test_readme_shape() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, len(lines)
    first = next(i for i, line in enumerate(lines) if line.startswith("```python"))
    assert first < 40, first
    body = "\n".join(lines)
    assert "<!-- results:begin -->" in body
    assert "<!-- results:end -->" in body


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_python_block_runs(index: int) -> None:
    code = _blocks()[index]
    exec(compile(code, f"README.md block {index}", "exec"), {"__name__": "readme"})
