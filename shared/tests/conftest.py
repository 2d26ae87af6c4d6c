"""Fixtures: a fake paper package registered through ICML26_EXTRA_PAPERS."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

FAKE_PAPER = textwrap.dedent(
    """
    from dataclasses import dataclass
    from typing import Literal

    from icml26.shared import Claim, Paper, figure

    __version__ = "9.9.9"


    @dataclass(frozen=True)
    class FakeConfig:
        seed: int = 0
        n: int = 10
        scale: float = 1.0
        mode: Literal["a", "b"] = "a"
        fail: bool = False

        def __post_init__(self):
            if self.n < 0:
                raise ValueError("n must be >= 0")


    def run(config, run_dir):
        if config.fail:
            raise RuntimeError("the fake paper was told to fail")
        for step in range(3):
            run_dir.log_metrics(step, loss=1.0 / (step + 1))
        with figure(run_dir.plot_path("curve")) as (fig, ax):
            ax.plot([0, 1, 2], [1.0, 0.5, 0.33])
        return {"score": config.n * config.scale, "nested": {"x": 1.5, "mode_b": config.mode == "b"}}


    def bench(config, run_dir):
        return {"speedup": {"n32": 2.0 * config.scale}}


    PROFILES = {name: FakeConfig(n=n) for name, n in (("smoke", 2), ("quick", 10), ("full", 100))}

    PAPER = Paper(
        slug="fake-paper",
        title="A fake paper for the CLI tests",
        profiles=PROFILES,
        run=run,
        claims=[
            Claim("big_score", "The score is at least 5.", ">= 5", "score >= 5"),
            Claim("x_small", "x stays below 2.", "< 2", "nested.x < 2"),
        ],
        bench=bench,
        bench_claims=[Claim("fast", "At least 1.5x faster.", "2x", "speedup.n32 >= 1.5")],
        framework="numpy",
        summary="fake paper used by icml26-shared's tests",
    )
    """
)


@pytest.fixture
def fake_paper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Make ``fake-paper`` visible to this process and to child processes."""
    module_dir = tmp_path / "fakepkg"
    module_dir.mkdir()
    (module_dir / "icml26_fake_paper.py").write_text(FAKE_PAPER)
    monkeypatch.syspath_prepend(str(module_dir))
    monkeypatch.setenv("PYTHONPATH", str(module_dir))
    monkeypatch.setenv("ICML26_EXTRA_PAPERS", "icml26_fake_paper:PAPER")
    monkeypatch.setenv("ICML26_QUIET", "1")
    monkeypatch.chdir(tmp_path)
    yield "fake-paper"
    sys.modules.pop("icml26_fake_paper", None)
