"""Every public name of every package is the object the package means, not a submodule.

The defect this catches: a package exports ``rollout`` (a function in ``rollout.py``) through a
lazy ``__getattr__``. Importing ``icml26.rmft.rollout`` binds the *module* as the package's
``rollout`` attribute, so ``from icml26.rmft import rollout`` returns the module and the
README's example raises ``TypeError: 'module' object is not callable``.

The rule, in both tests below: a public name may be a module only if that module does not
itself define an object of the same name (``transport_kl.flow`` is a module of functions and is
meant as one; ``rmft.rollout`` defines ``rollout`` and shadowed it). See
:mod:`icml26.shared.exports`, which refuses such names when a package is defined.

Two versions:

* ``test_no_public_name_is_shadowed_by_a_submodule`` reads the sources of every member of the
  workspace checkout (``packages/*/src`` and ``shared/src``) with :mod:`ast`, imports nothing,
  and runs in every session, ``nox -s tests-shared`` included, where no paper package is
  installed; it skips outside a workspace checkout (an sdist of ``icml26-shared``).
* ``test_public_names_after_importing_every_submodule`` imports each installed paper package
  (entry points ``icml26.papers``) and all of its submodules, then checks each name of
  ``__all__``: it exists and is not a shadowing module. It needs the paper packages installed
  (``uv run pytest shared/tests/test_public_names.py`` at the workspace root, or
  ``nox -s public-names``) and skips where none is (``tests-shared``).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import tomllib
import warnings
from pathlib import Path
from types import ModuleType

import pytest

from icml26.shared.registry import installed

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------------------------
# Static version: the workspace's sources, read with ast.


def _workspace_packages() -> list[Path]:
    """The top-level package folder (``src/icml26/<mod>``) of every workspace member."""
    if not (ROOT / "pyproject.toml").is_file() or not (ROOT / "packages").is_dir():
        return []
    members = [ROOT / "shared", *sorted(p.parent for p in ROOT.glob("packages/*/pyproject.toml"))]
    found = []
    for member in members:
        name = tomllib.loads((member / "pyproject.toml").read_text())["project"]["name"]
        slug = name.removeprefix("icml26-")
        found.append(member / "src" / "icml26" / slug.replace("-", "_"))
    return found


class _Unreadable(ValueError):
    """``__all__`` is built in a way this reader does not follow."""


def _names(node: ast.expr, env: dict[str, ast.expr]) -> list[str]:
    """The strings a literal-ish expression evaluates to: ``["a", *sorted(_EXPORTS)]``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [n for elt in node.elts for n in _names(elt, env)]
    if isinstance(node, ast.Starred):
        return _names(node.value, env)
    if isinstance(node, ast.Dict):
        return [n for key in node.keys if key is not None for n in _names(key, env)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.BitOr):
        return _names(node.left, env) + _names(node.right, env)
    if isinstance(node, ast.Name) and node.id in env:
        return _names(env[node.id], env)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"sorted", "list", "tuple", "set", "frozenset"}
        and len(node.args) == 1
    ):
        return _names(node.args[0], env)
    raise _Unreadable(ast.unparse(node))


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for elt in target.elts for n in _target_names(elt)]
    return []


def _static_all(tree: ast.Module) -> list[str] | None:
    """``__all__`` of a module: a literal, built from module-level literals, or the first
    result of :func:`icml26.shared.exports.lazy_exports` (its exports and submodules)."""
    env: dict[str, ast.expr] = {}
    names: list[str] | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            bound = [n for t in targets for n in _target_names(t)]
            value = stmt.value
            if "__all__" in bound:
                is_lazy = isinstance(value, ast.Call) and ast.unparse(value.func).endswith(
                    "lazy_exports"
                )
                if is_lazy:
                    assert isinstance(value, ast.Call)
                    parts = value.args[1:2] + [
                        k.value for k in value.keywords if k.arg in {"exports", "submodules"}
                    ]
                    names = [n for part in parts for n in _names(part, env)]
                else:
                    names = _names(value, env)
            for name in bound:
                env[name] = value
        elif (
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == "__all__"
        ):
            names = [*(names or []), *_names(stmt.value, env)]
    return names


