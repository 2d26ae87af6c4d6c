"""Simulated reranking corpora with a known ground truth.

Each query has ``n`` candidates with latent utilities ``s ~ N(0, 1)``. The first stage (a
BM25 stand-in) orders them by ``rho * s + sqrt(1 - rho^2) * eps``, so it is informative but
noisy. Graded relevance comes from the utility: 3 for ``s > 2``, 2 for ``s > 1.5``, 1 for
``s > 1`` (about 2%, 4% and 9% of candidates, as in TREC-style pools), else 0. Passage
lengths (for token accounting) are drawn around ``passage_tokens`` (RankGPT truncates
passages to about 100 words).
"""

from __future__ import annotations

import numpy as np

from icml26.blitzrank.data.types import RerankQuery

__all__ = ["GRADE_THRESHOLDS", "make_simulated_queries"]

GRADE_THRESHOLDS = (1.0, 1.5, 2.0)


def make_simulated_queries(
    n_queries: int,
    n: int,
    *,
    rho: float = 0.5,
    passage_tokens: int = 100,
    seed: int = 0,
) -> list[RerankQuery]:
    """``n_queries`` simulated queries of ``n`` candidates each (first-stage order)."""
    if n_queries < 1:
        raise ValueError(f"n_queries must be >= 1, got {n_queries}")
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be in [-1, 1], got {rho}")
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n_queries):
        s = rng.normal(size=n)
        first = rho * s + np.sqrt(1 - rho**2) * rng.normal(size=n)
        order = np.argsort(-first, kind="stable")
        s = s[order]
        rel = np.searchsorted(np.asarray(GRADE_THRESHOLDS), s, side="left").astype(float)
        lengths = np.clip(rng.normal(passage_tokens, passage_tokens / 4, size=n), 20, None)
        out.append(
            RerankQuery(
                qid=f"sim{q}",
                query="",
                passages=tuple(f"item {i}" for i in range(n)),
                doc_ids=tuple(f"sim{q}-{i}" for i in range(n)),
                relevance=rel,
                scores=s,
                passage_tokens=lengths.astype(np.int64),
            )
        )
    return out
