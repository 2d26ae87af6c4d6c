"""Expression datasets: a cells x genes matrix, its normalised values and (maybe) a truth.

Values fed to the scFM are per-gene z-scores of ``log1p`` library-normalised counts
(``normalise="counts"``) or of the raw values (``normalise="continuous"``, for krumsiek11's
simulated Boolean-model trajectories), clipped to [-4, 4]: the same scale on every dataset,
which is what lets one translator read features from datasets it never saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26.scfm_grn.networks import GeneNetwork, krumsiek11_network, read_edge_list

__all__ = [
    "ExpressionData",
    "from_anndata",
    "krumsiek11",
    "load_h5ad",
    "normalise_values",
    "pbmc68k_reduced",
]

CLIP = 4.0


def normalise_values(x: NDArray[np.floating], kind: str = "counts") -> NDArray[np.float32]:
    """Per-gene z-scores (std floored at 1e-6) of ``log1p(CP10k)`` counts or of raw values."""
    x = np.asarray(x, dtype=np.float64)
    if kind == "counts":
        if (x < 0).any():
            raise ValueError("counts must be non-negative (use normalise='continuous')")
        total = x.sum(axis=1, keepdims=True)
        total[total == 0] = 1.0
        x = np.log1p(x / total * np.median(total))
    elif kind != "continuous":
        raise ValueError(f"normalise must be 'counts' or 'continuous', got {kind!r}")
    z = (x - x.mean(axis=0)) / np.maximum(x.std(axis=0), 1e-6)
    return np.clip(z, -CLIP, CLIP).astype(np.float32)


@dataclass(frozen=True)
class ExpressionData:
    """One dataset.

    Attributes:
        name: a label for tables.
        genes: gene names, the columns of ``raw``.
        raw: expression as measured (counts, or continuous values), ``[cells, genes]``.
        values: the scFM's inputs (see :func:`normalise_values`).
        network: the ground truth over ``genes``, or None (pretraining-only data).
    """

    name: str
    genes: tuple[str, ...]
    raw: NDArray[np.float64]
    values: NDArray[np.float32]
    network: GeneNetwork | None = None

    def __post_init__(self) -> None:
        if self.raw.ndim != 2 or self.raw.shape[1] != len(self.genes):
            raise ValueError(
                f"{self.name}: expression is {self.raw.shape}, expected [cells, {len(self.genes)}]"
            )
        if self.values.shape != self.raw.shape:
            raise ValueError(f"{self.name}: values and raw differ in shape")
        if not np.isfinite(self.raw).all():
            bad = np.flatnonzero(~np.isfinite(self.raw).all(axis=0))
            raise ValueError(
                f"{self.name}: expression holds NaN or inf (genes {[self.genes[i] for i in bad[:5]]})"
            )
        if self.network is not None and tuple(self.network.genes) != self.genes:
            raise ValueError(f"{self.name}: the network's genes must be the data's genes, in order")

    @classmethod
    def build(
        cls,
        name: str,
        genes: tuple[str, ...] | list[str],
        raw: NDArray[Any],
        network: GeneNetwork | None = None,
        normalise: str = "counts",
    ) -> ExpressionData:
        """A dataset from raw expression, normalised by :func:`normalise_values`.

        Args:
            name: the dataset's name (in messages and tables).
            genes: gene names, one per column of ``raw``.
            raw: ``(cells, genes)`` expression.
            network: the ground-truth network, if known.
            normalise: ``"counts"`` (log1p of counts scaled to the median library size, then
                per-gene z-scores) or ``"continuous"`` (per-gene z-scores of the raw values).

        Returns:
            The dataset.

        Raises:
            ValueError: ``raw`` holds NaN or inf (the genes are named), negative counts, or an
                unknown ``normalise``.
        """
        raw = np.asarray(raw, dtype=np.float64)
        if raw.ndim == 2 and not np.isfinite(raw).all():
            bad = np.flatnonzero(~np.isfinite(raw).all(axis=0))
            raise ValueError(
                f"{name}: expression holds NaN or inf (genes {[list(genes)[i] for i in bad[:5]]})"
            )
        return cls(name, tuple(genes), raw, normalise_values(raw, normalise), network)

    @property
    def n_cells(self) -> int:
        return int(self.raw.shape[0])

    @property
    def n_genes(self) -> int:
        return len(self.genes)

    def labels(self) -> NDArray[np.int64]:
        """The truth as an adjacency matrix ``A[i, j] = 1`` for ``i -> j``."""
        if self.network is None:
            raise ValueError(f"{self.name} has no ground-truth network")
        return self.network.adjacency(self.genes)

    def cell_subset(self, idx: NDArray[np.int64], name: str | None = None) -> ExpressionData:
        """The cells ``idx`` of this dataset (values kept as normalised on the whole set).

        Args:
            idx: cell indices.
            name: the subset's name (default: this dataset's).

        Returns:
            A dataset with the same genes and network.
        """
        return ExpressionData(
            name or self.name, self.genes, self.raw[idx], self.values[idx], self.network
        )


def _dense(x: Any) -> NDArray[np.float64]:
    return np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)


def from_anndata(
    adata: Any,
    *,
    edges: str | Path | None = None,
    network: GeneNetwork | None = None,
    layer: str | None = None,
    normalise: str = "counts",
    name: str = "anndata",
) -> ExpressionData:
    """An in-memory ``anndata.AnnData`` (cells x genes, ``var_names`` = gene names).

    Args:
        adata: the AnnData object (dense or sparse ``X`` / layers).
        edges: a TSV ``source<TAB>target[<TAB>sign]`` over ``var_names`` (the truth).
        network: the truth as a :class:`~icml26.scfm_grn.networks.GeneNetwork` instead.
        layer: read ``adata.layers[layer]`` instead of ``adata.X`` (e.g. raw ``counts``).
        normalise: ``"counts"`` or ``"continuous"`` (see :func:`normalise_values`).
        name: the dataset's name.

    Returns:
        :class:`ExpressionData`.

    Raises:
        KeyError: a missing layer.
        ValueError: NaN expression, duplicated gene names, edges naming unknown genes.
    """
    if layer is not None and layer not in adata.layers:
        raise KeyError(
            f"{name} has no layer {layer!r}; layers: {', '.join(adata.layers.keys()) or 'none'}"
        )
    raw = _dense(adata.layers[layer] if layer is not None else adata.X)
    genes = tuple(str(g) for g in adata.var_names)
    if len(set(genes)) != len(genes):
        raise ValueError(
            f"{name}: duplicated gene names in var_names (adata.var_names_make_unique())"
        )
    if edges is not None and network is not None:
        raise ValueError("give edges or network, not both")
    net = read_edge_list(edges, genes) if edges is not None else network
    if net is not None and tuple(net.genes) != genes:
        net = GeneNetwork(genes, net.edges)
    return ExpressionData.build(name, genes, raw, net, normalise)


def load_h5ad(
    path: str | Path,
    *,
    edges: str | Path | None = None,
    layer: str | None = None,
    normalise: str = "counts",
    name: str | None = None,
) -> ExpressionData:
    """A user's ``.h5ad`` file.

    Args:
        path: the ``.h5ad`` file.
        edges: a TSV ``source<TAB>target[<TAB>sign]`` over ``var_names`` (the truth).
        layer: read ``adata.layers[layer]`` instead of ``adata.X`` (e.g. raw ``counts``).
        normalise: ``"counts"`` or ``"continuous"`` (see :func:`normalise_values`).
        name: the dataset's name (default: the file's stem).

    Returns:
        :class:`ExpressionData`, as :func:`from_anndata` builds it.

    Raises:
        FileNotFoundError: no such file.
        KeyError: a missing layer.
        ValueError: NaN expression, edges naming unknown genes.
    """
    import anndata

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    return from_anndata(
        anndata.read_h5ad(path),
        edges=edges,
        layer=layer,
        normalise=normalise,
        name=name or path.stem,
    )


def krumsiek11() -> ExpressionData:
    """scanpy's krumsiek11: 640 cells simulated from the Boolean myeloid model (not measured
    data), with its signed coupling network as the truth."""
    import scanpy

    adata = scanpy.datasets.krumsiek11()
    genes = tuple(str(g) for g in adata.var_names)
    net = krumsiek11_network()
    order = {g: i for i, g in enumerate(net.genes)}
    if set(order) != set(genes):
        raise ValueError("krumsiek11's genes differ from its model file")
    network = GeneNetwork(genes, net.edges)
    return ExpressionData.build("krumsiek11", genes, _dense(adata.X), network, "continuous")


def pbmc68k_reduced() -> ExpressionData:
    """scanpy's 700-cell, 765-gene PBMC subset (real 10x data, already scaled; no truth).

    Its ``X`` is scaled expression, so it is z-scored as continuous values."""
    import scanpy

    adata = scanpy.datasets.pbmc68k_reduced()
    genes = tuple(str(g) for g in adata.var_names)
    return ExpressionData.build("pbmc68k_reduced", genes, _dense(adata.X), None, "continuous")
