"""The README's Python blocks run (in order, in one namespace), and the README keeps its shape.

A block right after ``<!-- skip: next "reason" -->`` needs what a test cannot have (an
endpoint, a model download): it is compiled, not run, and reported skipped with its reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from icml26.blitzrank.tables import BEGIN, END

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(
    r'(?:<!-- skip: next "(?P<reason>[^"]*)" -->\n)?```python\n(?P<code>.*?)^```', re.S | re.M
)


def _blocks() -> list[tuple[int, str, str | None]]:
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start("code")) + 1, m["code"], m["reason"])
        for m in _BLOCK.finditer(text)
    ]


def test_readme_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {"__name__": "readme"}
    ran = 0
    for line, code, reason in _blocks():
        compiled = compile(code, f"README.md, block at line {line}", "exec")
        if reason is None:
            exec(compiled, namespace)
            ran += 1
    assert ran >= 1
    assert "BlitzRank: nDCG@10" in capsys.readouterr().out


@pytest.mark.parametrize("reason", [r for _, _, r in _blocks() if r is not None])
def test_readme_skipped_block(reason: str) -> None:
    pytest.skip(reason)


def test_readme_follows_the_template() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 150
    first = next(i for i, ln in enumerate(lines, 1) if ln.startswith("```python"))
    assert first <= 40
    heads = [ln for ln in lines if ln.startswith("## ")]
    assert heads[0] == "## What the paper claims"
    assert heads[-1] == "## Limits"
    assert 0 <= text.index(BEGIN) < text.index(END)
