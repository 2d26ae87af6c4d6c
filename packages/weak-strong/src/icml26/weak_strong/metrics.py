"""The paper's evaluation metrics and the two properties of a weak verifier it singles out.

Decisions on a stream of items with correctness ``H_t`` (the strong verifier's verdict):

* **incorrect acceptance rate** ``P(accept | H = 0)``: the share of wrong answers let through;
* **incorrect rejection rate** ``P(reject | H = 1)``: the share of right answers thrown away;
* **strong-verification frequency** ``P(query strong)``: the cost;
* **final accuracy** ``P(verdict = H)``: the share of items whose final verdict is right.

The two error rates are conditional on the truth (type-I/type-II style), which is the
normalisation the online algorithm controls (targets ``alpha`` and ``beta``).

Weak-verifier quality:

* **calibration** (expected calibration error, ECE): ``E|E[H | S] - S|`` estimated with bins;
* **sharpness**: ``Var(S)``, how far scores spread from their mean (for a calibrated verifier
  this equals the resolution ``Var(E[H | S])`` of the Murphy decomposition, reported too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26.weak_strong._validate import check_labels, check_scores, check_stream

__all__ = [
    "ErrorRates",
    "error_rates",
    "expected_calibration_error",
    "reliability_curve",
    "resolution",
    "running_error_rates",
    "sharpness",
]


@dataclass(frozen=True)
class ErrorRates:
    """The four headline metrics of a policy on a stream (see the module docstring)."""

    incorrect_accept: float
    incorrect_reject: float
    strong_freq: float
    final_accuracy: float

    def as_dict(self) -> dict[str, float]:
        return {
            "incorrect_accept": self.incorrect_accept,
            "incorrect_reject": self.incorrect_reject,
            "strong_freq": self.strong_freq,
            "final_accuracy": self.final_accuracy,
        }


def _decisions(accepted: Any, labels: Any, queried: Any) -> tuple[NDArray[np.bool_], ...]:
    acc = check_labels(accepted, "accepted")
    y = check_labels(labels, "labels")
    q = check_labels(queried, "queried")
    if not (acc.shape == y.shape == q.shape):
        raise ValueError(
            f"accepted, labels and queried must have one length, got {acc.shape[0]}, "
            f"{y.shape[0]}, {q.shape[0]}"
        )
    return acc, y, q


def error_rates(accepted: Any, labels: Any, queried: Any) -> ErrorRates:
    """Metrics of final verdicts ``accepted`` against truths ``labels``.

    A rate whose conditioning event never happens (no incorrect item, say) is 0: no error of
    that kind could be made.

    Args:
        accepted: final verdict per item (accepted or not).
        labels: the truth per item (booleans or 0/1).
        queried: whether the strong verifier was asked, per item.

    Returns:
        :class:`ErrorRates`: incorrect acceptance ``P(accept | wrong)``, incorrect rejection
        ``P(reject | right)``, strong-call frequency and final accuracy.

    Raises:
        ValueError: arrays of different lengths, non-boolean labels, an empty stream.
    """
    acc, y, q = _decisions(accepted, labels, queried)
    if acc.size == 0:
        raise ValueError("an empty stream has no error rates")
    n0, n1 = int((~y).sum()), int(y.sum())
    ia = float((acc & ~y).sum() / n0) if n0 else 0.0
    ir = float((~acc & y).sum() / n1) if n1 else 0.0
    return ErrorRates(
        incorrect_accept=ia,
        incorrect_reject=ir,
        strong_freq=float(q.mean()),
        final_accuracy=float((acc == y).mean()),
    )


def running_error_rates(accepted: Any, labels: Any, queried: Any) -> dict[str, NDArray[np.float64]]:
    """The same metrics after each prefix ``1..t`` of the stream (arrays of length ``T``)."""
    acc, y, q = _decisions(accepted, labels, queried)
    t = np.arange(1, acc.size + 1)
    n0 = np.maximum(np.cumsum(~y), 1)
    n1 = np.maximum(np.cumsum(y), 1)
    return {
        "incorrect_accept": np.cumsum(acc & ~y) / n0,
        "incorrect_reject": np.cumsum(~acc & y) / n1,
        "strong_freq": np.cumsum(q) / t,
        "final_accuracy": np.cumsum(acc == y) / t,
    }


def _bin_index(scores: NDArray[np.float64], bins: int, strategy: str) -> NDArray[np.intp]:
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, bins + 1)
    elif strategy == "quantile":
        edges = np.quantile(scores, np.linspace(0.0, 1.0, bins + 1))
        edges[0], edges[-1] = 0.0, 1.0
    else:
        raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    # Right-closed bins (a, b], the first one closed: a score of exactly 1 lands in the top bin.
    idx = np.searchsorted(edges[1:-1], scores, side="left")
    return np.asarray(idx, dtype=np.intp)


def reliability_curve(
    scores: Any, labels: Any, *, bins: int = 15, strategy: str = "uniform"
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Per non-empty bin: mean score, empirical accuracy, count (a reliability diagram)."""
    s, y = check_stream(scores, labels)
    if s.size == 0:
        raise ValueError("an empty stream has no reliability curve")
    idx = _bin_index(s, bins, strategy)
    counts = np.bincount(idx, minlength=bins)
    mean_s = np.bincount(idx, weights=s, minlength=bins)
    mean_y = np.bincount(idx, weights=y.astype(np.float64), minlength=bins)
    keep = counts > 0
    return mean_s[keep] / counts[keep], mean_y[keep] / counts[keep], counts[keep]


def expected_calibration_error(
    scores: Any, labels: Any, *, bins: int = 15, strategy: str = "uniform"
) -> float:
    """Binned ECE: ``sum_b (n_b / n) |acc_b - conf_b|`` (0 for a perfectly calibrated verifier)."""
    conf, acc, counts = reliability_curve(scores, labels, bins=bins, strategy=strategy)
    return float(np.sum(counts * np.abs(acc - conf)) / counts.sum())


def sharpness(scores: Any) -> float:
    """``Var(S)``: 0 for a constant score, ``pi (1 - pi)`` for scores that are 0/1 labels."""
    s = check_scores(scores)
    if s.size == 0:
        raise ValueError("sharpness needs at least one score")
    return float(s.var())


def resolution(scores: Any, labels: Any, *, bins: int = 15, strategy: str = "uniform") -> float:
    """Binned ``Var(E[H | S])``: how much the score's level changes the chance of correctness."""
    _, acc, counts = reliability_curve(scores, labels, bins=bins, strategy=strategy)
    w = counts / counts.sum()
    base = float(np.sum(w * acc))
    return float(np.sum(w * (acc - base) ** 2))
