"""Ranking quality: nDCG@k with graded relevance (Järvelin & Kekäläinen 2002)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["dcg", "ndcg_at_k"]


def dcg(gains: Sequence[float] | np.ndarray) -> float:
    """``sum_i (2^rel_i - 1) / log2(i + 1)`` over positions ``i = 1..len``."""
    g = np.asarray(gains, dtype=float)
    if g.size == 0:
        return 0.0
    return float(np.sum((2.0**g - 1.0) / np.log2(np.arange(2, g.size + 2))))


def ndcg_at_k(
    ranking: Sequence[int], relevance: Sequence[float] | np.ndarray, k: int = 10
) -> float:
    """nDCG@k of ``ranking`` (item ids best first) against graded ``relevance[item]``.

    Args:
        ranking: item ids, best first (only the first ``k`` count).
        relevance: the graded relevance of every item (finite, non-negative).
        k: the cut-off.

    Returns:
        ``DCG@k / ideal DCG@k`` with gains ``2^rel - 1``; 0 when no item is relevant (the
        convention of trec_eval for an empty ideal list).

    Raises:
        ValueError: relevance that is not a finite non-negative vector, ``k < 1``, or a
            ranking with duplicate ids or ids outside ``0..len(relevance)-1``.
    """
    rel = np.asarray(relevance, dtype=float)
    if rel.ndim != 1:
        raise ValueError(f"relevance must be one-dimensional, got shape {rel.shape}")
    if not np.all(np.isfinite(rel)) or np.any(rel < 0):
        raise ValueError("relevance grades must be finite and non-negative")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ids = list(ranking)[:k]
    if len(set(ids)) != len(ids):
        raise ValueError("ranking holds duplicate ids")
    if any(not 0 <= i < rel.size for i in ids):
        raise ValueError(f"ranking holds ids outside 0..{rel.size - 1}")
    ideal = dcg(np.sort(rel)[::-1][:k])
    if ideal == 0:
        return 0.0
    return dcg(rel[ids]) / ideal
