"""The package's layering, as the workspace lint's import contract states it: ``config`` and
``paper`` at the bottom, the method modules above them, ``tables`` / ``figures`` above the
methods, ``experiment`` / ``bench`` on top; nothing imports ``experiment``; no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "icml26" / "blitzrank"
PKG = "icml26.blitzrank"
BOTTOM = {"config", "paper"}
PRESENTATION = {"tables", "figures"}
TOP = {"experiment", "bench"}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in the file)."""
    out: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PKG):
                base = node.module.removeprefix(PKG).lstrip(".")
                names.update(f"{base}.{a.name}".lstrip(".") for a in node.names)
                names.add(base)
            elif isinstance(node, ast.Import):
                names.update(
                    a.name.removeprefix(PKG).lstrip(".")
                    for a in node.names
                    if a.name.startswith(PKG)
                )
        out[_module(path)] = {n for n in names if n}
    return out


def _top(name: str) -> str:
    return name.split(".")[0]


def test_layers() -> None:
    graph = _imports()
    for mod, deps in graph.items():
        layer = {_top(d) for d in deps} - {_top(mod)}
        assert "experiment" not in layer, f"{mod} imports experiment"
        if _top(mod) in BOTTOM:
            assert layer <= {"config"}, f"{mod} (bottom layer) imports {layer - {'config'}}"
        elif _top(mod) in PRESENTATION:
            assert not layer & TOP, f"{mod} imports {layer & TOP}"
        elif _top(mod) not in TOP and mod:
            assert not layer & (PRESENTATION | TOP), f"{mod} imports {layer & (PRESENTATION | TOP)}"


def test_no_cycles_between_modules() -> None:
    graph = _imports()
    modules = set(graph)
    edges = {m: {d for d in deps if d in modules and d != m} for m, deps in graph.items()}

    def reaches(src: str, dst: str) -> bool:
        seen, todo = set(), [src]
        while todo:
            cur = todo.pop()
            for nxt in edges.get(cur, ()):
                if nxt == dst:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    # A package's __init__ re-exports its submodules, which import it back by design.
    cycles = [
        (a, b)
        for a in edges
        for b in edges[a]
        if reaches(b, a) and not (b.startswith(a + ".") or a.startswith(b + ".") or "" in (a, b))
    ]
    assert not cycles, cycles
