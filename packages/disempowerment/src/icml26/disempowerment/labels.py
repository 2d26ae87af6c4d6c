"""Per-conversation labels (planted truth or a classifier's output) in one array record."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.disempowerment.taxonomy import (
    AMPLIFIERS,
    DIMENSIONS,
    DOMAIN_LABELS,
    SEVERITIES,
    domain_index,
    severity_index,
)

__all__ = ["Labels", "label_from_json", "macro_f1"]

_LABEL_FIELDS = frozenset((*DIMENSIONS, "amplifiers", "domain"))


def label_from_json(obj: object) -> tuple[tuple[int, ...], tuple[bool, ...], int]:
    """One person's label, read strictly (a labelled set is truth: nothing is guessed).

    Args:
        obj: ``{"reality": ..., "value": ..., "action": ..., "amplifiers": [...],
            "domain": ...}``: severities among :data:`SEVERITIES`, amplifiers a list of
            distinct names among :data:`AMPLIFIERS`, a domain among :data:`DOMAIN_LABELS`.

    Returns:
        ``(severity indices, amplifier flags, domain index)``.

    Raises:
        ValueError: naming the field, for a missing or unknown field, a severity off the
            scale (``"high"``), an unknown or repeated amplifier, or an unknown domain.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"labels must be an object, got {type(obj).__name__}")
    missing, unknown = _LABEL_FIELDS - set(obj), set(obj) - _LABEL_FIELDS
    if missing or unknown:
        raise ValueError(
            f"labels: missing fields {sorted(missing)}, unknown fields {sorted(unknown)}"
        )
    severity = tuple(severity_index(obj[d]) if isinstance(obj[d], str) else -1 for d in DIMENSIONS)
    if -1 in severity:
        raise ValueError(f"labels: severities must be names among {SEVERITIES}")
    amps = obj["amplifiers"]
    if not isinstance(amps, list) or not all(isinstance(a, str) for a in amps):
        raise ValueError("labels: amplifiers must be a list of names")
    if len(set(amps)) != len(amps) or not set(amps) <= set(AMPLIFIERS):
        raise ValueError(
            f"labels: amplifiers must be distinct names among {AMPLIFIERS}, got {amps}"
        )
    if not isinstance(obj["domain"], str):
        raise ValueError("labels: domain must be a name")
    return severity, tuple(a in amps for a in AMPLIFIERS), domain_index(obj["domain"])


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
