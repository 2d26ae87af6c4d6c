"""The inputs of a run: a log, a labelled training set and a labelled calibration set —
synthetic with planted truth (default), or a user's files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26.disempowerment.conversations import (
    Conversation,
    LogReadReport,
    parse_conversation,
    read_jsonl,
)
from icml26.disempowerment.labels import Labels, label_from_json
from icml26.disempowerment.synthetic import (
    GeneratorSpec,
    PlantedPII,
    generate_labelled,
    generate_log,
)
from icml26.shared import rng_for, seed_for

__all__ = [
    "LabelledConversations",
    "RunData",
    "read_labelled_jsonl",
    "synthetic_data",
    "synthetic_labelled",
    "user_data",
]


@dataclass
class LabelledConversations:
    """Labelled conversations (a training set or an audit set).

    Attributes:
        conversations: the conversations.
        labels: their labels (truth: people's ratings, or the generator's).
        weights: inverse inclusion probabilities when the set was enriched (``None``: a
            simple random sample of the log).
    """

    conversations: list[Conversation]
    labels: Labels
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.conversations)
        if len(self.labels.severity) != n:
            raise ValueError(f"{n} conversations but {len(self.labels.severity)} labels")
        if self.weights is not None and np.shape(self.weights) != (n,):
            raise ValueError(f"{n} conversations but weights of shape {np.shape(self.weights)}")

    def subset(self, rows: np.ndarray) -> LabelledConversations:
        """The conversations at ``rows``, with their labels and weights.

        Args:
            rows: integer row indices.

        Returns:
            A new :class:`LabelledConversations` holding those rows, in that order.
        """
        return LabelledConversations(
            [self.conversations[i] for i in rows],
            self.labels.subset(rows),
            None if self.weights is None else self.weights[rows],
        )


@dataclass
class RunData:
    """Everything a run reads. ``planted`` and ``pii`` are empty for a user's log."""

    log: list[Conversation]
    train: LabelledConversations
    calibration: LabelledConversations
    planted: dict[str, float] = field(default_factory=dict)
    pii: list[PlantedPII] = field(default_factory=list)
    read_report: LogReadReport | None = None


def read_labelled_jsonl(path: str | Path) -> LabelledConversations:
    """Read a labelled set.

    Each line is a conversation (as in :func:`read_jsonl`) with a ``"labels"`` object in the
    judge's schema (``reality``/``value``/``action`` severities, an ``amplifiers`` list, a
    ``domain`` among the six or ``"other"``) and an optional positive ``"weight"`` (its
    inverse inclusion probability, for an enriched set).

    Args:
        path: the JSONL file.

    Returns:
        The :class:`LabelledConversations` (``weights`` when any line has one).

    Raises:
        ValueError: naming the line, for any malformed line (unlike the log, a bad labelled
            line is never skipped: it would bias the calibration), or an empty file.
    """
    convs, labels, weights = [], [], []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                conv = parse_conversation(obj)
                if "labels" not in obj:
                    raise ValueError("missing 'labels' object")
                label = label_from_json(obj["labels"])
                weight = obj.get("weight", 1.0)
                if (
                    isinstance(weight, bool)
                    or not isinstance(weight, int | float)
                    or not weight > 0
                ):
                    raise ValueError(f"weight must be a positive number, got {weight!r}")
            except (json.JSONDecodeError, ValueError) as exc:
                raise ValueError(f"{path}: line {n}: {exc}") from None
            convs.append(conv)
            labels.append(label)
            weights.append(float(weight))
    if not convs:
        raise ValueError(f"{path}: no labelled conversation")
    return LabelledConversations(
        convs,
        Labels(
            np.array([sev for sev, _, _ in labels]),
            np.array([amp for _, amp, _ in labels]),
            np.array([dom for _, _, dom in labels]),
        ),
        np.array(weights) if any(w != 1.0 for w in weights) else None,
    )


def synthetic_labelled(
    n: int, *, seed: int, share: float, spec: GeneratorSpec | None = None, with_pii: bool = True
) -> LabelledConversations:
    """A labelled set from the generator (cue patterns enriched to ``share``), with the
    importance weights that undo the enrichment.

    Args:
        n: conversations.
        seed: its seed.
        share: share of cue conversations.
        spec: the world (default: the planted one).
        with_pii: plant PII in it.

    Returns:
        The :class:`LabelledConversations` with truth labels and weights.
    """
    lab = generate_labelled(n, seed=seed, spec=spec, positive_share=share, with_pii=with_pii)
    log = lab.log
    return LabelledConversations(
        log.conversations, Labels(log.severity, log.amplifiers, log.domain), lab.weights
    )


def synthetic_data(
    n: int,
    n_train: int,
    n_calibration: int,
    *,
    seed: int,
    positive_share: float,
    calibration_positive_share: float,
    spec: GeneratorSpec | None = None,
    with_pii: bool = True,
) -> RunData:
    """Independent draws (separate named streams) of the log, the training set and the
    calibration set of one world."""
    spec = spec or GeneratorSpec()
    log = generate_log(n, seed=seed_for(seed, "log"), spec=spec, with_pii=with_pii)
    return RunData(
        log=log.conversations,
        train=synthetic_labelled(
            n_train,
            seed=seed_for(seed, "train"),
            share=positive_share,
            spec=spec,
            with_pii=with_pii,
        ),
        calibration=synthetic_labelled(
            n_calibration,
            seed=seed_for(seed, "calibration"),
            share=calibration_positive_share,
            spec=spec,
            with_pii=with_pii,
        ),
        planted=log.planted,
        pii=log.pii,
    )


def user_data(log_path: str, labelled_path: str, *, on_malformed: str, seed: int) -> RunData:
    """A user's log, and their labelled set split at random into training (40%) and
    calibration (60%) halves."""
    log, report = read_jsonl(log_path, on_error=on_malformed)
    if not log:
        raise ValueError(f"{log_path}: no readable conversation\n{report.summary()}")
    lab = read_labelled_jsonl(labelled_path)
    order = rng_for(seed, "labelled_split").permutation(len(lab.conversations))
    cut = int(0.4 * len(order))
    parts = [lab.subset(order[:cut]), lab.subset(order[cut:])]
    return RunData(log=log, train=parts[0], calibration=parts[1], read_report=report)
