"""A member README's ```python blocks as pytest items, run by sybil (extra ``test``).

The ``icml26`` pytest plugin (:mod:`icml26.shared.pytest_plugin`) hands an opted-in
``README.md`` here; this module imports sybil at the top, so the plugin imports it only when a
README asks for it, and a pip user of the wheel, who has no sybil, never does.

* Blocks run in document order, all in one namespace (a name bound in one block is there in
  the next), each block one test item named ``README.md::line:N,column:M``; a failure points at
  the README's own line.
* The blocks run in a fresh temporary working folder (removed after the last block), so a run
  folder or a plot an example writes leaves nothing in the package; ``__name__`` is
  ``"__main__"``, as in the script a reader would paste the blocks into.
* ``<!-- skip: next "why" -->`` skips the next block with that reason shown by pytest (see
  :data:`SKIP_HELP`); a skip without a reason is a collection error, since sybil would
  otherwise count the skipped block as passed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sybil import Document, Region, Sybil
from sybil.integration.pytest import SybilFile, SybilItem
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

__all__ = ["SKIP_HELP", "ReadmeFile", "ReadmeItem", "collect_readme", "readme_sybil"]

#: How to skip a block, as the error for a skip without a reason shows it.
SKIP_HELP = (
    'give the reason as a Python string: <!-- skip: next "needs a CUDA GPU" -->, or a '
    'condition: <!-- skip: next if(not HAS_GPU, reason="needs a CUDA GPU") --> '
    "(evaluated in the README's namespace); skip: start ... skip: end for several blocks"
)


class _SkipsWithReasons:
    """Sybil's Markdown skip parser, refusing ``skip: next`` / ``skip: start`` without a reason
    (sybil evaluates such a block as a silent pass, so the README would claim it ran)."""

    def __init__(self) -> None:
        self.parser = SkipParser()

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.parser(document):
            action, reason = region.parsed
            if action in ("start", "next") and not (reason or "").strip():
                line = document.text.count("\n", 0, region.start) + 1
                raise ValueError(f"line {line}: `skip: {action}` without a reason; {SKIP_HELP}")
            yield region


def readme_sybil(readme: Path) -> Sybil:
    """The sybil for one README: its ```python blocks, in order, and its skip directives."""
    return Sybil(
        parsers=[PythonCodeBlockParser(), _SkipsWithReasons()],
        filenames=[readme.name],
        path=str(readme.parent.resolve()),
        setup=lambda namespace: namespace.update(__name__="__main__"),
        name="",
    )


class ReadmeItem(SybilItem):
    """One block: a skip is reported at the README's line, a failure with a short traceback
    (pytest would otherwise print the README from its first line down to the failing one)."""

    def runtest(self) -> None:
        try:
            super().runtest()
        except unittest.SkipTest as exc:
            raise pytest.skip.Exception(str(exc), _use_item_location=True) from None

    def _traceback_filter(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        # sybil's filter starts the traceback at its evaluators; drop those hidden frames too.
        return super()._traceback_filter(excinfo).filter(excinfo)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if style is None and self.config.getoption("tbstyle", "auto") == "auto":
            style = "short"
        return super().repr_failure(excinfo, style)


class ReadmeFile(SybilFile):
    """The README as a pytest file: its blocks as items, run in a temporary working folder."""

    _cwd: str | None = None
    _tmp: str | None = None

    def collect(self) -> Iterator[ReadmeItem]:
        # SybilFile.collect, with our items and a malformed directive as a plain error.
        for sybil in self.sybils:
            try:
                document = sybil.parse(self.path)
            except ValueError as exc:
                raise self.CollectError(f"{self.path}: {exc}") from exc
            self.documents.append(document)
            for example in document.examples():
                yield ReadmeItem.from_parent(self, sybil=sybil, example=example)

    def setup(self) -> None:
        self._cwd = os.getcwd()
        self._tmp = tempfile.mkdtemp(prefix="icml26-readme-")
        os.chdir(self._tmp)
        super().setup()

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            if self._cwd is not None:
                os.chdir(self._cwd)
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
            self._cwd = self._tmp = None


def collect_readme(file_path: Path, parent: pytest.Collector) -> ReadmeFile:
    """The pytest collector for an opted-in ``README.md``."""
    return ReadmeFile.from_parent(parent, path=file_path, sybils=[readme_sybil(file_path)])
