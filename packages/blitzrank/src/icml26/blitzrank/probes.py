"""How much an oracle's answer depends on the order the items are shown in.

``position_flip``: show ``k`` items that are neighbours in the first-stage list (what a
sliding window or a tournament round shows), then the same items in the reverse order, and
count the share of the ``k choose 2`` pairs whose order differs between the two answers.
Averaged over windows at random offsets. For a consistent, order-blind oracle it is 0; with
fresh noise on every call (``sim_pl``) it is the noise's disagreement rate; with persistent
noise it measures the position bias alone. Permutation self-consistency studies of listwise
LLM rerankers shuffle the prompt for the same reason; this is the pairwise version of that
test, measured the same way for the simulated, the MiniLM and the real LLM oracles.
"""

from __future__ import annotations

import numpy as np

from icml26.blitzrank.oracles.base import Oracle

__all__ = ["flipped_pairs", "position_flip"]


def flipped_pairs(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """Share of pairs ordered differently by two orders of the same items."""
    if sorted(a) != sorted(b) or len(a) < 2:
        raise ValueError(f"flipped_pairs needs two orders of the same >= 2 items, got {a}, {b}")
    pos_b = {item: r for r, item in enumerate(b)}
    rb = np.array([pos_b[item] for item in a])  # b's positions, in a's order
    upper = np.triu(np.ones((len(a), len(a)), dtype=bool), 1)
    return float(np.mean((rb[:, None] > rb[None, :])[upper]))


def position_flip(oracle: Oracle, k: int, probes: int, rng: np.random.Generator) -> float:
    """Mean share of flipped pairs over ``probes`` windows of ``k`` neighbouring items
    (``0..n-1`` is the first-stage order), each asked forwards and reversed (2 calls)."""
    n = int(oracle.n)
    k = min(k, n, int(oracle.k))
    if probes < 1 or k < 2:
        raise ValueError(f"position_flip needs probes >= 1 and k >= 2, got {probes}, {k}")
    out = []
    for _ in range(probes):
        start = int(rng.integers(0, n - k + 1))
        items = list(range(start, start + k))
        fwd = oracle.compare(items).order
        rev = oracle.compare(items[::-1]).order
        out.append(flipped_pairs(fwd, rev))
    return float(np.mean(out))
