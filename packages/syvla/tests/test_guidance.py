"""Similar-sample retrieval returns the planted neighbour; the success buffer keeps demos."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.syvla.guidance import (
    SuccessBuffer,
    calibrate_floor,
    nearest_neighbours,
    select_guides,
)


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


def test_gate_retrieves_only_same_instruction_samples_above_the_quantile() -> None:
    g = torch.Generator().manual_seed(0)
    q_keys, b_keys = torch.randn(40, 8, generator=g), torch.randn(30, 8, generator=g)
    q_text = np.repeat(np.arange(4), 10)  # instructions 0..3
    b_text = np.repeat(np.array([0, 1, 2]), 10)  # instruction 3 has no successful sample
    sel = select_guides(q_keys, q_text, b_keys, b_text, quantile=0.5, max_frac=1.0)
    assert sel.candidates == 30  # the ten states of instruction 3 retrieve nothing
    assert 0 < len(sel.query) < sel.candidates  # the gate excludes samples
    assert sel.fraction == len(sel.query) / 40
    assert np.array_equal(q_text[sel.query], b_text[sel.sample])  # same instruction only
    assert np.all(sel.similarity >= sel.threshold)
    assert len(set(sel.sample.tolist())) == len(sel.sample)  # each sample at most once
    # every same-instruction state left out is below the threshold or lost a duplicate
    cos = (
        torch.nn.functional.normalize(q_keys, dim=-1)
        @ torch.nn.functional.normalize(b_keys, dim=-1).T
    )
    for i in sorted(set(range(30)) - set(sel.query.tolist())):
        best = cos[i, b_text == q_text[i]].max().item()
        pool = np.nonzero(b_text == q_text[i])[0]
        dup = pool[cos[i, pool].argmax().item()] in sel.sample
        assert best < sel.threshold + 1e-6 or dup
    # a tighter quantile lets fewer through; quantile 0 lets every candidate state try
    tight = select_guides(q_keys, q_text, b_keys, b_text, quantile=0.9, max_frac=1.0)
    assert len(tight.query) < len(sel.query)
    capped = select_guides(q_keys, q_text, b_keys, b_text, quantile=0.0, max_frac=0.1)
    assert len(capped.query) == 4
    with pytest.raises(ValueError, match="quantile"):
        select_guides(q_keys, q_text, b_keys, b_text, quantile=1.5, max_frac=0.1)
    with pytest.raises(ValueError, match="lengths"):
        select_guides(q_keys, q_text[:3], b_keys, b_text, quantile=0.5, max_frac=0.1)


def test_uniformly_low_similarities_retrieve_nothing() -> None:
    g = torch.Generator().manual_seed(3)
    b_keys = torch.randn(40, 64, generator=g)
    b_text = np.arange(40) % 2
    q_keys = torch.randn(30, 64, generator=g)  # unrelated states: cosine near 0
    q_text = np.arange(30) % 2
    loose = select_guides(q_keys, q_text, b_keys, b_text, quantile=0.75, max_frac=1.0)
    assert len(loose.query) > 0  # the quantile alone always lets its top share through
    sel = select_guides(q_keys, q_text, b_keys, b_text, quantile=0.75, max_frac=1.0, floor=0.8)
    assert len(sel.query) == 0
    assert sel.fraction == 0.0
    assert sel.threshold == 0.8
    # a state close to a same-instruction sample still passes the floor
    q_keys[0] = b_keys[4] + 0.01 * torch.randn(64, generator=g)
    sel = select_guides(q_keys, q_text, b_keys, b_text, quantile=0.75, max_frac=1.0, floor=0.8)
    assert sel.query.tolist() == [0]
    assert sel.sample.tolist() == [4]


def test_calibrated_floor_is_the_cross_instruction_neighbour_quantile() -> None:
    g = torch.Generator().manual_seed(4)
    keys = torch.randn(50, 16, generator=g)
    text = np.arange(50) % 3
    k = torch.nn.functional.normalize(keys, dim=-1)
    sims = (k @ k.T).numpy()
    best = [max(sims[i, j] for j in range(50) if text[j] != text[i]) for i in range(50)]
    assert calibrate_floor(keys, text, quantile=0.5) == pytest.approx(np.quantile(best, 0.5))
    assert calibrate_floor(keys, np.zeros(50, dtype=int), quantile=0.5) == -1.0
    with pytest.raises(ValueError, match="quantile"):
        calibrate_floor(keys, text, quantile=2.0)
