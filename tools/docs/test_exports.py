"""The docstring rule of ``tools/docs/exports.py`` on a small package: it flags what it should."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exports import problems
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
