"""Mode choosers that need no training of their own.

* :func:`always`: force one mode on every problem (the bench's always-think on ``ours``'
  weights);
* :class:`LengthRouter`: think when the prompt is longer than a threshold, fitted on the
  natural training mixture (where long prompts are mostly complex): ``length_router``.

The trained baselines (``always_think``, ``never_think``, ``length_penalty``, ``sft_only``,
``no_augmentation``), each trained on its own, are in :mod:`icml26.adaptive_reasoning.methods`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from icml26.adaptive_reasoning.modes import Mode
from icml26.adaptive_reasoning.tasks import Problem

__all__ = ["LengthRouter", "always", "fit_length_router"]


def always(mode: Mode) -> Callable[[Sequence[Problem]], list[Mode | None]]:
    """A chooser forcing ``mode`` on every problem."""

    def choose(problems: Sequence[Problem]) -> list[Mode | None]:
        return [mode] * len(problems)

    return choose


@dataclass(frozen=True)
class LengthRouter:
    """Think iff the prompt has more than ``threshold`` tokens."""

    threshold: float
    length: Callable[[Problem], int]

    def __call__(self, problems: Sequence[Problem]) -> list[Mode | None]:
        return ["think" if self.length(p) > self.threshold else "no_think" for p in problems]


def fit_length_router(
    problems: Sequence[Problem], length: Callable[[Problem], int]
) -> LengthRouter:
    """The threshold (a midpoint between observed lengths) that routes the most problems of
    ``problems`` to their right mode.

    Raises:
        ValueError: no problems.
    """
    if not problems:
        raise ValueError("fit_length_router needs problems")
    lengths = np.array([length(p) for p in problems], dtype=float)
    labels = np.array([p.complex for p in problems])
    values = np.unique(lengths)
    candidates = np.concatenate([[values[0] - 1], (values[:-1] + values[1:]) / 2, [values[-1]]])
    scores = [np.mean((lengths > t) == labels) for t in candidates]
    return LengthRouter(float(candidates[int(np.argmax(scores))]), length)
