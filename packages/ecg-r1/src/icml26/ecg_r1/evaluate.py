"""The issue's metrics from interpretations (texts) per method and condition.

* ``diagnosis_jaccard.<cond>.<method>``: mean Jaccard of predicted and true label sets;
* ``macro_f1.<cond>.<method>``: F1 per label, averaged over the labels present in the test
  set (scikit-learn);
* ``evidence_accuracy.<method>``: mean evidence score (share of protocol steps whose cited
  features agree with the simulator's true ones), condition ``both``;
* ``hallucination_rate.<method>``: contradicting statements / statements, condition ``both``;
* ``cross_modal_consistency.<method>``: mean Jaccard between the label sets the method gives
  from the signal alone and from the image alone;
* ``truncation_rate.<method>``: share of its outputs (all conditions) that do not stop right
  after ``</answer>`` within the generation cap: cut at the cap (the usual case: the decoder
  loops until it, with or without a ``</answer>`` on the way) or ended by EOS before closing.
  The texts are cut at EOS, so the two are not told apart; either way the answer is
  unfinished.

:func:`paired_z` gives the paired z statistic over test records (mean difference / its
standard error) that the claims use as their margin beyond noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from icml26.ecg_r1.labels import LABELS, Features, jaccard, labels_from_features
from icml26.ecg_r1.protocol import evidence_score, hallucinations, parse_interpretation

__all__ = ["MethodScores", "paired_z", "score_method"]


class MethodScores:
    """Per-record scores of one method (per condition), and their summaries."""

    def __init__(self, texts: Mapping[str, Sequence[str]], truths: Sequence[Features]) -> None:
        self.texts = {c: list(t) for c, t in texts.items()}
        self.truths = list(truths)
        self.true_labels = [labels_from_features(f) for f in truths]
        self.parsed = {c: [parse_interpretation(x) for x in t] for c, t in self.texts.items()}
        self.unfinished = {
            c: np.array([float(not x.rstrip().endswith("</answer>")) for x in t])
            for c, t in self.texts.items()
        }
        self.jaccard = {
            c: np.array([jaccard(p.labels, y) for p, y in zip(ps, self.true_labels, strict=True)])
            for c, ps in self.parsed.items()
        }
        both = self.parsed.get("both") or next(iter(self.parsed.values()))
        self.evidence = np.array([evidence_score(p, f) for p, f in zip(both, truths, strict=True)])
        counts = [hallucinations(p, f) for p, f in zip(both, truths, strict=True)]
        self.halluc_bad = np.array([b for b, _ in counts], dtype=float)
        self.halluc_total = np.array([t for _, t in counts], dtype=float)
        if "signal_only" in self.parsed and "image_only" in self.parsed:
            self.consistency: np.ndarray | None = np.array(
                [
                    jaccard(a.labels, b.labels)
                    for a, b in zip(
                        self.parsed["signal_only"], self.parsed["image_only"], strict=True
                    )
                ]
            )
        else:
            self.consistency = None

    def macro_f1(self, cond: str) -> float:
        from sklearn.metrics import f1_score

        y = np.array([[lab in s for lab in LABELS] for s in self.true_labels])
        p = np.array([[lab in q.labels for lab in LABELS] for q in self.parsed[cond]])
        present = y.any(axis=0)
        return float(f1_score(y[:, present], p[:, present], average="macro", zero_division=0))

    def metrics(self, method: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for c in self.parsed:
            out[f"diagnosis_jaccard.{c}.{method}"] = float(self.jaccard[c].mean())
            out[f"macro_f1.{c}.{method}"] = self.macro_f1(c)
        out[f"evidence_accuracy.{method}"] = float(self.evidence.mean())
        out[f"hallucination_rate.{method}"] = float(
            self.halluc_bad.sum() / max(self.halluc_total.sum(), 1)
        )
        out[f"format_rate.{method}"] = float(
            np.mean([float(p.well_formed) for p in (self.parsed.get("both") or [])] or [0.0])
        )
        out[f"truncation_rate.{method}"] = float(
            np.mean(np.concatenate(list(self.unfinished.values())) if self.unfinished else [0.0])
        )
        if self.consistency is not None:
            out[f"cross_modal_consistency.{method}"] = float(self.consistency.mean())
        return out


def score_method(texts: Mapping[str, Sequence[str]], truths: Sequence[Features]) -> MethodScores:
    return MethodScores(texts, truths)


def paired_z(a: np.ndarray, b: np.ndarray) -> float:
    """z of the mean paired difference ``a - b`` (0 when all differences are equal to 0;
    +-inf is capped at +-1e6 to keep results finite)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else 0.0
    if se == 0:
        return 0.0 if d.mean() == 0 else math.copysign(1e6, d.mean())
    return float(d.mean() / se)


def pooled_hallucination_test(
    a: Sequence[MethodScores], b: Sequence[MethodScores], *, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """The pooled hallucination rate of ``a`` minus that of ``b`` (statements over all seeds
    and records pooled: the metric's own definition), its paired bootstrap standard error
    (records resampled, the same draw for every seed and both methods) and their ratio z.

    Args:
        a, b: one :class:`MethodScores` per seed each, on the same test records.
    """
    bad_a = np.sum([s.halluc_bad for s in a], axis=0)
    tot_a = np.sum([s.halluc_total for s in a], axis=0)
    bad_b = np.sum([s.halluc_bad for s in b], axis=0)
    tot_b = np.sum([s.halluc_total for s in b], axis=0)

    def diff(i: np.ndarray) -> float:
        return float(
            bad_a[i].sum() / max(tot_a[i].sum(), 1) - bad_b[i].sum() / max(tot_b[i].sum(), 1)
        )

    n = len(bad_a)
    d = diff(np.arange(n))
    rng = np.random.default_rng(seed)
    boots = np.array([diff(rng.integers(0, n, n)) for _ in range(n_boot)])
    se = float(boots.std(ddof=1))
    return d, se, (d / se if se > 0 else (0.0 if d == 0 else math.copysign(1e6, d)))