def _top_level_bindings(tree: ast.Module, *, imports_only: bool = False) -> set[str]:
    """Names a module binds unconditionally at its top level (``if`` blocks, such as
    ``if TYPE_CHECKING:``, are not unconditional)."""
    bound: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        elif imports_only:
            continue
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            bound |= {n for t in stmt.targets for n in _target_names(t)}
        elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
            bound |= set(_target_names(stmt.target))
    return bound


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _shadowed(package: Path) -> list[str]:
    """The public names of ``package`` that its submodule of the same name would shadow."""
    init = package / "__init__.py"
    tree = _parse(init)
    try:
        public = _static_all(tree)
    except _Unreadable as exc:
        pytest.fail(
            f"{init}: cannot read __all__ statically (at {exc}); build it from literals or "
            "with icml26.shared.exports.lazy_exports"
        )
    # A name the __init__ imports eagerly is rebound after its submodule is imported, so the
    # object wins (a lazy __getattr__ never gets that chance).
    eager = _top_level_bindings(tree, imports_only=True)
    problems = []
    for name in public or []:
        module = package / f"{name}.py"
        if not module.is_file():
            module = package / name / "__init__.py"
        if not module.is_file() or name in eager:
            continue
        if name in _top_level_bindings(_parse(module)):
            rel = module.relative_to(ROOT)
            problems.append(
                f"{name!r}: {rel} defines {name!r}, but once that module is imported the "
                f"package attribute {name!r} is the module; rename the module"
            )
    return problems


PACKAGES = _workspace_packages()


@pytest.mark.skipif(not PACKAGES, reason="not a workspace checkout (no packages/ beside shared/)")
@pytest.mark.parametrize("package", PACKAGES, ids=[p.parents[2].name for p in PACKAGES])
def test_no_public_name_is_shadowed_by_a_submodule(package: Path) -> None:
    problems = _shadowed(package)
    assert not problems, f"icml26.{package.name}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------
# Import version: the installed paper packages, every submodule imported first.


def _missing_dependency(exc: ImportError) -> str | None:
    """The third-party module whose absence caused ``exc`` (an optional extra not installed),
    or None when the failure is the package's own (a missing ``icml26`` module, a bad name)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ModuleNotFoundError) and seen.name:
            return None if seen.name.split(".")[0] == "icml26" else seen.name
        seen = seen.__cause__ or seen.__context__
    return None


def _import_every_submodule(package: ModuleType) -> list[str]:
    """Import all submodules of ``package``, depth first; returns those skipped for a missing
    optional dependency, each with the module it lacks."""
    skipped = []
    todo = [package]
    while todo:
        current = todo.pop()
        for info in pkgutil.iter_modules(current.__path__, current.__name__ + "."):
            try:
                module = importlib.import_module(info.name)
            except ImportError as exc:
                missing = _missing_dependency(exc)
                if missing is None:
                    raise
                skipped.append(f"{info.name} (needs {missing})")
                continue
            if info.ispkg:
                todo.append(module)
    return skipped


def _public_problems(package: ModuleType) -> list[str]:
    problems = []
    for name in getattr(package, "__all__", ()):
        try:
            obj = getattr(package, name)
        except AttributeError as exc:
            problems.append(f"{name!r} is in __all__ but missing: {exc}")
            continue
        if isinstance(obj, ModuleType):
            inner = getattr(obj, name, None)
            if inner is not None and not isinstance(inner, ModuleType):
                problems.append(
                    f"{name!r} is the module {obj.__name__}, which shadows the "
                    f"{type(inner).__name__} {name!r} it defines; rename the module"
                )
    return problems


PAPERS = installed()


@pytest.mark.skipif(not PAPERS, reason="no paper package installed in this environment")
@pytest.mark.parametrize("slug", sorted(PAPERS))
def test_public_names_after_importing_every_submodule(slug: str) -> None:
    package = importlib.import_module(PAPERS[slug].load().module)
    skipped = _import_every_submodule(package)
    if skipped:
        warnings.warn(
            f"{slug}: not imported, an optional dependency is missing: {', '.join(skipped)}",
            stacklevel=1,
        )
    problems = _public_problems(package)
    assert not problems, f"{package.__name__}:\n  " + "\n  ".join(problems)


def test_the_static_reader_follows_the_usual_forms() -> None:
    source = """
from .ranker import certify
_EXPORTS = {"a": ".x", "b": ".y"}
_LAZY = {"c"}
__all__ = ["certify", *sorted(_EXPORTS)] + list(_LAZY)
__all__ += ["d"]
"""
    assert _static_all(ast.parse(source)) == ["certify", "a", "b", "c", "d"]
    assert _top_level_bindings(ast.parse(source), imports_only=True) == {"certify"}
    lazy = """
__all__, __getattr__, __dir__ = lazy_exports(__name__, {"e": ".e"}, submodules=["f"])
"""
    assert _static_all(ast.parse(lazy)) == ["e", "f"]
    with pytest.raises(_Unreadable):
        _static_all(ast.parse("__all__ = compute()"))
