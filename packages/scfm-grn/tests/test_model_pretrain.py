"""The scFM: shapes, masking, checkpoint round trip, and pretraining that learns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.model import CellModel, ScFM, ScFMConfig, load_scfm, save_scfm
from icml26.scfm_grn.pretraining import (
    GaussianConditional,
    PretrainConfig,
    Selection,
    coexpression_embeddings,
    masked_loss,
    masked_variance_explained,
    pooled_covariance,
    pretrain,
    sample_batch,
)

GENES = tuple(f"g{i}" for i in range(8))


def test_shapes_and_protocol() -> None:
    model = ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2))
    assert isinstance(model, CellModel)
    ids = model.token_ids(GENES).expand(3, -1)
    values = torch.randn(3, 8)
    mask = torch.zeros(3, 8, dtype=torch.bool)
    assert model.predict(ids, values, mask).shape == (3, 8)
    assert model.attention(ids, values, mask).shape == (3, 8, 8)
    assert model.embed(ids, values, mask).shape == (3, 8, 16)


def test_a_masked_value_cannot_leak() -> None:
    model = ScFM(GENES, ScFMConfig(width=16, layers=2, heads=2)).eval()
    ids = model.token_ids(GENES).unsqueeze(0)
    mask = torch.zeros(1, 8, dtype=torch.bool)
    mask[0, 3] = True
    a, b = torch.zeros(1, 8), torch.zeros(1, 8)
    b[0, 3] = 5.0  # differs only in the hidden gene
    with torch.no_grad():
        torch.testing.assert_close(model.predict(ids, a, mask), model.predict(ids, b, mask))


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    model = ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2)).eval()
    save_scfm(model, tmp_path / "m.safetensors")
    again = load_scfm(tmp_path / "m.safetensors")
    assert again.genes == GENES
    ids = model.token_ids(GENES).unsqueeze(0)
    v, m = torch.randn(1, 8), torch.zeros(1, 8, dtype=torch.bool)
    with torch.no_grad():
        torch.testing.assert_close(model.predict(ids, v, m), again.predict(ids, v, m))
    with pytest.raises(FileNotFoundError):
        load_scfm(tmp_path / "absent.safetensors")


def test_masked_reconstruction_loss_falls_on_a_toy() -> None:
    """Genes come in copies (g0 = g1 = g2, g3 = g4 = ...): a hidden gene is predictable."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=(256, 2))
    raw = np.repeat(base, 4, axis=1) + 0.05 * rng.normal(size=(256, 8))
    data = ExpressionData.build("toy", GENES, raw, None, "continuous")
    torch.manual_seed(0)
    model = ScFM(GENES, ScFMConfig(width=32, layers=2, heads=2))
    cfg = PretrainConfig(steps=150, batch_size=32, max_genes=8, lr=5e-3, seed=0)
    losses = pretrain(model, [data], cfg)
    assert np.mean(losses[:10]) > 0.7  # predicting the mean costs ~ the variance (1)
    assert np.mean(losses[-25:]) < 0.5 * np.mean(losses[:10])


def test_pretraining_resumes_exactly() -> None:
    rng = np.random.default_rng(0)
    data = ExpressionData.build("toy", GENES, rng.normal(size=(64, 8)), None, "continuous")
    cfg = PretrainConfig(steps=12, batch_size=8, max_genes=8, seed=0)
    torch.manual_seed(0)
    full = pretrain(ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2)), [data], cfg)
    saved: dict = {}

    def keep(step: int, loss: float, state: dict) -> None:
        if step == 5:
            import copy

            saved.update(copy.deepcopy(state))

    torch.manual_seed(0)
    pretrain(ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2)), [data], cfg, on_step=keep)
    resumed = pretrain(
        ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2)), [data], cfg, state=saved
    )
    np.testing.assert_allclose(resumed, full, rtol=1e-5)


def test_batches_hide_and_show_something() -> None:
    data = ExpressionData.build(
        "toy", GENES, np.random.default_rng(0).normal(size=(20, 8)), None, "continuous"
    )
    model = ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2))
    ids, values, mask = sample_batch(
        model, data, PretrainConfig(batch_size=20, max_genes=8), np.random.default_rng(0)
    )
    assert mask.any(dim=1).all()
    assert (~mask).any(dim=1).all()
    assert torch.isfinite(masked_loss(model, ids, values, mask))


def test_bad_config() -> None:
    with pytest.raises(ValueError, match="mask_low"):
        PretrainConfig(mask_low=0.8, mask_high=0.2)
    with pytest.raises(ValueError, match="heads"):
        ScFMConfig(width=10, heads=3)


def _gaussian_data(n: int = 400) -> ExpressionData:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(8, 8))
    return ExpressionData.build("g", GENES, rng.normal(size=(n, 8)) @ a, None, "continuous")


