"""griffe extension: the ``#`` comment of an attribute is its docstring when it has none.

Our configs and constants are documented by comments (``#: Colour-blind-safe palette ...``
above a constant, ``lr: float = 1e-3  # Adam's step size`` on a dataclass field). This
extension gives such an attribute its comment as the docstring, so the API pages show it and
the docstring check (``tools/docs/exports.py``, which loads with it) counts it. A trailing
comment on the attribute's line wins; otherwise the ``#:`` lines directly above it (a plain
``#`` line above is usually a section header, so it does not count).
"""

from __future__ import annotations

import re
from typing import Any

import griffe


def comment_of(attr: griffe.Object) -> str | None:
    """The comment that documents ``attr`` (trailing, or ``#:`` lines above), or None.

    Args:
        attr: an attribute loaded by griffe from source.

    Returns:
        The comment's text without ``#`` / ``#:``; None when the attribute has none.
    """
    try:
        lines = attr.lines_collection[attr.filepath]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    if not lines or attr.lineno is None:
        return None
    code, hash_, comment = lines[attr.lineno - 1].partition("  #")
    if hash_ and code.strip() and comment.strip():
        return comment.strip().removeprefix(":").strip()
    # Only ``#:`` lines above count: a plain comment above a field is often a section header
    # ("# data") that describes a group, not this field.
    above: list[str] = []
    i = attr.lineno - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        above.insert(0, lines[i].strip().removeprefix("#:").strip())
        i -= 1
    return " ".join(above).strip() or None


class CommentDocstrings(griffe.Extension):
    """Attributes without a docstring get their comment (see the module docstring)."""

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        """Set the docstring of ``attr`` from its comment when it has none.

        Args:
            attr: the attribute griffe just created.
            **kwargs: the other hook arguments (unused).
        """
        if attr.docstring is None or not attr.docstring.value.strip():
            text = comment_of(attr)
            if text:
                attr.docstring = griffe.Docstring(text, parent=attr, lineno=attr.lineno)


_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _role_to_code(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"``{target.rsplit('.', 1)[-1] if tilde else target}``"


class RstRoles(griffe.Extension):
    """Sphinx roles in docstrings (``:func:`~icml26.x.f```) become code spans (``f``): the
    Markdown renderer would print the role's name as text."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite the roles of ``obj``'s docstring.

        Args:
            obj: any object griffe just created.
            **kwargs: the other hook arguments (unused).
        """
        if obj.docstring is not None and ":`" in obj.docstring.value:
            obj.docstring.value = _ROLE.sub(_role_to_code, obj.docstring.value)
