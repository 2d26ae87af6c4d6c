"""Networks, datasets and the user's files (bad input gives a clear error)."""

from __future__ import annotations

from pathlib import Path

import anndata
import networkx as nx
import numpy as np
import pytest

from icml26.scfm_grn.config import PROFILES
from icml26.scfm_grn.corpus import build_corpus
from icml26.scfm_grn.data import ExpressionData, krumsiek11, load_h5ad, normalise_values
from icml26.scfm_grn.networks import (
    krumsiek11_network,
    read_edge_list,
    scale_free_universe,
    subnetwork,
)


def test_universe_is_a_large_scale_free_dag() -> None:
    u = scale_free_universe(600, seed=0)
    g = nx.DiGraph([(s, t) for s, t, _ in u.edges])
    assert u.n_genes == 600
    assert nx.is_directed_acyclic_graph(g)
    out_deg = np.array([d for _, d in g.out_degree()])
    assert out_deg.max() >= 10 * np.median(out_deg[out_deg > 0])  # hubs


def test_subnetwork_is_induced_and_respects_exclusions() -> None:
    u = scale_free_universe(500, seed=1)
    a = subnetwork(u, 60, seed=0)
    b = subnetwork(u, 40, exclude=a.genes, seed=1)
    assert a.n_genes == 60
    assert set(a.genes).isdisjoint(b.genes)
    universe_edges = {(s, t) for s, t, _ in u.edges}
    inside = {(s, t) for s, t in universe_edges if s in set(a.genes) and t in set(a.genes)}
    assert {(s, t) for s, t, _ in a.edges} == inside


def test_krumsiek11_network_and_data() -> None:
    net = krumsiek11_network()
    assert net.n_genes == 11
    assert len(net.edges) == 30
    assert net.adjacency().sum() == 26  # 4 self-couplings dropped
    gata1, fog1 = net.index("Gata1"), net.index("Fog1")
    assert net.adjacency()[gata1, fog1] == 1  # Fog1 = Gata1
    data = krumsiek11()
    assert data.raw.shape == (640, 11)
    assert data.labels().sum() == 26


def _tsv(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_edge_list_naming_unknown_genes(tmp_path: Path) -> None:
    genes = ("a", "b", "c")
    ok = read_edge_list(
        _tsv(tmp_path / "e.tsv", ["source\ttarget\tsign", "a\tb\t-1", "b\tc"]), genes
    )
    assert ok.adjacency().sum() == 2
    with pytest.raises(ValueError, match="not in the expression data: zz"):
        read_edge_list(_tsv(tmp_path / "bad.tsv", ["a\tzz"]), genes)
    with pytest.raises(ValueError, match="2 or 3 tab-separated"):
        read_edge_list(_tsv(tmp_path / "bad2.tsv", ["a b"]), genes)
    with pytest.raises(FileNotFoundError):
        read_edge_list(tmp_path / "none.tsv", genes)


def test_nan_expression_is_refused() -> None:
    raw = np.ones((5, 2))
    raw[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN or inf \(genes \['y'\]\)"):
        ExpressionData.build("d", ("x", "y"), raw)


def test_h5ad_without_the_layer(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    ad = anndata.AnnData(rng.poisson(3.0, size=(20, 3)).astype(np.float32))
    ad.var_names = ["a", "b", "c"]
    ad.write_h5ad(tmp_path / "d.h5ad")
    _tsv(tmp_path / "e.tsv", ["a\tb"])
    data = load_h5ad(tmp_path / "d.h5ad", edges=tmp_path / "e.tsv")
    assert data.genes == ("a", "b", "c")
    assert data.labels()[0, 1] == 1
    with pytest.raises(KeyError, match="no layer 'counts'"):
        load_h5ad(tmp_path / "d.h5ad", layer="counts")
    with pytest.raises(FileNotFoundError):
        load_h5ad(tmp_path / "absent.h5ad")


def test_normalisation() -> None:
    x = np.random.default_rng(0).poisson(30.0, size=(100, 5)).astype(float)
    z = normalise_values(x)
    np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-5)
    with pytest.raises(ValueError, match="non-negative"):
        normalise_values(-x)


def _shares_cells(data: ExpressionData, other: ExpressionData) -> bool:
    """Whether a cell of ``data`` is a cell of ``other``, compared by content on the genes the
    two share (at least two; all-zero rows say nothing and are skipped)."""
    shared = [g for g in data.genes if g in other.genes]
    if len(shared) < 2:
        return False
    part = np.ascontiguousarray(data.raw[:, [data.genes.index(g) for g in shared]])
    rows = {r.tobytes() for r in part[part.any(axis=1)]}
    cols = [other.genes.index(g) for g in shared]
    return bool(rows & {r.tobytes() for r in np.ascontiguousarray(other.raw[:, cols])})


def test_shares_cells_finds_a_copied_cell() -> None:
    """The content check sees one cell copied into a dataset with other genes in another
    order (it can fail), and not the same cells on different genes."""
    val = build_corpus(PROFILES["smoke"]).validation[0]
    genes = (*reversed(val.genes[2:6]), "other0", "other1")
    rng = np.random.default_rng(0)
    raw = rng.random((20, len(genes))) + 1.0
    cell = int(np.flatnonzero(val.raw[:, 2:6].any(axis=1))[0])
    raw[7, :4] = val.raw[cell, 2:6][::-1]
    assert _shares_cells(val, ExpressionData("copy", genes, raw, raw, None))
    raw[7, :4] += 1.0
    assert not _shares_cells(val, ExpressionData("copy", genes, raw, raw, None))


def test_validation_datasets_are_new_data() -> None:
    """The checkpoint-choosing datasets share no cells with pretraining or any scored split
    (by content on shared genes), and no gene with the translator's training dataset."""
    corpus = build_corpus(PROFILES["smoke"])
    assert len(corpus.validation) == PROFILES["smoke"].n_val_datasets
    others = [*corpus.pretrain, *corpus.tests, corpus.krumsiek11]
    for val in corpus.validation:
        assert not set(val.genes) & set(corpus.train.genes)
        for other in others:
            assert not _shares_cells(val, other), (val.name, other.name)


def test_scored_datasets_are_not_pretrained_on() -> None:
    """No cell of a test dataset is in the pretraining corpus: compared by content on the
    genes each pretraining dataset shares with it."""
    corpus = build_corpus(PROFILES["smoke"])
    for test in corpus.tests:
        for pre in corpus.pretrain:
            assert not _shares_cells(test, pre), (test.name, pre.name)
