"""Progress bars and log lines that stay quiet where nobody watches (no TTY, CI).

Set ``ICML26_QUIET=1`` to silence bars anywhere, ``ICML26_PROGRESS=1`` to force them.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from typing import Any, TypeVar

__all__ = ["log", "progress", "progress_enabled"]

T = TypeVar("T")


def progress_enabled() -> bool:
    """True when progress bars should be drawn: stderr is a TTY and we are not under CI."""
    if os.environ.get("ICML26_PROGRESS") == "1":
        return True
    if os.environ.get("ICML26_QUIET") == "1" or os.environ.get("CI"):
        return False
    return sys.stderr.isatty()


def progress(
    iterable: Iterable[T] | None = None,
    *,
    total: int | None = None,
    desc: str | None = None,
    **kwargs: Any,
) -> Any:
    """A ``tqdm`` bar over ``iterable`` that is disabled when :func:`progress_enabled` is false.

    Returns the tqdm object, so ``bar.set_postfix(loss=...)`` and ``bar.update()`` work in
    both modes.
    """
    from tqdm.auto import tqdm

    kwargs.setdefault("disable", not progress_enabled())
    kwargs.setdefault("dynamic_ncols", True)
    kwargs.setdefault("leave", False)
    return tqdm(iterable, total=total, desc=desc, **kwargs)


def log(message: str) -> None:
    """Print one timestamped line to stderr (kept under CI: logs are how CI is read).

    Args:
        message: the line's text.
    """
    if os.environ.get("ICML26_QUIET") == "1":
        return
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
