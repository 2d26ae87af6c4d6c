"""One reranking query: the query text, its candidates in first-stage order, their grades."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RerankQuery"]


@dataclass(frozen=True)
class RerankQuery:
    """A query and its candidates, in first-stage order (candidate 0 ranked first).

    Attributes:
        qid: query identifier.
        query: the query text ("" for purely simulated items).
        passages: candidate texts (placeholders for simulated items).
        doc_ids: candidate identifiers.
        relevance: graded relevance per candidate (0 = not relevant).
        scores: latent utilities for simulated oracles (None for real text).
        passage_tokens: token length per passage (for simulated token accounting).
    """

    qid: str
    query: str
    passages: tuple[str, ...]
    doc_ids: tuple[str, ...]
    relevance: np.ndarray
    scores: np.ndarray | None = None
    passage_tokens: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = len(self.doc_ids)
        if n < 2:
            raise ValueError(f"query {self.qid!r}: needs at least 2 candidates, got {n}")
        if len(self.passages) != n:
            raise ValueError(f"query {self.qid!r}: {len(self.passages)} passages for {n} ids")
        if len(set(self.doc_ids)) != n:
            dup = sorted({d for d in self.doc_ids if self.doc_ids.count(d) > 1})
            raise ValueError(f"query {self.qid!r}: duplicate candidate ids {dup[:5]}")
        rel = np.asarray(self.relevance, dtype=float)
        if rel.shape != (n,) or not np.all(np.isfinite(rel)) or np.any(rel < 0):
            raise ValueError(f"query {self.qid!r}: relevance must be {n} finite grades >= 0")
        object.__setattr__(self, "relevance", rel)
        if self.scores is not None:
            s = np.asarray(self.scores, dtype=float)
            if s.shape != (n,) or not np.all(np.isfinite(s)):
                raise ValueError(f"query {self.qid!r}: scores must be {n} finite numbers")
            object.__setattr__(self, "scores", s)

    @property
    def n(self) -> int:
        return len(self.doc_ids)
