"""Execution engines for the per-conversation stage (scrub -> classify).

* ``local``: in-process, batch by batch.
* ``ray``: the same batch function on Ray Data (``map_batches`` over a pool of actors, each
  holding the fitted classifier and its own MiniLM), on a local Ray instance with
  ``workers`` CPUs or on a cluster at ``ray_address``. Needs ``pip install
  'icml26-disempowerment[ray]'``.

Both return the same :class:`ProcessedLog` (rows in input order); everything after this stage
works on aggregates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.disempowerment.classifiers import StagedClassifier
from icml26.disempowerment.config import ENGINES
from icml26.disempowerment.conversations import Conversation
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.scrub import PLACEHOLDERS, Scrubber

__all__ = ["ENGINES", "ProcessedLog", "process_batch", "process_log"]

EMB_DIM = 384


@dataclass
class ProcessedLog:
    """Per-conversation outputs of the stage (kept in memory, never written).

    Attributes:
        labels: staged-classifier labels.
        flagged: rows that went to stage 2.
        embeddings: ``(flagged.sum(), 384)`` their MiniLM embeddings.
        flagged_texts: their scrubbed texts (for cluster term counts).
        scrub_counts: replacements per placeholder.
        seconds: wall time of the stage.
    """

    labels: Labels
    flagged: np.ndarray
    embeddings: np.ndarray
    flagged_texts: list[str]
    scrub_counts: dict[str, int]
    seconds: float
    scrubbed: list[str] | None = None

    @property
    def throughput(self) -> float:
        return len(self.labels) / self.seconds if self.seconds > 0 else float("nan")


def process_batch(texts: Sequence[str], classifier: Any, scrubber: Scrubber) -> dict[str, Any]:
    """Scrub and classify one batch of raw transcripts; row-aligned numpy columns.

    Args:
        texts: raw transcripts.
        classifier: a :class:`StagedClassifier` (its flagged rows and their embeddings are
            kept) or anything with ``predict(texts) -> Labels``.
        scrubber: the scrubber.

    Returns:
        Columns ``sev``, ``amp``, ``dom``, ``flagged``, ``emb``, ``clean``, ``counts``.
    """
    clean = [scrubber(t) for t in texts]
    n = len(clean)
    emb = np.zeros((n, EMB_DIM), dtype=np.float32)
    if isinstance(classifier, StagedClassifier):
        out = classifier.run(clean)
        labels, flagged = out.labels, out.flagged
        rows = np.nonzero(flagged)[0]
        if len(rows):
            emb[rows] = out.embeddings
    else:
        labels, flagged = classifier.predict(clean), np.zeros(n, dtype=bool)
    return {
        "sev": labels.severity.astype(np.int8),
        "amp": labels.amplifiers,
        "dom": labels.domain.astype(np.int8),
        "flagged": flagged,
        "emb": emb,
        "clean": np.asarray(clean, dtype=object),
        "counts": np.array([[t.count(ph) for ph in PLACEHOLDERS] for t in clean], dtype=np.int32),
    }


def _assemble(parts: list[dict[str, Any]], seconds: float, keep_scrubbed: bool) -> ProcessedLog:
    cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    totals = cat["counts"].sum(axis=0)
    counts = {ph: int(totals[j]) for j, ph in enumerate(PLACEHOLDERS)}
    flagged = cat["flagged"].astype(bool)
    clean = list(cat["clean"])
    return ProcessedLog(
        labels=Labels(cat["sev"], cat["amp"], cat["dom"]),
        flagged=flagged,
        embeddings=cat["emb"][flagged],
        flagged_texts=[clean[i] for i in np.nonzero(flagged)[0]],
        scrub_counts=counts,
        seconds=seconds,
        scrubbed=clean if keep_scrubbed else None,
    )


def process_log(
    conversations: Sequence[Conversation],
    classifier: Any,
    *,
    engine: str = "local",
    batch_size: int = 2000,
    workers: int = 2,
    ray_address: str = "",
    keep_scrubbed: bool = False,
) -> ProcessedLog:
    """Scrub and classify a log with the chosen engine.

    Args:
        conversations: the log.
        classifier: see :func:`process_batch`.
        engine: ``local`` or ``ray``.
        batch_size: conversations per batch.
        workers: Ray actors (``ray``).
        ray_address: a Ray cluster (``ray``; "" starts a local instance).
        keep_scrubbed: keep every scrubbed text in memory (for clusters and validation).

    Returns:
        The :class:`ProcessedLog` (rows in input order).

    Raises:
        ValueError: an unknown engine or an empty log.
        ImportError: ``ray`` without Ray installed.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if not conversations:
        raise ValueError("the log holds no conversation")
    texts = [c.text() for c in conversations]
    if engine == "local":
        scrubber = Scrubber()
        start = time.perf_counter()
        parts = [
            process_batch(texts[i : i + batch_size], classifier, scrubber)
            for i in range(0, len(texts), batch_size)
        ]
        seconds = time.perf_counter() - start
        return _assemble(parts, seconds, keep_scrubbed)
    return _process_ray(texts, classifier, batch_size, workers, ray_address, keep_scrubbed)


class _RayWorker:
    """A Ray Data actor: one scrubber and one copy of the classifier (MiniLM loads lazily)."""

    def __init__(self, classifier: Any) -> None:
        import torch

        torch.set_num_threads(1)
        self.classifier = classifier
        self.scrubber = Scrubber()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        out = process_batch(list(batch["text"]), self.classifier, self.scrubber)
        out["i"] = batch["i"]
        return out


def _process_ray(
    texts: list[str],
    classifier: Any,
    batch_size: int,
    workers: int,
    address: str,
    keep_scrubbed: bool,
) -> ProcessedLog:
    try:
        import ray
    except ImportError as exc:
        raise ImportError(
            "engine=ray needs Ray Data: pip install 'icml26-disempowerment[ray]'"
        ) from exc
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = workers
        ray.init(**kwargs)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    start = time.perf_counter()
    ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
    ds = ds.map_batches(
        _RayWorker,
        fn_constructor_kwargs={"classifier": classifier},
        batch_size=batch_size,
        concurrency=workers,  # an actor pool of this size (the form the bench measured)
        num_cpus=1,
        batch_format="numpy",
    )
    parts = list(ds.iter_batches(batch_size=None, batch_format="numpy"))
    seconds = time.perf_counter() - start
    merged = [p for p in parts if len(p["i"])]
    cat_i = np.concatenate([p["i"] for p in merged])
    order = np.argsort(cat_i, kind="stable")
    full = {k: np.concatenate([p[k] for p in merged])[order] for k in merged[0] if k != "i"}
    return _assemble([full], seconds, keep_scrubbed)
