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

import csv
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26.weak_strong._validate import check_label, check_score, check_stream
from icml26.weak_strong.config import SYNTHETIC_STREAMS
from icml26.weak_strong.policies import Policy, Trace, TraceRecorder

__all__ = [
    "SYNTHETIC_STREAMS",
    "Stream",
    "check_inputs",
    "load_stream_file",
    "make_stream",
    "run_adaptive_adversary",
]


@dataclass(frozen=True)
class Stream:
    """A stream of weak scores and strong-verifier verdicts (1 = the answer is correct).

    Attributes:
        name: the stream's name (a metric-key part).
        scores: weak scores in [0, 1].
        labels: strong verdicts (booleans or 0/1 on input).
        description: one line on where it comes from.
        meta: anything else (model, sizes, unparseable share).

    Raises:
        ValueError: invalid scores or labels, or an empty stream.
    """

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
    """One of :data:`SYNTHETIC_STREAMS` with ``n`` items (see the module docstring).

    Args:
        kind: the stream's name.
        n: its length (at least 10).
        seed: seed or generator of the draws.

    Returns:
        The :class:`Stream`.

    Raises:
        ValueError: an unknown kind or ``n < 10``.
    """
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


def _row_value(p: Path, where: str, score: Any, label: Any) -> tuple[float, bool]:
    """One row's ``(score, label)``, or a ``ValueError`` naming the file, the row and the
    problem."""
    try:
        return check_score(score, "score"), check_label(label, "label")
    except ValueError as exc:
        raise ValueError(f"{p}, {where}: {exc}") from None


def _csv_row(p: Path, line: int, row: dict[str, Any]) -> tuple[float, bool]:
    """One CSV row, refusing a row with fewer columns than the header (naming the line)."""
    score, label = row.get("score"), row.get("label")
    if score is None or label is None:
        raise ValueError(f"{p}, line {line}: fewer columns than the header (no score or label)")
    return _row_value(p, f"line {line}", _csv_score(score), _csv_label(label))


def _csv_label(text: str) -> Any:
    return {"1": 1, "0": 0, "true": True, "false": False}.get(text.strip().lower(), text)


def _csv_score(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text


def load_stream_file(path: str | os.PathLike[str], *, name: str = "user") -> Stream:
    """A stream from a file of weak scores and strong verdicts, every row validated.

    Accepted formats: CSV with a header naming ``score`` and ``label`` columns (label 0/1 or
    true/false), or JSON, either ``{"scores": [...], "labels": [...]}`` or a list of
    ``{"score": s, "label": h}`` records (scores real numbers, labels booleans or 0/1).

    Args:
        path: the file.
        name: the stream's name.

    Returns:
        The :class:`Stream`.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: one line naming the file, the row and the problem (a score outside
            [0, 1] or not a number, a label other than 0/1/true/false, NaN, no rows).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no stream file at {p}")
    rows: list[tuple[float, bool]] = []
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p} is not valid JSON: {exc}") from exc
        if isinstance(data, dict) and "scores" in data and "labels" in data:
            scores, labels = data["scores"], data["labels"]
            if not (isinstance(scores, list) and isinstance(labels, list)):
                raise ValueError(f"{p}: 'scores' and 'labels' must be lists")
            if len(scores) != len(labels):
                raise ValueError(f"{p}: {len(scores)} scores but {len(labels)} labels")
            pairs = list(zip(scores, labels, strict=True))
        elif isinstance(data, list) and all(
            isinstance(r, dict) and "score" in r and "label" in r for r in data
        ):
            pairs = [(r["score"], r["label"]) for r in data]
        else:
            raise ValueError(
                f"{p}: expected {{'scores': [...], 'labels': [...]}} or a list of "
                "{'score', 'label'} records"
            )
        rows = [_row_value(p, f"row {i}", s, h) for i, (s, h) in enumerate(pairs)]
    else:
        with p.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames or not {"score", "label"} <= set(reader.fieldnames):
                raise ValueError(f"{p}: the CSV header must name 'score' and 'label' columns")
            rows = [_csv_row(p, i, row) for i, row in enumerate(reader, start=2)]
    if not rows:
        raise ValueError(f"{p} holds no rows")
    return Stream(
        name,
        np.asarray([r[0] for r in rows], dtype=np.float64),
        np.asarray([r[1] for r in rows], dtype=bool),
        str(p),
    )


def check_inputs(config: Any) -> None:
    """The job's input check (``Paper.inputs``): the user's stream file, when the run reads
    one, is loaded and validated before any stage runs.

    Args:
        config: a :class:`~icml26.weak_strong.config.RunConfig`.

    Raises:
        FileNotFoundError, ValueError: as :func:`load_stream_file`.
    """
    if "user" in getattr(config, "streams", ()):  # the bench's config reads no file
        load_stream_file(config.stream_file)
