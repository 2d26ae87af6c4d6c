"""Synthetic query streams with known ground truth, and an adaptive adversary.

Each item is an answer whose correctness ``H`` is drawn from a latent chance ``eta``; the weak
verifier reports a score ``s`` that may misstate ``eta``:

* ``calibrated``: ``s = eta`` (so ``P(H = 1 | s) = s``);
* ``overconfident``: ``s = sigmoid(T logit eta)`` with ``T = 2.5`` (scores pushed to 0 and 1);
* ``underconfident``: the same with ``T = 0.4`` (scores squeezed towards 1/2);
* ``drift``: calibrated for the first 30% of the stream, then the verifier grows
  over-optimistic (``logit s = logit eta + shift``, the shift ramping to 2.5) while the answers
  get worse (the law of ``eta`` slides from mean 0.6 to mean 0.4), as when a reward model is
  gamed or the questions get harder;
* ``adversarial``: a calibrated pool re-ordered against the policies: the first fifth holds
  only reassuring items (correct answers scored above 1/2, incorrect below), the rest
  alternates blocks of *traps* (incorrect answers scored high, correct ones scored low) with
  blocks of ordinary items.

:func:`run_adaptive_adversary` goes further: at every step it looks at the policy's current
thresholds and places a wrong answer just above the acceptance threshold or a right answer on
the rejection threshold, the worst case the online guarantee covers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26.weak_strong._validate import check_stream
from icml26.weak_strong.config import SYNTHETIC_STREAMS
from icml26.weak_strong.policies import Policy, Trace, TraceRecorder

__all__ = [
    "SYNTHETIC_STREAMS",
    "Stream",
    "load_stream_file",
    "make_stream",
    "run_adaptive_adversary",
]


@dataclass(frozen=True)
class Stream:
    """A stream of weak scores and strong-verifier verdicts (1 = the answer is correct)."""

    name: str
    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s, y = check_stream(self.scores, self.labels)
        if s.size == 0:
            raise ValueError(f"stream {self.name!r} is empty")
        object.__setattr__(self, "scores", s)
        object.__setattr__(self, "labels", y)

    def __len__(self) -> int:
        return int(self.scores.size)


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return 1.0 / (1.0 + np.exp(-x))


def _logit(p: NDArray[np.float64], eps: float = 1e-6) -> NDArray[np.float64]:
    p = np.clip(p, eps, 1 - eps)
    return np.log(p) - np.log1p(-p)


def make_stream(kind: str, n: int, seed: int | np.random.Generator = 0) -> Stream:
    """One of :data:`SYNTHETIC_STREAMS` with ``n`` items (see the module docstring)."""
    if kind not in SYNTHETIC_STREAMS:
        raise ValueError(f"unknown stream {kind!r}; streams: {', '.join(SYNTHETIC_STREAMS)}")
    if n < 10:
        raise ValueError(f"a stream needs at least 10 items, got {n}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if kind == "drift":
        t = np.arange(n) / n
        ramp = np.clip((t - 0.3) / 0.7, 0.0, 1.0)
        a, b = 1.5 - 0.5 * ramp, 1.0 + 0.5 * ramp  # mean 0.6 -> 0.4
        eta = rng.beta(a, b)
        labels = rng.random(n) < eta
        scores = _sigmoid(_logit(eta) + 2.5 * ramp)
        desc = "calibrated, then over-optimistic verifier and harder questions"
        return Stream(kind, np.clip(scores, 0, 1), labels, desc, {"shift_start": int(0.3 * n)})
    eta = rng.beta(1.5, 1.0, size=n)
    labels = rng.random(n) < eta
    if kind in ("calibrated", "adversarial"):
        scores = eta.copy()
    elif kind == "overconfident":
        scores = _sigmoid(2.5 * _logit(eta))
    else:  # underconfident
        scores = _sigmoid(0.4 * _logit(eta))
    scores = np.clip(scores, 0.0, 1.0)
    if kind != "adversarial":
        desc = {
            "calibrated": "score = P(correct | score)",
            "overconfident": "scores pushed towards 0 and 1 (temperature 2.5)",
            "underconfident": "scores squeezed towards 1/2 (temperature 0.4)",
        }[kind]
        return Stream(kind, scores, labels, desc)
    return _adversarial_order(scores, labels, rng)


def _adversarial_order(
    scores: NDArray[np.float64], labels: NDArray[np.bool_], rng: np.random.Generator
) -> Stream:
    n = scores.size
    trap = (labels & (scores < 0.5)) | (~labels & (scores > 0.5))
    traps = rng.permutation(np.flatnonzero(trap))
    plain = rng.permutation(np.flatnonzero(~trap))
    head = min(plain.size, n // 5)
    order = [plain[:head]]
    rest_plain = plain[head:]
    n_blocks = 8
    trap_blocks = np.array_split(traps, n_blocks)
    plain_blocks = np.array_split(rest_plain, n_blocks)
    for tb, pb in zip(trap_blocks, plain_blocks, strict=True):
        order.extend([tb, pb])
    idx = np.concatenate(order)
    desc = "reassuring first fifth, then bursts of high-scored wrong / low-scored right answers"
    return Stream("adversarial", scores[idx], labels[idx], desc, {"calibration_end": head})


def run_adaptive_adversary(
    policy: Policy,
    n: int,
    *,
    p_correct: float = 0.5,
    gap: float = 1e-3,
    seed: int | np.random.Generator = 0,
    chooser: Callable[[float, float, np.random.Generator], tuple[float, bool]] | None = None,
) -> Trace:
    """Run ``policy`` against an adversary that sees its thresholds before each item.

    By default a wrong answer (probability ``1 - p_correct``) is scored just above ``tau_a``,
    to be accepted, and a right answer exactly at ``tau_r``, to be rejected (scores clipped to
    [0, 1]). ``chooser(tau_a, tau_r, rng) -> (score, label)`` replaces that strategy.
    """
    if not hasattr(policy, "thresholds"):
        raise TypeError("the adaptive adversary needs a policy exposing .thresholds")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rec = TraceRecorder(policy)
    for _ in range(n):
        tau_a, tau_r = policy.thresholds
        if chooser is not None:
            s, h = chooser(tau_a, tau_r, rng)
        else:
            h = bool(rng.random() < p_correct)
            s = tau_r if h else tau_a + gap
        rec.record(float(min(1.0, max(0.0, s))), h)
    return rec.trace()


def load_stream_file(path: str, *, name: str = "user") -> Stream:
    """A stream from a file of weak scores and strong verdicts.

    Accepted formats: CSV with a header naming ``score`` and ``label`` columns (label 0/1 or
    true/false), or JSON, either ``{"scores": [...], "labels": [...]}`` or a list of
    ``{"score": s, "label": h}`` records. Scores must lie in [0, 1].
    """
    import csv
    import json
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no stream file at {p}")
    truth = {"1": True, "0": False, "true": True, "false": False}
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p} is not valid JSON: {exc}") from exc
        if isinstance(data, dict) and "scores" in data and "labels" in data:
            scores, labels = data["scores"], data["labels"]
        elif isinstance(data, list) and all(
            isinstance(r, dict) and "score" in r and "label" in r for r in data
        ):
            scores, labels = [r["score"] for r in data], [r["label"] for r in data]
        else:
            raise ValueError(
                f"{p}: expected {{'scores': [...], 'labels': [...]}} or a list of "
                "{'score', 'label'} records"
            )
        return Stream(name, np.asarray(scores, dtype=float), np.asarray(labels), str(p))
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not {"score", "label"} <= set(reader.fieldnames):
            raise ValueError(f"{p}: the CSV header must name 'score' and 'label' columns")
        scores, labels = [], []
        for i, row in enumerate(reader, start=2):
            lab = str(row["label"]).strip().lower()
            if lab not in truth:
                raise ValueError(f"{p}, line {i}: label {row['label']!r} is not 0/1/true/false")
            try:
                scores.append(float(row["score"]))
            except ValueError as exc:
                raise ValueError(f"{p}, line {i}: score {row['score']!r} is not a number") from exc
            labels.append(truth[lab])
    return Stream(name, np.asarray(scores), np.asarray(labels, dtype=bool), str(p))
