"""BEELINE's file formats (Pratapa et al. 2020, ``Murali-group/Beeline``), in and out.

* ``ExpressionData.csv``: genes x cells, comma-separated; the first column holds the gene
  names, the header the cell ids (BEELINE ships log-normalised values: read as
  ``continuous``).
* ``refNetwork.csv``: the ground truth, columns ``Gene1`` (regulator), ``Gene2`` (target)
  and optionally ``Type`` (``+`` / ``-``). Self-loops are dropped, as BEELINE's evaluation
  does; a duplicated edge, a missing column or a gene absent from the expression is an error
  naming it.
* ``rankedEdges.csv``: a method's output, tab-separated ``Gene1  Gene2  EdgeWeight``, best
  first (:func:`write_ranked_edges`, read back by :func:`read_ranked_edges`).

BEELINE's scores (AUPRC by PRROC's Davis-Goadrich interpolation, EPR with ties at the k-th
weight included) are :func:`icml26.scfm_grn.metrics.auprc` with ``convention="beeline"`` and
:func:`icml26.scfm_grn.metrics.epr` with ``convention="beeline"``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.networks import GeneNetwork

__all__ = [
    "load_beeline",
    "read_beeline_expression",
    "read_beeline_network",
    "read_ranked_edges",
    "write_ranked_edges",
]

PathLike = str | os.PathLike[str]


def _rows(path: Path, delimiter: str = ",") -> list[list[str]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    with path.open(newline="") as fh:
        rows = [r for r in csv.reader(fh, delimiter=delimiter) if any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path} is empty")
    return rows


def read_beeline_expression(path: PathLike) -> tuple[tuple[str, ...], NDArray[np.float64]]:
    """BEELINE's ``ExpressionData.csv`` (genes x cells).

    Args:
        path: the file.

    Returns:
        ``(genes, x)`` with ``x`` cells x genes.

    Raises:
        FileNotFoundError: no such file.
        ValueError: no cell column, a duplicated gene, a row of the wrong length, a value
            that is not a finite number.
    """
    path = Path(path)
    rows = _rows(path)
    header, body = rows[0], rows[1:]
    if len(header) < 2 or not body:
        raise ValueError(f"{path}: need a header of cell ids and one row per gene")
    genes = [r[0].strip() for r in body]
    dupes = sorted({g for g in genes if genes.count(g) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicated genes {dupes[:10]}")
    n_cells = len(header) - 1
    values = np.empty((len(body), n_cells))
    for k, row in enumerate(body, 2):
        if len(row) - 1 != n_cells:
            raise ValueError(f"{path}:{k}: {len(row) - 1} values for {n_cells} cells")
        try:
            values[k - 2] = [float(v) for v in row[1:]]
        except ValueError as exc:
            raise ValueError(f"{path}:{k}: a value is not a number ({exc})") from exc
    if not np.isfinite(values).all():
        bad = [genes[i] for i in np.flatnonzero(~np.isfinite(values).all(axis=1))[:5]]
        raise ValueError(f"{path}: NaN or inf in genes {bad}")
    return tuple(genes), values.T.copy()


def read_beeline_network(path: PathLike, genes: Sequence[str]) -> GeneNetwork:
    """BEELINE's ``refNetwork.csv`` over ``genes``.

    Args:
        path: the file (columns ``Gene1``, ``Gene2``, optional ``Type``).
        genes: the expression data's genes.

    Returns:
        A :class:`~icml26.scfm_grn.networks.GeneNetwork` (weights +1 / -1 from ``Type``).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a missing column, an unknown gene, a duplicated edge, an unknown type.
    """
    path = Path(path)
    rows = _rows(path)
    header = [h.strip() for h in rows[0]]
    missing = [c for c in ("Gene1", "Gene2") if c not in header]
    if missing:
        raise ValueError(f"{path}: missing columns {missing} (header: {header})")
    i1, i2 = header.index("Gene1"), header.index("Gene2")
    it = header.index("Type") if "Type" in header else None
    known, seen = set(genes), set()
    edges, unknown, dupes = [], set(), []
    for row in rows[1:]:
        s, t = row[i1].strip(), row[i2].strip()
        unknown.update(g for g in (s, t) if g not in known)
        if (s, t) in seen:
            dupes.append(f"{s}->{t}")
        seen.add((s, t))
        sign = row[it].strip() if it is not None and it < len(row) else "+"
        if sign not in ("+", "-", ""):
            raise ValueError(f"{path}: edge {s}->{t} has Type {sign!r} (expected + or -)")
        if s != t:  # BEELINE's evaluation ignores self-loops
            edges.append((s, t, -1.0 if sign == "-" else 1.0))
    if unknown:
        raise ValueError(f"{path}: genes not in the expression data: {sorted(unknown)[:10]}")
    if dupes:
        raise ValueError(f"{path}: duplicated edges {dupes[:10]}")
    if not edges:
        raise ValueError(f"{path} holds no edge between two different genes")
    return GeneNetwork(tuple(genes), tuple(edges))


def load_beeline(
    folder: PathLike,
    *,
    expression: str = "ExpressionData.csv",
    network: str = "refNetwork.csv",
    normalise: str = "continuous",
    name: str | None = None,
) -> ExpressionData:
    """A BEELINE dataset folder as :class:`~icml26.scfm_grn.data.ExpressionData`.

    Args:
        folder: the folder.
        expression, network: the file names inside it.
        normalise: ``continuous`` (BEELINE's values are log-normalised) or ``counts``.
        name: the dataset's name (default: the folder's).

    Returns:
        The dataset with its ground truth.
    """
    folder = Path(folder)
    genes, x = read_beeline_expression(folder / expression)
    net = read_beeline_network(folder / network, genes)
    return ExpressionData.build(name or folder.name, genes, x, net, normalise)


def write_ranked_edges(
    path: PathLike, genes: Sequence[str], pairs: NDArray[np.int64], scores: NDArray[np.floating]
) -> Path:
    """A method's scores as BEELINE's ``rankedEdges.csv`` (tab-separated, best first).

    Args:
        path: where to write.
        genes: gene names indexed by ``pairs``.
        pairs: ``[N, 2]`` (regulator, target) indices.
        scores: ``[N]`` edge weights (higher = more confident).

    Returns:
        The path written.

    Raises:
        ValueError: ``pairs`` and ``scores`` of different lengths or non-finite scores.
    """
    pairs, scores = np.asarray(pairs), np.asarray(scores, dtype=np.float64)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or scores.shape != (len(pairs),):
        raise ValueError(f"pairs must be [N, 2] and scores [N], got {pairs.shape}, {scores.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite")
    path = Path(path)
    order = np.argsort(-scores, kind="mergesort")
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["Gene1", "Gene2", "EdgeWeight"])
        for k in order:
            w.writerow([genes[pairs[k, 0]], genes[pairs[k, 1]], repr(float(scores[k]))])
    return path


def read_ranked_edges(
    path: PathLike, genes: Sequence[str]
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """A ``rankedEdges.csv`` back as ``(pairs, scores)`` over ``genes``.

    Raises:
        ValueError: missing columns, unknown genes or duplicated edges.
    """
    path = Path(path)
    rows = _rows(path, "\t")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in ("Gene1", "Gene2", "EdgeWeight") if c not in header]
    if missing:
        raise ValueError(f"{path}: missing columns {missing} (header: {header})")
    pos = {g: i for i, g in enumerate(genes)}
    i1, i2, iw = (header.index(c) for c in ("Gene1", "Gene2", "EdgeWeight"))
    pairs, scores, seen = [], [], set()
    for row in rows[1:]:
        s, t = row[i1], row[i2]
        if s not in pos or t not in pos:
            raise ValueError(f"{path}: edge {s}->{t} names a gene not in the data")
        if (s, t) in seen:
            raise ValueError(f"{path}: duplicated edge {s}->{t}")
        seen.add((s, t))
        pairs.append((pos[s], pos[t]))
        scores.append(float(row[iw]))
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2), np.asarray(scores)
