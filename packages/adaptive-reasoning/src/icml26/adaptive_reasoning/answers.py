"""Checking an answer: exact match, or numbers within a tolerance (GSM8K-style data).

A reply's answer is the text after the mode block (:func:`~icml26.adaptive_reasoning.modes.
parse_reply`); :class:`AnswerChecker` compares it with a problem's gold answer. With
``numeric=True`` (default), when both read as numbers (commas, ``$`` and a trailing ``.``
dropped) they match within ``abs_tol`` or ``rel_tol``; otherwise the stripped, case-folded
strings must be equal.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["AnswerChecker", "parse_number"]

_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


def parse_number(text: str) -> float | None:
    """``text`` as a number (``"1,234"``, ``"$5"``, ``"7."`` read), or ``None``."""
    t = text.strip().replace(",", "").lstrip("$").rstrip(".").strip()
    if not _NUMBER.match(t):
        return None
    value = float(t)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class AnswerChecker:
    """Whether a predicted answer matches the gold one.

    Attributes:
        numeric: compare as numbers when both parse as numbers.
        abs_tol, rel_tol: the numeric tolerance (``math.isclose``'s meaning).

    Raises:
        ValueError: a negative or non-finite tolerance.
    """

    numeric: bool = True
    abs_tol: float = 1e-6
    rel_tol: float = 0.0

    def __post_init__(self) -> None:
        for name in ("abs_tol", "rel_tol"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")

    def __call__(self, predicted: str | int | None, gold: str | int) -> bool:
        """``True`` when ``predicted`` matches ``gold`` (``None`` never matches).

        Args:
            predicted: the reply's answer text (or ``None`` when it has none).
            gold: the problem's answer.

        Returns:
            Whether they match.
        """
        if predicted is None:
            return False
        p, g = str(predicted).strip(), str(gold).strip()
        if self.numeric:
            a, b = parse_number(p), parse_number(g)
            if a is not None and b is not None:
                return math.isclose(a, b, abs_tol=self.abs_tol, rel_tol=self.rel_tol)
        return p.casefold() == g.casefold()
