"""Which gene pairs to score: TF -> gene candidates among selected genes, for data far larger
than the benchmark's.

The features are ``[sources, genes, F]``: over every ordered pair of ``G`` genes they need
``G^2 F`` floats (at 20,000 genes and F = 8: 12.8 GB per feature type). Real GRN inference
restricts the candidates: regulators are transcription factors (a few percent of the genes),
and the genes are first reduced to the most variable ones (TFs kept). Then the features are
``[n_TF, n_selected, F]``; :func:`feature_bytes` gives both figures.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["candidate_pairs", "feature_bytes", "highly_variable", "read_gene_list"]


def read_gene_list(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Gene names, one per line (``#`` comments and blank lines skipped).

    Raises:
        FileNotFoundError: no such file.
        ValueError: an empty list.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"gene list {path} does not exist")
    names = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
    out = tuple(dict.fromkeys(n for n in names if n))
    if not out:
        raise ValueError(f"{path} lists no gene")
    return out


def highly_variable(
    x: NDArray[np.floating], n_top: int, *, keep: Iterable[int] = (), counts: bool = True
) -> NDArray[np.int64]:
    """Indices of the ``n_top`` most variable genes of ``x`` (cells x genes), plus ``keep``.

    Variance of ``log1p`` library-normalised counts (``counts=True``) or of the values; a
    sparse matrix is read column-wise without densifying the whole of it.

    Args:
        x: expression, dense or scipy-sparse.
        n_top: genes to keep by variance.
        keep: gene indices always kept (the TFs).
        counts: normalise counts first.

    Returns:
        Sorted gene indices.
    """
    if n_top < 1:
        raise ValueError("n_top must be >= 1")
    if hasattr(x, "tocsr"):
        x = x.tocsr().astype(np.float64)
        if counts:
            total = np.asarray(x.sum(axis=1)).ravel()
            total[total == 0] = 1.0
            x = x.multiply((np.median(total) / total)[:, None]).tocsr()
            x.data = np.log1p(x.data)
        mean = np.asarray(x.mean(axis=0)).ravel()
        var = np.asarray(x.multiply(x).mean(axis=0)).ravel() - mean**2
    else:
        x = np.asarray(x, dtype=np.float64)
        if counts:
            total = x.sum(axis=1, keepdims=True)
            total[total == 0] = 1.0
            x = np.log1p(x / total * np.median(total))
        var = x.var(axis=0)
    top = np.argsort(-var, kind="mergesort")[:n_top]
    return np.unique(np.r_[top, np.asarray(list(keep), dtype=np.int64)]).astype(np.int64)


def candidate_pairs(
    genes: Sequence[str], tfs: Iterable[str] | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Ordered candidate pairs (regulator, target), ``i != j``, regulators among ``tfs``.

    Args:
        genes: the (selected) genes.
        tfs: regulator names (those not in ``genes`` are ignored); None: every gene.

    Returns:
        ``(sources, pairs)``: the regulator indices, and ``[N, 2]`` index pairs.

    Raises:
        ValueError: no TF among the genes.
    """
    g = len(genes)
    if tfs is None:
        sources = np.arange(g)
    else:
        wanted = set(tfs)
        sources = np.array([i for i, name in enumerate(genes) if name in wanted], dtype=np.int64)
        if sources.size == 0:
            raise ValueError("none of the TFs is among the genes")
    i, j = np.meshgrid(sources, np.arange(g), indexing="ij")
    keep = i != j
    return sources.astype(np.int64), np.stack([i[keep], j[keep]], axis=1).astype(np.int64)


def feature_bytes(n_sources: int, n_genes: int, n_features: int, dtype_bytes: int = 4) -> int:
    """Bytes of one ``[n_sources, n_genes, n_features]`` feature array."""
    return int(n_sources) * int(n_genes) * int(n_features) * int(dtype_bytes)
