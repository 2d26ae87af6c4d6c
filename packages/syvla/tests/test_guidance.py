"""Similar-sample retrieval returns the planted neighbour; the success buffer keeps demos."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.syvla.guidance import SuccessBuffer, nearest_neighbours


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 200), d=st.integers(2, 32))
def test_retrieval_returns_the_planted_neighbour(seed: int, n: int, d: int) -> None:
    g = torch.Generator().manual_seed(seed)
    keys = torch.nn.functional.normalize(
        torch.randn(n, d, generator=g, dtype=torch.float64), dim=-1
    )
    planted = torch.randint(0, n, (5,), generator=g)
    # queries: scaled, slightly perturbed copies of planted keys (cosine is scale-free)
    noise = 1e-4 * torch.randn(5, d, generator=g, dtype=torch.float64)
    queries = 3.0 * (keys[planted] + noise)
    sims, idx = nearest_neighbours(queries, keys, k=1)
    # the planted key is the nearest unless another key is a near-duplicate of it
    other = keys @ keys[planted].T  # (n, 5)
    other[planted, torch.arange(5)] = -2
    clear = other.max(0).values < 1 - 1e-2
    assert torch.equal(idx[clear, 0], planted[clear])
    assert torch.all(sims[clear, 0] > 0.999)


def test_retrieval_orders_neighbours_and_checks_shapes() -> None:
    keys = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    sims, idx = nearest_neighbours(torch.tensor([[1.0, 0.1]]), keys, k=3)
    assert idx.tolist() == [[0, 2, 1]]
    assert sims[0, 0] >= sims[0, 1] >= sims[0, 2]
    with pytest.raises(ValueError, match="empty"):
        nearest_neighbours(torch.ones(1, 2), torch.ones(0, 2))
    with pytest.raises(ValueError, match="dim"):
        nearest_neighbours(torch.ones(1, 3), keys)


def test_success_buffer_keeps_demos_and_the_latest_successes() -> None:
    v = np.zeros((3, 13, 13, 3), np.uint8)
    buf = SuccessBuffer(v, np.arange(3), np.array([0, 1, 2]), capacity=4)
    for k in range(3):
        buf.add(v[:2] + k + 1, np.array([10 + k, 10 + k]), np.array([3, 3]))
    _views, text, actions = buf.arrays()
    assert len(buf) == 7
    assert text.tolist() == [0, 1, 2, 11, 11, 12, 12]
    assert actions[:3].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="same length"):
        SuccessBuffer(v, np.arange(2), np.arange(3), capacity=1)
