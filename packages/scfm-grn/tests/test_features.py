"""VVP, GT and the scFM read-outs on models whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.scfm_grn.adapters import CallableScFM
from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.features import (
    attention_scores,
    embedding_scores,
    gradient_trajectory,
    query_layout,
    virtual_value_perturbation,
    zero_out_scores,
)
from icml26.scfm_grn.model import ScFM, ScFMConfig

GENES = tuple(f"g{i}" for i in range(6))


def linear_model(w: np.ndarray) -> CallableScFM:
    """out = (visible values) @ W: d out_j / d v_i = W[i, j] for every visible i."""
    wt = torch.tensor(w, dtype=torch.float32)

    def fn(ids: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.where(mask, torch.zeros_like(values), values) @ wt

    return CallableScFM(fn, {g: i for i, g in enumerate(GENES)})


@pytest.fixture
def w() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(6, 6))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.integers(1, 5), st.integers(0, 100))
def test_query_layout_reads_every_pair_once(g: int, k: int, seed: int) -> None:
    src, masks = query_layout(g, k, seed)
    counts = np.zeros((g, g), dtype=int)
    for i, m in zip(src, masks, strict=True):
        assert not m[i]
        counts[i] += m
    np.testing.assert_array_equal(counts, 1 - np.eye(g, dtype=int))


def test_vvp_of_a_linear_model_is_the_weight_times_the_centred_values(w: np.ndarray) -> None:
    levels = np.linspace(-2, 2, 8)
    feats = virtual_value_perturbation(linear_model(w), GENES, levels=tuple(levels), baseline=0.7)
    expected = w[:, :, None] * (levels - levels.mean())[None, None, :]
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(feats[off], expected[off], atol=1e-5)


@pytest.mark.parametrize("mode", ["jvp", "jacrev"])
def test_gt_of_a_linear_model_is_its_jacobian(w: np.ndarray, mode: str) -> None:
    feats = gradient_trajectory(linear_model(w), GENES, levels=(-1.0, 0.0, 2.0), mode=mode)
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(feats[off], np.repeat(w[off][:, None], 3, axis=1), atol=1e-5)


def test_gt_jvp_and_jacrev_agree_with_finite_differences_on_the_scfm() -> None:
    torch.manual_seed(0)
    model = ScFM(GENES, ScFMConfig(width=16, layers=2, heads=2)).eval()
    levels = (-0.5, 0.8)
    a = gradient_trajectory(model, GENES, levels=levels, mode="jvp")
    b = gradient_trajectory(model, GENES, levels=levels, mode="jacrev")
    np.testing.assert_allclose(a, b, atol=1e-5)
    src, masks = query_layout(6, 2, 0)
    i, m = src[0], masks[0]
    ids = model.token_ids(GENES).unsqueeze(0)
    eps = 1e-2
    v = torch.full((1, 6), levels[1])
    up, down = v.clone(), v.clone()
    up[0, i] += eps
    down[0, i] -= eps
    with torch.no_grad():
        mask = torch.from_numpy(m).unsqueeze(0)
        fd = (model.predict(ids, up, mask) - model.predict(ids, down, mask)) / (2 * eps)
    np.testing.assert_allclose(a[i, m, 1], fd[0, torch.from_numpy(m)].numpy(), atol=2e-3)


def test_zero_out_recovers_a_planted_edge() -> None:
    w = np.zeros((6, 6))
    w[2, 4] = 1.5  # the only dependency: gene 4 follows gene 2
    rng = np.random.default_rng(1)
    raw = rng.normal(size=(40, 6))
    data = ExpressionData.build("toy", GENES, raw, None, "continuous")
    scores = zero_out_scores(linear_model(w), data, n_cells=40)
    scores[np.eye(6, dtype=bool)] = -1
    assert np.unravel_index(np.argmax(scores), scores.shape) == (2, 4)
    assert np.sort(scores, axis=None)[-2] < 1e-6


def test_attention_and_embedding_scores_have_pair_shape() -> None:
    torch.manual_seed(0)
    model = ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2)).eval()
    data = ExpressionData.build(
        "toy", GENES, np.random.default_rng(0).normal(size=(10, 6)), None, "continuous"
    )
    att = attention_scores(model, data, n_cells=10)
    assert att.shape == (6, 6)
    np.testing.assert_allclose(att.sum(axis=0), 1.0, atol=1e-5)  # each target's attention sums to 1
    emb = embedding_scores(model, data)
    np.testing.assert_allclose(np.diag(emb), 1.0, atol=1e-5)
    with pytest.raises(TypeError, match="attention"):
        attention_scores(linear_model(np.eye(6)), data)


def test_unknown_gene_is_refused(w: np.ndarray) -> None:
    with pytest.raises(KeyError, match="vocabulary"):
        virtual_value_perturbation(linear_model(w), ("g0", "nope"))


def test_features_restricted_to_tf_sources_match_the_full_ones(w: np.ndarray) -> None:
    """Reading only TF sources gives the full features' rows for those sources."""
    model = linear_model(w)
    full = virtual_value_perturbation(model, GENES)
    part = virtual_value_perturbation(model, GENES, sources=[1, 4])
    np.testing.assert_allclose(part, full[[1, 4]], atol=1e-6)
    gt = gradient_trajectory(model, GENES, levels=(0.5,), sources=[2])
    np.testing.assert_allclose(gt, gradient_trajectory(model, GENES, levels=(0.5,))[[2]], atol=1e-6)
