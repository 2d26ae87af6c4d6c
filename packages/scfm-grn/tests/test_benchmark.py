"""The generalisation split: unseen genes really are unseen."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.scfm_grn.benchmark import all_pairs, split_genes
from icml26.scfm_grn.networks import GeneNetwork, scale_free_universe, subnetwork

_UNIVERSES: dict[int, GeneNetwork] = {}


def _universe(seed: int) -> GeneNetwork:
    if seed not in _UNIVERSES:
        _UNIVERSES[seed] = scale_free_universe(500, seed=seed)
    return _UNIVERSES[seed]


def test_all_pairs_are_ordered_and_off_diagonal() -> None:
    pairs = all_pairs(4)
    assert len(pairs) == 12
    assert (pairs[:, 0] != pairs[:, 1]).all()
    assert len({tuple(p) for p in pairs}) == 12


@settings(max_examples=15, deadline=None)
@given(st.integers(40, 80), st.floats(0.25, 0.45), st.integers(0, 10_000))
def test_unseen_genes_share_no_gene_with_training_pairs(size: int, frac: float, seed: int) -> None:
    universe = _universe(seed % 3)
    net = subnetwork(universe, size, seed=seed)
    split = split_genes(net.adjacency(), unseen_fraction=frac, seed=seed)
    train_genes = set(split.train_pairs.ravel())
    assert train_genes.isdisjoint(split.unseen_pairs.ravel())
    assert set(split.unseen_pairs.ravel()) <= set(split.unseen_genes)
    # seen evaluation pairs are new pairs of seen genes
    train = {tuple(p) for p in split.train_pairs}
    assert train.isdisjoint(tuple(p) for p in split.seen_pairs)
    assert set(split.seen_pairs.ravel()) <= set(split.seen_genes)
    # every scored part holds edges and non-edges
    adj = net.adjacency()
    for pairs in (split.train_pairs, split.seen_pairs, split.unseen_pairs):
        y = adj[pairs[:, 0], pairs[:, 1]]
        assert 0 < y.sum() < y.size


def test_bad_split_arguments() -> None:
    with pytest.raises(ValueError, match="square"):
        split_genes(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="unseen_fraction"):
        split_genes(np.eye(10, k=1), unseen_fraction=1.5)
