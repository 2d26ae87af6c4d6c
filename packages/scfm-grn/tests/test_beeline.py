"""BEELINE files in and out, bad files, in-memory AnnData, and TF -> gene candidates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml26.scfm_grn.beeline import (
    load_beeline,
    read_ranked_edges,
    write_ranked_edges,
)
from icml26.scfm_grn.candidates import (
    candidate_pairs,
    feature_bytes,
    highly_variable,
    read_gene_list,
)
from icml26.scfm_grn.data import from_anndata


def _write_dataset(folder: Path, network: str) -> None:
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 3, size=(4, 12))
    lines = [",".join(["", *(f"cell{k}" for k in range(12))])]
    lines += [",".join([g, *(f"{v:.4f}" for v in row)]) for g, row in zip("ABCD", x, strict=True)]
    (folder / "ExpressionData.csv").write_text("\n".join(lines) + "\n")
    (folder / "refNetwork.csv").write_text(network)


def test_a_beeline_folder_loads_with_its_truth(tmp_path: Path) -> None:
    _write_dataset(tmp_path / "d", "Gene1,Gene2,Type\nA,B,+\nB,C,-\nC,C,+\n")
    data = load_beeline(tmp_path / "d")
    assert data.genes == ("A", "B", "C", "D")
    assert data.n_cells == 12
    labels = data.labels()
    assert labels[0, 1] == 1
    assert labels[1, 2] == 1
    assert labels.sum() == 2  # the self-loop C->C is dropped, as BEELINE's evaluation does
    assert dict(((s, t), w) for s, t, w in data.network.edges)[("B", "C")] == -1.0


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ("Source,Target\nA,B\n", r"missing columns \['Gene1', 'Gene2'\]"),
        ("Gene1,Gene2\nA,Z\n", r"not in the expression data: \['Z'\]"),
        ("Gene1,Gene2\nA,B\nA,B\n", r"duplicated edges \['A->B'\]"),
        ("Gene1,Gene2,Type\nA,B,?\n", "Type"),
        ("Gene1,Gene2\nA,A\n", "no edge"),
    ],
)
def test_bad_networks_are_refused(tmp_path: Path, network: str, message: str) -> None:
    _write_dataset(tmp_path / "d", network)
    with pytest.raises(ValueError, match=message):
        load_beeline(tmp_path / "d")


def test_bad_expression_files(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    _write_dataset(folder, "Gene1,Gene2\nA,B\n")
    text = (folder / "ExpressionData.csv").read_text().splitlines()
    (folder / "ExpressionData.csv").write_text("\n".join([*text, text[1]]) + "\n")
    with pytest.raises(ValueError, match=r"duplicated genes \['A'\]"):
        load_beeline(folder)
    (folder / "ExpressionData.csv").write_text(",c1,c2\nA,1,x\n")
    with pytest.raises(ValueError, match="not a number"):
        load_beeline(folder)
    (folder / "ExpressionData.csv").write_text(",c1,c2\nA,1\n")
    with pytest.raises(ValueError, match="1 values for 2 cells"):
        load_beeline(folder)
    with pytest.raises(FileNotFoundError):
        load_beeline(tmp_path / "absent")


def test_ranked_edges_round_trip(tmp_path: Path) -> None:
    genes = ("A", "B", "C")
    pairs = np.array([[0, 1], [1, 2], [2, 0]])
    scores = np.array([0.2, 0.9, 0.5])
    path = write_ranked_edges(tmp_path / "rankedEdges.csv", genes, pairs, scores)
    lines = path.read_text().splitlines()
    assert lines[0] == "Gene1\tGene2\tEdgeWeight"
    assert lines[1].startswith("B\tC\t")  # best first
    back_pairs, back_scores = read_ranked_edges(path, genes)
    assert sorted(map(tuple, back_pairs.tolist())) == sorted(map(tuple, pairs.tolist()))
    assert sorted(back_scores) == sorted(scores)
    path.write_text("Gene1\tGene2\nA\tB\n")
    with pytest.raises(ValueError, match="EdgeWeight"):
        read_ranked_edges(path, genes)


def test_anndata_in_memory() -> None:
    anndata = pytest.importorskip("anndata")
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    adata = anndata.AnnData(sp.csr_matrix(rng.poisson(2.0, size=(30, 5)).astype(float)))
    adata.var_names = [f"g{i}" for i in range(5)]
    from icml26.scfm_grn.networks import GeneNetwork

    net = GeneNetwork(("g0", "g1", "g2", "g3", "g4"), (("g0", "g1", 1.0),))
    data = from_anndata(adata, network=net, name="mem")
    assert data.name == "mem"
    assert data.labels()[0, 1] == 1
    assert np.allclose(data.values.mean(axis=0), 0, atol=1e-5)
    with pytest.raises(KeyError, match="no layer 'counts'"):
        from_anndata(adata, layer="counts")


def test_candidates_restrict_to_tf_sources() -> None:
    genes = ("TF1", "a", "TF2", "b")
    sources, pairs = candidate_pairs(genes, ["TF2", "TF1", "absent"])
    assert sources.tolist() == [0, 2]
    assert len(pairs) == 2 * 3
    assert set(pairs[:, 0].tolist()) == {0, 2}
    assert all(i != j for i, j in pairs)
    with pytest.raises(ValueError, match="none of the TFs"):
        candidate_pairs(genes, ["nope"])
    assert len(candidate_pairs(genes)[1]) == 12
    assert feature_bytes(20_000, 20_000, 8) == 12_800_000_000


def test_highly_variable_keeps_tfs_and_agrees_dense_and_sparse(tmp_path: Path) -> None:
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    x = rng.poisson(rng.uniform(0.1, 5, size=50), size=(40, 50)).astype(float)
    dense = highly_variable(x, 10, keep=[0])
    sparse = highly_variable(sp.csr_matrix(x), 10, keep=[0])
    assert dense.tolist() == sparse.tolist()
    assert 0 in dense
    assert len(dense) <= 11
    (tmp_path / "tfs.txt").write_text("# TFs\nTF1\n\nTF2  # a comment\nTF1\n")
    assert read_gene_list(tmp_path / "tfs.txt") == ("TF1", "TF2")
