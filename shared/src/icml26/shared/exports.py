"""Lazy public names for a package ``__init__`` (PEP 562), written once for every package.

A paper package re-exports its public API from ``icml26/<mod>/__init__.py`` without importing
torch or JAX until a name is used (the CLI imports every paper for ``icml26 list``)::

    # icml26/blitzrank/__init__.py, below the package docstring
    from __future__ import annotations

    from typing import TYPE_CHECKING

    from icml26.shared.exports import lazy_exports

    if TYPE_CHECKING:  # what type checkers and IDEs see; nothing is imported at run time
        from .ranker import BlitzRank as BlitzRank
        from .ranker import rank_top_m as rank_top_m

    __all__, __getattr__, __dir__ = lazy_exports(
        __name__,
        {"BlitzRank": ".ranker", "rank_top_m": ".ranker"},
        submodules=["baselines"],
    )

``from icml26.blitzrank import BlitzRank`` then imports ``icml26.blitzrank.ranker`` on first
use and caches ``BlitzRank`` in the package's namespace; ``icml26.blitzrank.__version__`` is
the installed distribution's version. (``import X as X`` in the ``TYPE_CHECKING`` block marks
the name as a re-export for strict checkers, which cannot read ``__all__`` from a call.)

The pitfall this prevents: an exported name equal to a submodule's name (a ``rollout``
function in ``rollout.py``). Importing a submodule binds it as an attribute of its package,
so once ``icml26.rmft.rollout`` is imported, by anyone, ``from icml26.rmft import rollout``
returns the module instead of the function. :func:`lazy_exports` refuses such a name when
the package is defined; rename the module (``rollouts.py``). A submodule meant to be public
as a module (a ``baselines/`` subpackage, a namespace of functions) goes in ``submodules``.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

__all__ = ["UNKNOWN_VERSION", "distribution_name", "lazy_exports"]

#: ``__version__`` of a package whose distribution is not installed (run from a source tree).
UNKNOWN_VERSION = "0+unknown"


def distribution_name(module_name: str) -> str:
    """The distribution name this workspace gives a package: ``icml26.ro_hnn`` -> ``icml26-ro-hnn``.

    Args:
        module_name: the package's import name.

    Returns:
        The name with dots and underscores replaced by hyphens.
    """
    return module_name.replace(".", "-").replace("_", "-")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


def lazy_exports(
    module_name: str,
    exports: Mapping[str, str],
    *,
    submodules: Iterable[str] = (),
    distribution: str | None = None,
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for a package that imports its API lazily.

    Call it from the package's ``__init__`` with ``__name__`` and assign the three results
    (see the module docstring for the whole pattern, type-checker imports included)::

        __all__, __getattr__, __dir__ = lazy_exports(__name__, {"rollout": ".rollouts"})

    Nothing is imported here. On first access of an exported name, ``__getattr__`` imports
    the submodule that defines it, takes the object and caches it in the package's
    namespace, so later lookups are plain attribute reads. ``__version__`` (not part of
    ``__all__``) is resolved the same way, from the installed distribution's metadata.

    Args:
        module_name: the package's ``__name__``; the package must be in ``sys.modules``
            (it is, while its ``__init__`` runs).
        exports: public name -> the module that defines an object of that name, relative to
            the package (``".ranker"``, ``".oracles.llm"``) or absolute
            (``"icml26.shared.seeding"``).
        submodules: submodules of the package that are public as modules
            (``from icml26.blitzrank import baselines``), imported on first access.
        distribution: the distribution whose version is ``__version__``; by default
            :func:`distribution_name` of ``module_name`` (``icml26.rmft`` -> ``icml26-rmft``).
            A distribution that is not installed gives :data:`UNKNOWN_VERSION`.

    Returns:
        ``(__all__, __getattr__, __dir__)``: the sorted public names (``exports`` and
        ``submodules``); the module-level ``__getattr__`` that imports them, raising
        ``AttributeError`` for any other name as Python does; and a ``__dir__`` listing the
        package's namespace plus every public name and ``__version__``.

    Raises:
        ValueError: ``module_name`` is not an imported module; an exported name is not an
            identifier, is ``__version__``, is listed twice, or equals the name of one of the
            package's submodules (that submodule, once imported, would shadow the object:
            rename the module, or list it in ``submodules`` to export the module itself); a
            ``submodules`` entry is not a submodule of the package; or a module path without
            a leading dot names one of the package's submodules (write ``".name"``).
    """
    package = sys.modules.get(module_name)
    if package is None:
        raise ValueError(
            f"lazy_exports({module_name!r}, ...): no such module is being imported; call it "
            "from the package's __init__ as lazy_exports(__name__, {...})"
        )
    own = {info.name: info.ispkg for info in pkgutil.iter_modules(getattr(package, "__path__", []))}
    submodules = tuple(submodules)
    targets: dict[str, str] = {}
    for name, target in exports.items():
        if not name.isidentifier() or name == "__version__":
            raise ValueError(
                f"{module_name}: cannot export {name!r} (an identifier, not __version__)"
            )
        if name in own:
            kind = "subpackage" if own[name] else "submodule"
            raise ValueError(
                f"{module_name} exports {name!r} from {target!r}, but {module_name}.{name} is a "
                f"{kind}: once it is imported, `from {module_name} import {name}` returns the "
                f"module, not the object. Rename the {kind} (e.g. {name}s), or, to export the "
                f"module itself, pass submodules=[{name!r}] instead"
            )
        if not target.startswith(".") and target in own:
            raise ValueError(
                f"{module_name} exports {name!r} from the top-level module {target!r}; "
                f"the submodule is written {'.' + target!r}"
            )
        targets[name] = importlib.util.resolve_name(target, module_name)
    for name in submodules:
        if name not in own:
            known = ", ".join(sorted(own)) or "none"
            raise ValueError(
                f"{module_name}: submodules lists {name!r}, which is not one of its submodules "
                f"({known})"
            )
        if name in targets:
            raise ValueError(f"{module_name}: {name!r} is both in exports and in submodules")
        targets[name] = f"{module_name}.{name}"
    public = sorted(targets)
    dist = distribution or distribution_name(module_name)

    def __getattr__(name: str) -> Any:
        if name == "__version__":
            value: Any = _version(dist)
        elif name in submodules:
            value = importlib.import_module(targets[name])
        elif name in targets:
            source = importlib.import_module(targets[name])
            try:
                value = getattr(source, name)
            except AttributeError:
                raise AttributeError(
                    f"module {module_name!r} exports {name!r} from {targets[name]!r}, "
                    f"which does not define it",
                    name=name,
                    obj=package,
                ) from None
        else:
            raise AttributeError(
                f"module {module_name!r} has no attribute {name!r}", name=name, obj=package
            )
        setattr(package, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(package), *public, "__version__"})

    return public, __getattr__, __dir__
