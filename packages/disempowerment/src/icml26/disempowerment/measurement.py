"""The method on a log, in one call: scrub, classify, calibrate on an audit set, release.

:func:`measure` takes a log, any classifier (``predict(texts) -> Labels``: the TF-IDF
baseline, the staged classifier, or the rubric judge) and a labelled audit set; it scrubs
both, classifies both, estimates the classifier's confusion matrices on the audit set
(importance-weighted when the audit set was enriched) and returns the released figures
(:func:`icml26.disempowerment.analysis.analyse`): corrected rates with intervals, per domain,
the trend, the approval association, under k-anonymity and optional user-level DP.

A judge's replies that stay malformed after repair are left out (of the audit set and of the
log alike) and counted in ``measure.dropped``; they are never read as a category.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.disempowerment.analysis import (
    AnalysisInputs,
    AnalysisResult,
    Calibration,
    analyse,
    calibration_from_labels,
)
from icml26.disempowerment.conversations import Conversation
from icml26.disempowerment.datasets import LabelledConversations
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.privacy import DEFAULT_K
from icml26.disempowerment.scrub import Scrubber
from icml26.shared import rng_for

__all__ = [
    "IntervalSettings",
    "Measurement",
    "PrivacySettings",
    "classify",
    "log_inputs",
    "measure",
    "month_number",
]


@dataclass(frozen=True)
class PrivacySettings:
    """What may be released.

    Attributes:
        k: minimum distinct users per released group.
        epsilon: total user-level DP budget (``None``: no noise, k-anonymity only).
        cap: conversations counted per user under DP (the sensitivity).
        first_month: the month window's first month, ``"YYYY-MM"`` (``None``: the log's
            first month, which DP does not allow: the window must be public).
        months: the window's length in months (conversations outside it are left out);
            set together with ``first_month``.

    Raises:
        ValueError: ``k < 2``, ``cap < 1``, a non-positive epsilon, a malformed or
            half-given month window, or DP without a month window.
    """

    k: int = DEFAULT_K
    epsilon: float | None = None
    cap: int = 10
    first_month: str | None = None
    months: int | None = None

    def __post_init__(self) -> None:
        if self.k < 2 or self.cap < 1 or (self.epsilon is not None and not self.epsilon > 0):
            raise ValueError("need k >= 2, cap >= 1 and epsilon > 0 (or None)")
        if (self.first_month is None) != (self.months is None):
            raise ValueError("first_month and months are set together (the month window)")
        if self.first_month is not None:
            month_number(self.first_month)
            if self.months is None or self.months < 1:
                raise ValueError(f"months must be at least 1, got {self.months}")
        elif self.epsilon is not None:
            raise ValueError(
                "under DP the month window must be public, not read from the log: set "
                "first_month ('YYYY-MM') and months"
            )


def month_number(text: str) -> int:
    """``"YYYY-MM"`` as a month count (``year * 12 + month - 1``).

    Args:
        text: a month, e.g. ``"2025-01"``.

    Returns:
        The month count.

    Raises:
        ValueError: not ``YYYY-MM`` with a month in 1..12.
    """
    parts = text.split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not 1 <= int(parts[1]) <= 12:
        raise ValueError(f"a month is written 'YYYY-MM', got {text!r}")
    return int(parts[0]) * 12 + int(parts[1]) - 1


@dataclass(frozen=True)
class IntervalSettings:
    """The bootstrap intervals.

    Attributes:
        draws: bootstrap draws.
        level: the intervals' level.
    """

    draws: int = 2000
    level: float = 0.95

    def __post_init__(self) -> None:
        if self.draws < 100 or not 0.5 <= self.level < 1:
            raise ValueError("need draws >= 100 and level in [0.5, 1)")


@dataclass
class Measurement:
    """What :func:`measure` returns.

    Attributes:
        metrics: the released figures (keys as in :mod:`icml26.disempowerment.analysis`).
        calibration: the classifier's confusion counts on the audit set.
        predictions: the classifier's labels of the (kept) log conversations.
        result: the full analysis result (monthly series, suppressed groups).
        audit_predictions: the classifier's labels of the (kept) audit conversations.
        audit_rows: the indices of the kept audit conversations.
        dropped: ``{"audit": n, "log": n}`` rows left out as malformed judge replies.
    """

    metrics: dict[str, float]
    calibration: Calibration
    predictions: Labels
    result: AnalysisResult
    audit_predictions: Labels
    audit_rows: np.ndarray
    dropped: dict[str, int] = field(default_factory=dict)


def classify(
    classifier: Any, conversations: Sequence[Conversation], scrubber: Scrubber | None
) -> tuple[Labels, np.ndarray]:
    """Scrub and classify conversations.

    Args:
        classifier: anything with ``predict(texts) -> Labels``; one with ``judge(texts)``
            (the rubric judge) also reports which replies were well formed.
        conversations: the conversations.
        scrubber: the PII scrubber (``None``: texts as they are, for PII-free text).

    Returns:
        ``(labels, ok)``: ``ok`` is False for a judge's reply that stayed malformed.
    """
    texts = [c.text() for c in conversations]
    if scrubber is not None:
        texts = [scrubber(t) for t in texts]
    if hasattr(classifier, "judge"):
        out = classifier.judge(texts)
        return out.labels, np.asarray(out.ok, dtype=bool)
    return classifier.predict(texts), np.ones(len(texts), dtype=bool)


def log_inputs(
    conversations: Sequence[Conversation], labels: Labels, first_month: str | None = None
) -> AnalysisInputs:
    """The analysis inputs of a classified log: users, ids, months, feedback (1 up, 0 down,
    -1 none).

    Args:
        conversations: the log.
        labels: their predicted labels.
        first_month: month 0 (``"YYYY-MM"``); ``None``: the log's first month.

    Returns:
        The :class:`AnalysisInputs` (months before ``first_month`` are negative).
    """
    idx = np.array([c.timestamp.year * 12 + c.timestamp.month - 1 for c in conversations])
    start = month_number(first_month) if first_month else (idx.min() if len(idx) else 0)
    return AnalysisInputs(
        pred=labels,
        user_ids=np.array([c.user_id for c in conversations]),
        conv_ids=[c.id for c in conversations],
        month=idx - start,
        feedback=np.array([-1 if c.feedback is None else int(c.feedback) for c in conversations]),
    )


def measure(
    log: Sequence[Conversation],
    classifier: Any,
    audit: LabelledConversations,
    *,
    privacy: PrivacySettings | None = None,
    intervals: IntervalSettings | None = None,
    seed: int = 0,
    scrubber: Scrubber | None = None,
    scrub: bool = True,
    predictions: Labels | None = None,
) -> Measurement:
    """Calibrated, private prevalence figures of a log (see the module docstring).

    Args:
        log: the conversations to measure.
        classifier: ``predict(texts) -> Labels`` (or the rubric judge).
        audit: labelled conversations (truth) to estimate the classifier's errors on; its
            ``weights`` undo an enrichment.
        privacy: k-anonymity and DP settings.
        intervals: bootstrap settings.
        seed: the bootstrap's and the DP noise's seed (its own stream).
        scrubber: the scrubber to use (default: a new :class:`Scrubber`).
        scrub: scrub texts before the classifier sees them (``False`` only for PII-free
            synthetic text).
        predictions: the log's labels when already computed (e.g. by the Ray engine).

    Returns:
        The :class:`Measurement`.

    Raises:
        ValueError: an empty log or audit set, or a log with fewer than ``k`` users.
    """
    if not log or not audit.conversations:
        raise ValueError("measure needs a non-empty log and a non-empty audit set")
    privacy = privacy or PrivacySettings()
    intervals = intervals or IntervalSettings()
    scrubber = (scrubber or Scrubber()) if scrub else None
    a_pred, a_ok = classify(classifier, audit.conversations, scrubber)
    rows = np.nonzero(a_ok)[0]
    weights = None if audit.weights is None else audit.weights[rows]
    calibration = calibration_from_labels(audit.labels.subset(rows), a_pred.subset(rows), weights)
    if predictions is None:
        predictions, ok = classify(classifier, log, scrubber)
    else:
        ok = np.ones(len(log), dtype=bool)
    keep = np.nonzero(ok)[0]
    kept = [log[i] for i in keep]
    predictions = predictions.subset(keep)
    result = analyse(
        log_inputs(kept, predictions, privacy.first_month),
        calibration,
        k=privacy.k,
        epsilon=privacy.epsilon,
        cap=privacy.cap,
        draws=intervals.draws,
        level=intervals.level,
        rng=rng_for(seed, "bootstrap"),
        n_months=privacy.months,
    )
    dropped = {"audit": int((~a_ok).sum()), "log": int((~ok).sum())}
    return Measurement(
        result.metrics, calibration, predictions, result, a_pred.subset(rows), rows, dropped
    )
