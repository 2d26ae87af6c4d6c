"""Per-conversation labels (planted truth or a classifier's output) in one array record."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.disempowerment.taxonomy import AMPLIFIERS, DIMENSIONS, DOMAIN_LABELS, SEVERITIES

__all__ = ["Labels", "macro_f1"]


@dataclass
class Labels:
    """Labels of ``n`` conversations.

    Attributes:
        severity: ``(n, 3)`` severity index (0..3) per dimension, order of :data:`DIMENSIONS`.
        amplifiers: ``(n, 4)`` bool, order of :data:`AMPLIFIERS`.
        domain: ``(n,)`` domain index, order of :data:`DOMAIN_LABELS` (the six domains, then
            ``other`` = 6 for a conversation outside them).
    """

    severity: np.ndarray
    amplifiers: np.ndarray
    domain: np.ndarray

    def __post_init__(self) -> None:
        self.severity = np.asarray(self.severity, dtype=np.int8)
        self.amplifiers = np.asarray(self.amplifiers, dtype=bool)
        self.domain = np.asarray(self.domain, dtype=np.int8)
        n = len(self.domain)
        if self.severity.shape != (n, len(DIMENSIONS)):
            raise ValueError(f"severity must have shape ({n}, {len(DIMENSIONS)})")
        if self.amplifiers.shape != (n, len(AMPLIFIERS)):
            raise ValueError(f"amplifiers must have shape ({n}, {len(AMPLIFIERS)})")
        if n and (self.severity.min() < 0 or self.severity.max() >= len(SEVERITIES)):
            raise ValueError("severity indices must lie in 0..3")
        if n and (self.domain.min() < 0 or self.domain.max() >= len(DOMAIN_LABELS)):
            raise ValueError(
                f"domain indices must lie in 0..{len(DOMAIN_LABELS) - 1} ({DOMAIN_LABELS})"
            )

    def __len__(self) -> int:
        return len(self.domain)

    @property
    def any_severity(self) -> np.ndarray:
        """Highest severity over the three dimensions."""
        return self.severity.max(axis=1)

    def variable(self, name: str) -> np.ndarray:
        """Severity index of a dimension, or of ``any``."""
        if name == "any":
            return self.any_severity
        return self.severity[:, DIMENSIONS.index(name)]

    def subset(self, rows: np.ndarray) -> Labels:
        return Labels(self.severity[rows], self.amplifiers[rows], self.domain[rows])

    @staticmethod
    def concat(parts: list[Labels]) -> Labels:
        if not parts:
            return Labels(np.zeros((0, 3), np.int8), np.zeros((0, 4), bool), np.zeros(0, np.int8))
        return Labels(
            np.concatenate([p.severity for p in parts]),
            np.concatenate([p.amplifiers for p in parts]),
            np.concatenate([p.domain for p in parts]),
        )


def macro_f1(truth: np.ndarray, pred: np.ndarray, n_classes: int) -> float:
    """Unweighted mean over classes of F1 (a class absent from truth and prediction is skipped)."""
    scores = []
    for c in range(n_classes):
        tp = int(np.sum((truth == c) & (pred == c)))
        fp = int(np.sum((truth != c) & (pred == c)))
        fn = int(np.sum((truth == c) & (pred != c)))
        if tp + fp + fn == 0:
            continue
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")
