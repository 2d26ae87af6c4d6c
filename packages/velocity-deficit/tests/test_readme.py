"""The README on the template: at most 150 lines, its first Python block early, its examples
opted in to running in the test session (the ``icml26`` pytest plugin runs them with sybil),
and its results between the generated markers."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_is_short_and_runs_its_examples() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("```python"))
    assert first < 40
    assert len(lines) <= 150
    for marker in (
        "<!-- icml26: run-examples -->",
        "<!-- results:begin -->",
        "<!-- results:end -->",
        "<!-- tables:begin -->",
        "<!-- tables:end -->",
    ):
        assert marker in lines, marker