class _Oracle:
    """Predicts every hidden value exactly (reads the values it is not meant to see)."""

    training = False

    def __init__(self, scale: float) -> None:
        self.vocab = {g: i for i, g in enumerate(GENES)}
        self.scale = scale

    def eval(self) -> _Oracle:
        return self

    def token_ids(self, genes: tuple[str, ...]) -> torch.Tensor:
        return torch.tensor([self.vocab[g] for g in genes])

    def predict(self, ids: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.scale * values


def test_variance_explained_is_zero_for_the_mean_and_one_for_the_truth() -> None:
    data = _gaussian_data()
    assert masked_variance_explained(_Oracle(1.0), [data]) == pytest.approx(1.0)
    # predicting each gene's mean (0 for z-scores) explains nothing
    assert abs(masked_variance_explained(_Oracle(0.0), [data])) < 0.02
    assert masked_variance_explained(_Oracle(2.0), [data]) < 0.0  # worse than the mean


def test_knn_reference_is_sklearns_knn_imputer_and_uses_other_cells() -> None:
    from sklearn.impute import KNNImputer

    from icml26.scfm_grn.pretraining import KnnReference, knn_reference_score

    data = _gaussian_data()
    donors, query = data.cell_subset(np.arange(100)), data.cell_subset(np.arange(100, 120))
    ref = KnnReference(donors, k=5)
    ids = ref.token_ids(GENES).expand(20, -1)
    mask = torch.zeros(20, 8, dtype=torch.bool)
    mask[:, 5:] = True
    pred = ref.predict(ids, torch.from_numpy(query.values), mask)
    holes = query.values.astype(np.float64).copy()
    holes[:, 5:] = np.nan
    direct = KNNImputer(n_neighbors=5).fit(donors.values.astype(np.float64)).transform(holes)
    np.testing.assert_allclose(pred[:, 5:].numpy(), direct[:, 5:], rtol=1e-5, atol=1e-6)
    # correlated genes: kNN explains some masked variance, and never copies the cell itself
    assert 0.0 < knn_reference_score(data, seed=0) < 0.99


def test_gaussian_conditional_matches_least_squares() -> None:
    """Hidden genes 5..7 from visible 0..4: the conditional mean under the sample covariance
    is the least-squares fit (no intercept: z-scores have mean 0)."""
    data = _gaussian_data()
    x = data.values.astype(np.float64)
    ref = GaussianConditional(GENES, np.cov(x.T, bias=True), ridge=0.0)
    ids = ref.token_ids(GENES).expand(len(x), -1)
    mask = torch.zeros(len(x), 8, dtype=torch.bool)
    mask[:, 5:] = True
    pred = ref.predict(ids, torch.from_numpy(x).float(), mask)
    xc = x - x.mean(axis=0)
    coef, *_ = np.linalg.lstsq(xc[:, :5], xc[:, 5:], rcond=None)
    np.testing.assert_allclose(pred[:, 5:].numpy(), x[:, :5] @ coef, atol=1e-4)
    assert (pred[:, :5] == 0).all()


def test_selection_keeps_the_best_weights() -> None:
    model = ScFM(GENES, ScFMConfig(width=16, layers=1, heads=2))
    sel = Selection([])
    sel.observe(10, 0.2, model)
    best = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    sel.observe(20, 0.1, model)
    assert sel.best_step == 10
    assert sel.curve == [(10, 0.2), (20, 0.1)]
    assert sel.best_state is not None
    for k, v in best.items():
        torch.testing.assert_close(sel.best_state[k], v)


def test_pooled_covariance_averages_over_the_datasets_measuring_both_genes() -> None:
    rng = np.random.default_rng(2)
    a = ExpressionData.build("a", GENES[:5], rng.normal(size=(30, 5)), None, "continuous")
    b = ExpressionData.build("b", GENES[3:], rng.normal(size=(50, 5)), None, "continuous")
    cov = pooled_covariance([a, b], GENES)
    xa, xb = a.values.astype(np.float64), b.values.astype(np.float64)
    # g0, g1 only in a; g3, g4 in both (30 + 50 cells); g0 and g7 never together
    assert cov[0, 1] == pytest.approx(np.mean(xa[:, 0] * xa[:, 1]))
    both = np.concatenate([xa[:, 3] * xa[:, 4], xb[:, 0] * xb[:, 1]])
    assert cov[3, 4] == pytest.approx(both.mean())
    assert cov[0, 7] == 0.0
    np.testing.assert_array_equal(np.diag(cov), 1.0)
    np.testing.assert_allclose(cov, cov.T)


def test_coexpression_embeddings_are_the_covariance_top_eigenspace() -> None:
    """emb @ emb.T is proportional to the best rank-k approximation of the corpus covariance
    (an SVD reference), entries have the asked SD, and a width above the genes is refused."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 6)) + 0.3 * rng.normal(size=(200, 6))
    x = (x - x.mean(0)) / x.std(0)
    genes = tuple(f"g{i}" for i in range(6))
    data = ExpressionData("d", genes, x, x.astype(np.float32))
    emb = coexpression_embeddings([data], genes, 2, scale=0.5)
    assert emb.shape == (6, 2)
    assert emb.dtype == np.float32
    np.testing.assert_allclose(emb.std(), 0.5, rtol=1e-4)
    u, sv, _ = np.linalg.svd(x.T @ x / len(x))
    ref = u[:, :2] * sv[:2] @ u[:, :2].T
    got = emb.astype(np.float64) @ emb.T
    np.testing.assert_allclose(got / np.trace(got), ref / np.trace(ref), atol=1e-4)
    with pytest.raises(ValueError, match="exceeds"):
        coexpression_embeddings([data], genes, 7)
