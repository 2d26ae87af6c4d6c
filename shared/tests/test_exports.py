"""icml26.shared.exports: lazy public names, the submodule-shadowing guard, __version__."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib import metadata
from itertools import count
from pathlib import Path
from types import ModuleType

import pytest

from icml26.shared.exports import UNKNOWN_VERSION, distribution_name

_IDS = count()

INIT = """
from icml26.shared.exports import lazy_exports

HERE = "eager"
__all__, __getattr__, __dir__ = lazy_exports(__name__, {exports}, **{kwargs})
"""

ROLLOUTS = """
def rollout(policy):
    return f"rolled out {policy}"

class Policy:
    pass
"""

MakePackage = Callable[..., str]


@pytest.fixture
def make_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakePackage]:
    """Write a fresh package (unique name) under ``tmp_path`` and return its import name."""
    made: list[str] = []
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(exports: str, files: dict[str, str] | None = None, **kwargs: object) -> str:
        name = f"lazypkg_{next(_IDS)}"
        root = tmp_path / name
        files = {"rollouts.py": ROLLOUTS, **(files or {})}
        files["__init__.py"] = INIT.format(exports=exports, kwargs=repr(kwargs))
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(textwrap.dedent(text))
        importlib.invalidate_caches()
        made.append(name)
        return name

    yield make
    for name in list(sys.modules):
        if name.split(".")[0] in made:
            del sys.modules[name]


def _import(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_names_are_imported_on_first_access_and_cached(make_package: MakePackage) -> None:
    name = make_package('{"rollout": ".rollouts", "Policy": ".rollouts"}')
    pkg = _import(name)
    assert pkg.__all__ == ["Policy", "rollout"]
    assert f"{name}.rollouts" not in sys.modules, "the submodule was imported eagerly"
    assert "rollout" not in vars(pkg)

    fn = pkg.rollout
    assert f"{name}.rollouts" in sys.modules
    assert fn("ucb") == "rolled out ucb"
    assert vars(pkg)["rollout"] is fn, "not cached in the package namespace"
    assert pkg.Policy is sys.modules[f"{name}.rollouts"].Policy


def test_from_import_gives_the_object_after_the_submodule_was_imported(
    make_package: MakePackage,
) -> None:
    name = make_package('{"rollout": ".rollouts"}')
    _import(f"{name}.rollouts")  # what any internal `from pkg.rollouts import ...` does
    namespace: dict[str, object] = {}
    exec(f"from {name} import rollout", namespace)
    assert callable(namespace["rollout"])
    assert not isinstance(namespace["rollout"], ModuleType)


def test_a_name_equal_to_a_submodule_is_refused_at_definition(make_package: MakePackage) -> None:
    name = make_package(
        '{"rollout": ".rollout"}', files={"rollout.py": ROLLOUTS, "rollouts.py": ""}
    )
    with pytest.raises(ValueError, match=r"rollout is a submodule.*returns the module") as info:
        _import(name)
    assert "Rename the submodule" in str(info.value)
    assert "submodules=['rollout']" in str(info.value)


def test_a_name_equal_to_a_subpackage_is_refused_unless_exported_as_a_module(
    make_package: MakePackage,
) -> None:
    files = {"baselines/__init__.py": "UCB = 'ucb'\n"}
    with pytest.raises(ValueError, match="is a subpackage"):
        _import(make_package('{"baselines": ".baselines"}', files=files))

    name = make_package('{"rollout": ".rollouts"}', files=files, submodules=["baselines"])
    pkg = _import(name)
    assert pkg.__all__ == ["baselines", "rollout"]
    assert f"{name}.baselines" not in sys.modules
    assert pkg.baselines is sys.modules[f"{name}.baselines"]
    assert pkg.baselines.UCB == "ucb"


@pytest.mark.parametrize(
    ("exports", "kwargs", "message"),
    [
        ("{}", {"submodules": ["nowhere"]}, "not one of its submodules"),
        ('{"rollouts": ".x"}', {}, "is a submodule"),
        ('{"rollout": "rollouts"}', {}, r"the submodule is written '\.rollouts'"),
        ('{"__version__": ".rollouts"}', {}, "cannot export '__version__'"),
        ('{"not a name": ".rollouts"}', {}, "cannot export"),
        ('{"rollouts": ".rollouts"}', {"submodules": ["rollouts"]}, "is a submodule"),
    ],
)
def test_bad_declarations_fail_when_the_package_is_imported(
    make_package: MakePackage, exports: str, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _import(make_package(exports, **kwargs))


def test_must_be_called_from_the_package_being_imported() -> None:
    from icml26.shared.exports import lazy_exports

    with pytest.raises(ValueError, match="call it from the package's __init__"):
        lazy_exports("no_such_package_here", {})


def test_unknown_names_raise_attribute_error_like_python(make_package: MakePackage) -> None:
    name = make_package('{"rollout": ".rollouts"}')
    pkg = _import(name)
    with pytest.raises(AttributeError, match=rf"^module '{name}' has no attribute 'nope'$") as info:
        _ = pkg.nope
    assert info.value.name == "nope"
    assert info.value.obj is pkg
    assert not hasattr(pkg, "nope")
    with pytest.raises(ImportError, match="cannot import name 'nope'"):
        exec(f"from {name} import nope", {})
    assert f"{name}.rollouts" not in sys.modules, "an unknown name imported a submodule"


def test_a_stale_export_names_the_module_that_lacks_it(make_package: MakePackage) -> None:
    pkg = _import(make_package('{"gone": ".rollouts"}'))
    with pytest.raises(AttributeError, match=r"exports 'gone' from '.*\.rollouts', which does not"):
        _ = pkg.gone


def test_absolute_targets(make_package: MakePackage) -> None:
    pkg = _import(make_package('{"dedent": "textwrap", "rollout": ".rollouts"}'))
    assert pkg.dedent is textwrap.dedent


def test_version_from_the_distribution(make_package: MakePackage) -> None:
    pkg = _import(make_package('{"rollout": ".rollouts"}'))
    assert pkg.__version__ == UNKNOWN_VERSION  # lazypkg-N is not installed
    assert "__version__" not in pkg.__all__

    pkg = _import(make_package("{}", distribution="icml26-shared"))
    assert pkg.__version__ == metadata.version("icml26-shared")
    assert vars(pkg)["__version__"] == pkg.__version__


def test_default_distribution_name() -> None:
    assert distribution_name("icml26.rmft") == "icml26-rmft"
    assert distribution_name("icml26.ro_hnn") == "icml26-ro-hnn"


def test_dir_lists_public_names_version_and_the_namespace(make_package: MakePackage) -> None:
    files = {"baselines/__init__.py": ""}
    name = make_package('{"rollout": ".rollouts"}', files=files, submodules=["baselines"])
    pkg = _import(name)
    listing = dir(pkg)
    assert {"rollout", "baselines", "__version__", "HERE", "__name__"} <= set(listing)
    assert listing == sorted(listing)
    assert f"{name}.rollouts" not in sys.modules, "dir() imported a submodule"
