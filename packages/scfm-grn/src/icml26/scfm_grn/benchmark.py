"""The GRN generalisation benchmark: which pairs the translator trains on and which it is
scored on.

On the training dataset the genes are split into *seen* and *unseen* genes. The translator
trains on a part of the seen-seen pairs; ``seen`` scores the rest of the seen-seen pairs
(new pairs, known genes); ``unseen_genes`` scores the pairs of two unseen genes (no gene of
the pair occurs in any training pair). ``unseen_dataset`` scores every pair of datasets
whose genes are disjoint from the training dataset's; ``krumsiek11`` scores the Boolean
myeloid model's pairs. Candidate pairs are all ordered pairs ``i != j``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["GeneSplit", "all_pairs", "split_genes"]


def all_pairs(n_genes: int, genes: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """Ordered pairs ``(i, j)``, ``i != j``, over ``genes`` (default: all), ``[N, 2]``."""
    idx = np.arange(n_genes) if genes is None else np.asarray(genes, dtype=np.int64)
    i, j = np.meshgrid(idx, idx, indexing="ij")
    keep = i != j
    return np.stack([i[keep], j[keep]], axis=1)


@dataclass(frozen=True)
class GeneSplit:
    """Index sets into one dataset's genes and the pair sets built from them."""

    seen_genes: NDArray[np.int64]
    unseen_genes: NDArray[np.int64]
    train_pairs: NDArray[np.int64]
    seen_pairs: NDArray[np.int64]
    unseen_pairs: NDArray[np.int64]


def split_genes(
    labels: NDArray[np.integer],
    *,
    unseen_fraction: float = 0.4,
    seen_eval_fraction: float = 0.3,
    seed: int = 0,
) -> GeneSplit:
    """Split genes, then pairs (stratified by label so every part holds edges).

    Args:
        labels: the training dataset's adjacency ``[G, G]``.
        unseen_fraction: share of genes held out of training entirely.
        seen_eval_fraction: share of seen-seen pairs kept for the ``seen`` score.
    """
    labels = np.asarray(labels)
    g = labels.shape[0]
    if labels.shape != (g, g) or g < 6:
        raise ValueError(f"labels must be a square adjacency of >= 6 genes, got {labels.shape}")
    if not 0 < unseen_fraction < 1 or not 0 < seen_eval_fraction < 1:
        raise ValueError("unseen_fraction and seen_eval_fraction must lie in (0, 1)")
    rng = np.random.default_rng(seed)
    n_unseen = max(3, round(unseen_fraction * g))
    off = labels * (1 - np.eye(g, dtype=labels.dtype))
    # every scored part must hold edges: redraw the gene split (deterministically) until the
    # unseen-unseen pairs hold at least half the edges a random split would give them
    wanted = max(1, round(0.5 * off.sum() * unseen_fraction**2))
    # (hub-dominated networks may never meet that: then the draw balancing both parts best,
    # with at least one unseen and two seen edges)
    best: tuple[float, NDArray[np.int64]] | None = None
    for _ in range(200):
        perm = rng.permutation(g)
        e_unseen = off[np.ix_(perm[:n_unseen], perm[:n_unseen])].sum()
        e_seen = off[np.ix_(perm[n_unseen:], perm[n_unseen:])].sum()
        if e_unseen >= wanted and e_seen >= 4:
            break
        if e_unseen >= 1 and e_seen >= 2:
            quality = min(e_unseen / wanted, e_seen / 4)
            if best is None or quality > best[0]:
                best = (quality, perm)
    else:
        if best is None:
            raise ValueError(
                "the training network is too sparse to split into seen and unseen genes"
            )
        perm = best[1]
    unseen, seen = np.sort(perm[:n_unseen]), np.sort(perm[n_unseen:])
    seen_all = all_pairs(g, seen)
    y = labels[seen_all[:, 0], seen_all[:, 1]]
    is_eval = np.zeros(len(seen_all), dtype=bool)
    for value in (0, 1):
        idx = np.flatnonzero(y == value)
        rng.shuffle(idx)
        is_eval[idx[: round(seen_eval_fraction * idx.size)]] = True
    return GeneSplit(seen, unseen, seen_all[~is_eval], seen_all[is_eval], all_pairs(g, unseen))
