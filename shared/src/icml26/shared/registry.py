"""Discovery of installed paper packages through the ``icml26.papers`` entry points.

``ICML26_EXTRA_PAPERS="pkg.module:ATTR,..."`` adds papers that are importable but not
installed as distributions (a package under development, a test's fake paper).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from importlib import metadata

from icml26.shared.paper import Paper

__all__ = ["ENTRY_POINT_GROUP", "InstalledPaper", "UnknownPaperError", "find", "installed"]

ENTRY_POINT_GROUP = "icml26.papers"
EXTRA_ENV = "ICML26_EXTRA_PAPERS"


class UnknownPaperError(LookupError):
    """No installed paper has that slug."""


@dataclass(frozen=True)
class InstalledPaper:
    """An entry point not yet loaded: loading imports the paper's light module."""

    slug: str
    target: str
    distribution: str
    version: str

    def load(self) -> Paper:
        module_name, _, attr = self.target.partition(":")
        obj = getattr(importlib.import_module(module_name), attr)
        if not isinstance(obj, Paper):
            raise TypeError(f"{self.target} is a {type(obj).__name__}, not an icml26 Paper")
        if obj.slug != self.slug:
            raise ValueError(f"entry point {self.slug!r} points at a paper with slug {obj.slug!r}")
        return obj


def installed() -> dict[str, InstalledPaper]:
    """All papers visible to this interpreter, by slug (sorted)."""
    found: dict[str, InstalledPaper] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        found[ep.name] = InstalledPaper(
            slug=ep.name,
            target=ep.value,
            distribution=dist.metadata["Name"] if dist else "?",
            version=dist.version if dist else "0+unknown",
        )
    for target in filter(None, (t.strip() for t in os.environ.get(EXTRA_ENV, "").split(","))):
        module_name, _, attr = target.partition(":")
        paper = getattr(importlib.import_module(module_name), attr)
        version = getattr(importlib.import_module(module_name), "__version__", "0+local")
        found[paper.slug] = InstalledPaper(paper.slug, target, module_name, str(version))
    return dict(sorted(found.items()))


def find(slug: str) -> InstalledPaper:
    """The installed paper ``slug``, or :class:`UnknownPaperError` listing what is installed."""
    papers = installed()
    if slug not in papers:
        known = ", ".join(papers) or "none"
        raise UnknownPaperError(f"unknown paper {slug!r}; installed papers: {known}")
    return papers[slug]
