"""Atomic file writes: write to a temporary file in the target folder, then rename.

A reader (or a killed run) therefore sees either the old file or the complete new one,
never a half-written one. ``os.replace`` is atomic on POSIX and Windows when source and
target are on the same filesystem, which holds because the temporary file sits beside the
target.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_json", "atomic_write_text"]


@contextmanager
def atomic_path(target: str | os.PathLike[str], *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``target``; move it onto ``target`` on success.

    Use it for writers that want a path rather than a file object (``torch.save``,
    ``np.savez``, ``fig.savefig``). If the block raises, the temporary file is removed and
    ``target`` is left untouched.

    Args:
        target: the final path.
        suffix: suffix for the temporary file (some writers infer the format from it).

    Yields:
        The temporary path, in ``target``'s folder (created if missing).

    Raises:
        FileNotFoundError: the block finished without creating the temporary file.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"the writer did not create {tmp} for {target}")
        if tmp.stat().st_mode & 0o777 == 0o600:  # a writer that re-created the file
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_bytes(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically (fsync before the rename).

    Args:
        target: the file to write (its folder is created if missing).
        data: the bytes.

    Returns:
        ``target`` as a ``Path``.
    """
    with atomic_path(target) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return Path(target)


def atomic_write_text(target: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 ``text`` to ``target`` atomically.

    Args:
        target: the file to write (its folder is created if missing).
        text: the text, encoded as UTF-8.

    Returns:
        ``target`` as a ``Path``.
    """
    return atomic_write_bytes(target, text.encode("utf-8"))


def atomic_write_json(target: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> Path:
    """Write ``obj`` as strict JSON (no NaN or infinity) to ``target`` atomically.

    Serialisation happens before anything touches the disk, so an object that cannot be
    encoded raises without leaving a file behind.

    Args:
        target: the file to write (its folder is created if missing).
        obj: a JSON-serialisable value.
        indent: spaces per indentation level.

    Returns:
        ``target`` as a ``Path``.

    Raises:
        ValueError: ``obj`` holds NaN or an infinity.
        TypeError: ``obj`` holds a value JSON cannot encode.
    """
    text = json.dumps(obj, indent=indent, allow_nan=False, sort_keys=False) + "\n"
    return atomic_write_text(target, text)
