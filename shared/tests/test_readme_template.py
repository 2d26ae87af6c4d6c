"""Every migrated package's README is on the job-shape template (read from the checkout).

A package off :data:`icml26.shared.migration.UNMIGRATED` has a README of at most 150 lines
whose first Python block is within the first 40 lines, whose sections run from "What the
paper claims" to "Limits", whose examples run in its test session (the opt-in line), and whose
results block is generated (the markers); a ``RESULTS.md`` beside it keeps the history.
Skips outside a workspace checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.shared.migration import UNMIGRATED
from icml26.shared.pytest_plugin import README_OPT_IN
from icml26.shared.readme import RESULTS_BEGIN, RESULTS_END, prose_lines

PACKAGES = Path(__file__).resolve().parents[2] / "packages"
MIGRATED = sorted(
    p for p in (PACKAGES.iterdir() if PACKAGES.is_dir() else ()) if p.name not in UNMIGRATED
)


@pytest.mark.skipif(not PACKAGES.is_dir(), reason="not a workspace checkout")
def test_every_listed_package_exists() -> None:
    names = {p.name for p in PACKAGES.iterdir() if (p / "pyproject.toml").is_file()}
    assert names >= UNMIGRATED, f"UNMIGRATED names no package: {sorted(UNMIGRATED - names)}"


@pytest.mark.parametrize("package", MIGRATED, ids=lambda p: p.name)
def test_readme_follows_the_template(package: Path) -> None:
    text = (package / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 150, f"{package.name}/README.md has {len(lines)} lines (at most 150)"
    first = next((i for i, line in enumerate(lines, 1) if line.startswith("```python")), None)
    assert first is not None, f"{package.name}/README.md has no Python block"
    assert first <= 40, f"{package.name}/README.md: first Python block at line {first} (<= 40)"
    heads = [line for _, line in prose_lines(text) if line.startswith("## ")]
    assert heads[0].strip() == "## What the paper claims", heads
    assert heads[-1].strip() == "## Limits", heads
    prose = [line.strip() for _, line in prose_lines(text)]
    assert README_OPT_IN in prose, f"{package.name}/README.md does not run its examples"
    assert prose.index(RESULTS_BEGIN) < prose.index(RESULTS_END)
    assert (package / "RESULTS.md").is_file(), f"{package.name} has no RESULTS.md"
