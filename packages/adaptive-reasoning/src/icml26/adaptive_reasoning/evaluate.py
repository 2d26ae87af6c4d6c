"""Scoring methods on the splits: accuracy (with intervals), think rate, tokens, per-ops rates.

Every method answers the *same* problems of every split (greedy decoding), so differences
between methods are paired: :func:`paired_difference` gives the mean difference of two
methods' per-item correctness and its normal-approximation 95% interval, the figure the
"within 2 points of always-think" claim is decided on. :func:`wilson_interval` is the 95%
interval of one accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from icml26.adaptive_reasoning.modes import Mode
from icml26.adaptive_reasoning.policy import Policy, Reply
from icml26.adaptive_reasoning.tasks import Problem

__all__ = ["MethodScores", "evaluate_method", "paired_difference", "wilson_interval"]

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``(0, 1)`` for ``n == 0``)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(
    a: Sequence[float], b: Sequence[float], z: float = Z95
) -> tuple[float, float, float]:
    """``mean(a - b)`` and its 95% interval (normal approximation on the paired differences)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if len(d) == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0
    return mean, mean - z * se, mean + z * se


@dataclass
class MethodScores:
    """One method on one split: per-item correctness, mode, tokens and operation counts."""

    correct: list[float]
    think: list[float]
    tokens: list[int]
    ops: list[int]

    def summary(self) -> dict[str, float]:
        n = len(self.correct)
        lo, hi = wilson_interval(int(sum(self.correct)), n)
        return {
            "accuracy": float(np.mean(self.correct)) if n else float("nan"),
            "accuracy_lo": lo,
            "accuracy_hi": hi,
            "think_rate": float(np.mean(self.think)) if n else float("nan"),
            "tokens": float(np.mean(self.tokens)) if n else float("nan"),
            "n": n,
        }


def evaluate_method(
    policy: Policy,
    splits: Mapping[str, Sequence[Problem]],
    choose: Callable[[Sequence[Problem]], Sequence[Mode | None]] | None = None,
    *,
    max_new_tokens: int = 48,
    batch_size: int = 256,
) -> dict[str, MethodScores]:
    """Greedy replies of ``policy`` on every split; ``choose`` forces a mode per problem
    (``None``: the model chooses)."""
    out: dict[str, MethodScores] = {}
    for split, problems in splits.items():
        force = list(choose(problems)) if choose is not None else None
        replies: list[Reply] = policy.generate(
            problems, force=force, max_new_tokens=max_new_tokens, batch_size=batch_size
        )
        out[split] = MethodScores(
            correct=[float(r.answer == p.answer) for r, p in zip(replies, problems, strict=True)],
            think=[float(r.mode == "think") for r in replies],
            tokens=[r.tokens for r in replies],
            ops=[p.ops for p in problems],
        )
    return out
