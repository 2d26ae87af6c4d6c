"""Import hygiene, seeding, plotting, paper contract."""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from icml26.shared import Claim, Paper, figure, seed_everything


def test_importing_shared_imports_no_framework() -> None:
    code = (
        "import sys, icml26.shared, icml26.shared.cli, icml26.shared.reproduce\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'jax', 'jaxlib', 'flax', 'matplotlib', 'transformers', 'ray'})\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_icml26_is_a_namespace_package() -> None:
    import icml26

    assert getattr(icml26, "__file__", None) is None
    for entry in icml26.__path__:
        assert not (Path(entry) / "__init__.py").exists()
    assert icml26.shared.__version__


def test_seed_everything_is_reproducible() -> None:
    g1 = seed_everything(3)
    a = (random.random(), np.random.rand(), g1.normal())  # noqa: NPY002
    g2 = seed_everything(3)
    b = (random.random(), np.random.rand(), g2.normal())  # noqa: NPY002
    assert a == b
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="non-negative integer"):
            seed_everything(bad)  # type: ignore[arg-type]


def test_figure_writes_png_and_nothing_on_error(tmp_path: Path) -> None:
    with figure(tmp_path / "a.png", 1, 2) as (_fig, axes):
        axes[0].plot([0, 1], [1, 0], label="x")
        axes[0].legend()
        axes[1].plot([0, 1], [0, 1])
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    with figure(tmp_path / "grid.png", 1, 1, squeeze=False) as (_fig, grid):
        assert grid.shape == (1, 1)

    def failing_plot() -> None:
        with figure(tmp_path / "b.png") as (_fig, ax):
            ax.plot([0, 1], [0, 1])
            raise RuntimeError("plot failed")

    with pytest.raises(RuntimeError, match="plot failed"):
        failing_plot()
    assert not (tmp_path / "b.png").exists()


@dataclasses.dataclass(frozen=True)
class _Frozen:
    seed: int = 0


@dataclasses.dataclass
class _Mutable:
    seed: int = 0


def _run(config, run_dir):  # pragma: no cover - never called
    return {}


def test_paper_contract_is_checked() -> None:
    profiles = {p: _Frozen() for p in ("smoke", "quick", "full")}
    paper = Paper("ok-paper", "t", profiles, _run)
    assert paper.module == "icml26.ok_paper"
    assert paper.job("run") is _run
    with pytest.raises(LookupError, match="no bench"):
        paper.job("bench")
    with pytest.raises(ValueError, match="lack the profiles full"):
        Paper("p", "t", {"smoke": _Frozen(), "quick": _Frozen()}, _run)
    with pytest.raises(TypeError, match="frozen"):
        Paper("p", "t", {p: _Mutable() for p in ("smoke", "quick", "full")}, _run)
    with pytest.raises(ValueError, match="slug"):
        Paper("Bad Slug", "t", profiles, _run)
    with pytest.raises(ValueError, match="unique"):
        Paper("p", "t", profiles, _run, claims=[Claim("a", "s", "v", "x < 1")] * 2)
    lazy = Paper("p", "t", profiles, "json:dumps")
    assert lazy.job("run").__name__ == "dumps"


def test_check_torch_device_names_the_field_and_the_problem() -> None:
    from icml26.shared.devices import check_torch_device

    check_torch_device("cpu")
    check_torch_device("", field="llm_device", allowed=("", "cpu"))
    with pytest.raises(ValueError, match=r"llm_device must be '', 'cpu', 'cuda' or 'cuda:N'"):
        check_torch_device("tpu", field="llm_device", allowed=("", "cpu"))
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'cuda:N'"):
        check_torch_device("cuda:x")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device is visible to torch"):
            check_torch_device("cuda")
