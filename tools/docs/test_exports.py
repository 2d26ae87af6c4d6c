"""The docstring rule of ``tools/docs/exports.py`` on a small package: it flags what it should."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exports import method_problems, problems, undocumented_methods
from griffe_comments import CommentDocstrings

SOURCE = '''
"""A package."""

from dataclasses import dataclass

LIMIT = 3
"""A documented constant."""

#: A constant documented by its comment.
OTHER = 4

BARE = 5


def good(x: int, *, y: float = 1.0) -> float:
    """Scale.

    Args:
        x: the value.
        y: the factor.

    Returns:
        ``x * y``.
    """
    return x * y


def no_returns(x: int) -> int:
    """Half.

    Args:
        x: the value.
    """
    return x // 2


def grouped(a: int, b: int) -> None:
    """Nothing.

    Args:
        a, b: two values (Google style has no grouped names).
    """


def returns_none(x: int) -> None:
    """Print.

    Args:
        x: the value.
    """


@dataclass
class Config:
    """Settings: ``width`` and ``depth`` of the model.

    Attributes:
        lr: the learning rate.
    """

    width: int = 4
    depth: int = 2
    lr: float = 1e-3
    seed: int = 0  # the seed
    steps: int = 10


class Plain:
    """A class.

    Args:
        a: documented.
    """

    def __init__(self, a: int, b: int) -> None:
        self.a, self.b = a, b

    def shown(self) -> int:
        """Documented."""
        return self.a

    def bare(self) -> int:
        return self.b

    def _private(self) -> None:
        pass


class Child(Plain):
    """Inherits ``bare`` from a class of the package."""

    def own(self) -> None:
        pass
'''


def _load(tmp_path: Path) -> griffe.Module:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(textwrap.dedent(SOURCE))
    loader = griffe.GriffeLoader(
        search_paths=[str(tmp_path)],
        extensions=griffe.load_extensions(CommentDocstrings),
        docstring_parser=griffe.Parser.google,
        allow_inspection=False,
    )
    return loader.load("pkg")


def test_the_rule_flags_what_it_should(tmp_path: Path) -> None:
    pkg = _load(tmp_path)
    assert problems(pkg["good"]) == []
    assert problems(pkg["returns_none"]) == []
    assert problems(pkg["no_returns"]) == ["no Returns"]
    assert problems(pkg["grouped"]) == ["Args missing a, b"]
    assert problems(pkg["LIMIT"]) == []
    assert problems(pkg["OTHER"]) == []  # the #: comment is its docstring
    assert problems(pkg["BARE"]) == ["no docstring"]
    # width, depth named in the text; lr in Attributes; seed by its trailing comment
    assert problems(pkg["Config"]) == ["constructor args missing steps"]
    assert problems(pkg["Plain"]) == ["constructor args missing b"]


def test_public_methods_without_a_docstring_are_listed(tmp_path: Path) -> None:
    pkg = _load(tmp_path)
    assert undocumented_methods(pkg["Plain"], prefix="pkg.") == ["pkg.Plain.bare"]
    assert undocumented_methods(pkg["Child"], prefix="pkg.") == ["pkg.Plain.bare", "pkg.Child.own"]
    # Methods of classes outside the prefix (a library's) are not ours to document.
    assert undocumented_methods(pkg["Child"], prefix="other.") == []


def test_the_method_allow_list_only_shrinks() -> None:
    errors, allowed = method_problems({"a.B.c", "a.B.d"}, {"a.B.c", "a.B.gone"})
    assert allowed == ["a.B.c"]
    assert errors == [
        "a.B.d: public method without a docstring",
        "a.B.gone: listed in undocumented_methods.txt but documented or gone: remove the line",
    ]
