"""The job's input check (``Paper.inputs``): every file the run will read is loaded and
validated before any stage runs, so a bad file is one clear line, not a traceback after the
population stage and a run folder left behind."""

from __future__ import annotations

from typing import Any

from icml26.weak_strong.streams import load_stream_file
from icml26.weak_strong.tasks.math import check_math_source

__all__ = ["check_inputs"]


def check_inputs(config: Any) -> None:
    """Validate the user's stream file and a math-source file, when the run reads them.

    Args:
        config: a :class:`~icml26.weak_strong.config.RunConfig` (the bench's config reads no
            file and passes).

    Raises:
        FileNotFoundError: a named file is missing.
        ValueError: one line naming the file and the problem.
    """
    streams = getattr(config, "streams", ())
    if "user" in streams:
        load_stream_file(config.stream_file)
    if "math" in streams:
        check_math_source(config.math_source)
