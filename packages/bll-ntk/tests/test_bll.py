"""The wrappers: BLL = conjugate regression on the features, the variance guarantee of the
NTK-projected BLL, the softmax Laplace against autograd, and clear errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from icml26.bll_ntk.bll import BLL, NTKBLL
from icml26.bll_ntk.glm import LastLayerGLM, predictive_probs
from icml26.bll_ntk.jacobians import ntk_projection
from icml26.bll_ntk.laplace import LastLayerLaplace, LinearisedLaplace
from icml26.bll_ntk.network import LastLayerError, LastLayerModel, make_mlp
from icml26.bll_ntk.posterior import gaussian_nll


def _reg_data(n: int, d_in: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d_in, generator=g)
    y = torch.sin(x.sum(1, keepdim=True)) + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def test_bll_is_bayesian_linear_regression_on_the_features() -> None:
    model = make_mlp(2, 1, (8, 6))
    x, y = _reg_data(50, 2, 0)
    post = BLL(model, alpha=0.8, noise=0.05).fit(x, y)
    phi, _ = LastLayerModel(model).features(x)
    phi = phi.double()
    cov = torch.linalg.inv(0.8 * torch.eye(phi.shape[1], dtype=torch.float64) + phi.T @ phi / 0.05)
    mean = cov @ phi.T @ y.double()[:, 0] / 0.05
    xs = torch.randn(9, 2)
    ps, _ = LastLayerModel(model).features(xs)
    pred = post.predict(xs)
    torch.testing.assert_close(pred.mean[:, 0], ps.double() @ mean)
    torch.testing.assert_close(
        pred.var[:, 0], torch.einsum("nd,de,ne->n", ps.double(), cov, ps.double())
    )
    assert pred.noise == 0.05


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 60),
    width=st.integers(2, 9),
    d_out=st.integers(1, 3),
    log_alpha=st.floats(-3, 3),
    log_noise=st.floats(-4, 1),
    ridge=st.floats(1e-3, 10.0),
)
def test_ntk_variance_never_below_bll(
    seed: int, n: int, width: int, d_out: int, log_alpha: float, log_noise: float, ridge: float
) -> None:
    """With shared (α, σ²) the NTK-BLL prior α⁻¹(I + M) ⪰ α⁻¹I, so every posterior variance
    (and the whole posterior covariance) is at least BLL's, on random networks and data."""
    torch.manual_seed(seed)
    model = make_mlp(3, d_out, (width, width))
    x = torch.randn(n, 3)
    y = torch.randn(n, d_out)
    a, s = 10.0**log_alpha, 10.0**log_noise
    bll = BLL(model, alpha=a, noise=s).fit(x, y)
    ntk = NTKBLL(model, alpha=a, noise=s, ridge=ridge).fit(x, y)
    diff = ntk.posterior_.cov - bll.posterior_.cov
    assert (
        torch.linalg.eigvalsh(0.5 * (diff + diff.T)).min() >= -1e-9 * bll.posterior_.cov.abs().max()
    )
    xs = 3 * torch.randn(20, 3)
    vb, vn = bll.predict(xs).var, ntk.predict(xs).var
    assert bool((vn >= vb * (1 - 1e-7) - 1e-12).all())


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(10, 40), log_alpha=st.floats(-2, 2))
def test_classification_variance_never_below_bll_at_a_shared_linearisation(
    seed: int, n: int, log_alpha: float
) -> None:
    torch.manual_seed(seed)
    model = make_mlp(3, 3, (5, 4))
    net = LastLayerModel(model)
    x = torch.randn(n, 3)
    y = torch.randint(0, 3, (n,))
    phi, _ = net.features(x)
    K = ntk_projection(net, x).prior_factor()
    v0 = net.head_vector()
    a = 10.0**log_alpha
    b = LastLayerGLM(3, alpha=a, refit=False).fit(phi, y, v0)
    k = LastLayerGLM(3, K=K, alpha=a, refit=False).fit(phi, y, v0)
    diff = k.cov - b.cov
    assert torch.linalg.eigvalsh(0.5 * (diff + diff.T)).min() >= -1e-9


def test_softmax_laplace_map_and_covariance_against_autograd() -> None:
    torch.manual_seed(1)
    phi = torch.cat([torch.randn(60, 4), torch.ones(60, 1)], 1).double()
    y = torch.randint(0, 3, (60,))
    K = torch.eye(15, dtype=torch.float64) + 0.3 * torch.ones(15, 15, dtype=torch.float64)
    post = LastLayerGLM(3, K=K, alpha=0.7, refit=True).fit(
        phi, y, torch.zeros(15, dtype=torch.float64)
    )
    Kinv = torch.linalg.inv(K)

    def neg_log_post(v: torch.Tensor) -> torch.Tensor:
        logits = phi @ v.reshape(3, 5).T
        return -torch.log_softmax(logits, 1)[torch.arange(60), y].sum() + 0.35 * v @ Kinv @ v

    v = post.mean.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(neg_log_post(v), v)
    assert g.abs().max() < 1e-6
    H = torch.autograd.functional.hessian(neg_log_post, post.mean)
    torch.testing.assert_close(post.cov, torch.linalg.inv(H), rtol=1e-6, atol=1e-9)


def test_probit_and_mc_predictives_agree_roughly() -> None:
    mean = torch.tensor([[2.0, 0.0, -1.0]], dtype=torch.float64)
    cov = torch.diag(torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64))[None]
    p1 = predictive_probs(mean, cov, method="probit")
    p2 = predictive_probs(
        mean, cov, method="mc", n_samples=20000, generator=torch.Generator().manual_seed(0)
    )
    torch.testing.assert_close(p1, p2, atol=0.05, rtol=0)
    assert p1[0, 0] < torch.softmax(mean, 1)[0, 0]  # uncertainty flattens the softmax


@pytest.mark.parametrize("cls", [BLL, NTKBLL, LastLayerLaplace, LinearisedLaplace])
def test_every_posterior_fits_regression_and_classification(cls: type) -> None:
    x, y = _reg_data(30, 2, 1)
    pred = cls(make_mlp(2, 1, (6, 6))).fit(x, y).predict(x[:5])
    assert pred.mean.shape == (5, 1)
    assert bool((pred.var >= 0).all())
    assert pred.noise > 0
    labels = (x[:, 0] > 0).long()
    post = cls(make_mlp(2, 2, (6, 6)), likelihood="classification").fit(x, labels)
    p = post.predict(x[:5])
    assert p.probs.shape == (5, 2)
    torch.testing.assert_close(p.probs.sum(1), torch.ones(5, dtype=p.probs.dtype))


def test_bad_inputs_raise_clear_errors() -> None:
    model = make_mlp(2, 1, (4,))
    x, y = _reg_data(10, 2, 0)
    with pytest.raises(LastLayerError, match="no last layer named 'out'"):
        BLL(model, last_layer="out")
    with pytest.raises(LastLayerError, match=r"not an nn\.Linear"):
        BLL(model, last_layer="act0")
    not_last = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    with pytest.raises(LastLayerError, match="final operation"):
        BLL(not_last, last_layer="0").fit(x, torch.randn(10, 3))
    with pytest.raises(ValueError, match="shape"):
        BLL(model).fit(x, y[:-1])
    bad = x.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        BLL(model).fit(bad, y)
    with pytest.raises(RuntimeError, match="not fitted"):
        NTKBLL(model).predict(x)
    with pytest.raises(ValueError, match="subsample"):
        NTKBLL(model, subsample=0)
    with pytest.raises(ValueError, match="likelihood"):
        BLL(model, likelihood="poisson")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\)"):
        BLL(make_mlp(2, 2, (4,)), likelihood="classification").fit(x, torch.full((10,), 5))


@pytest.mark.parametrize("likelihood", ["regression", "classification"])
@pytest.mark.parametrize("with_val", [False, True])
def test_shared_hyperparameters_keep_the_variance_guarantee(
    likelihood: str, with_val: bool
) -> None:
    """``hyperparameters="bll"`` is the theorem's setting: with BLL's hyperparameters (from its
    evidence, or from its validation grid search), no NTK-BLL predictive variance is below
    BLL's."""
    torch.manual_seed(4)
    model = make_mlp(3, 3 if likelihood == "classification" else 1, (8, 8))
    x = torch.randn(50, 3)
    y = torch.randint(0, 3, (50,)) if likelihood == "classification" else torch.randn(50, 1)
    val = (x[:20] + 0.1, y[:20]) if with_val else None
    bll = BLL(model, likelihood=likelihood).fit(x, y, val=val)
    ntk = NTKBLL(model, likelihood=likelihood, hyperparameters="bll").fit(x, y, val=val)
    assert ntk.alpha_ == pytest.approx(bll.alpha_)
    xs = 3 * torch.randn(30, 3)
    pb, pn = bll.predict(xs), ntk.predict(xs)
    vb, vn = (pb.var, pn.var) if likelihood == "regression" else (pb.logit_var, pn.logit_var)
    assert bool((vn >= vb * (1 - 1e-7) - 1e-12).all())


def test_last_layer_laplace_is_bll_in_classification() -> None:
    """Why the run reports ``ll_laplace`` for regression only: for softmax classification,
    BLL (Laplace at the trained head) and the last-layer Laplace are one computation."""
    torch.manual_seed(5)
    model = make_mlp(2, 3, (6,))
    x = torch.randn(40, 2)
    y = torch.randint(0, 3, (40,))
    a = BLL(model, likelihood="classification").fit(x, y).predict(x)
    b = LastLayerLaplace(model, likelihood="classification").fit(x, y).predict(x)
    torch.testing.assert_close(a.probs, b.probs)
    torch.testing.assert_close(a.logit_var, b.logit_var)


@pytest.mark.parametrize("cls", [BLL, NTKBLL])
def test_float_labels_are_refused_even_when_they_would_not_change_the_fit(cls: type) -> None:
    """With ``refit=False`` the labels enter only the evidence: float labels such as 0.72 used
    to be accepted silently. They are refused with the fix named."""
    model = make_mlp(2, 3, (4,))
    x = torch.randn(12, 2)
    for bad in (torch.tensor([0.72, 1.5, 0.0] * 4), torch.zeros(12), torch.zeros(12).bool()):
        with pytest.raises(TypeError, match=r"integer class indices.*y\.long\(\)"):
            cls(model, likelihood="classification").fit(x, bad)
    with pytest.raises(ValueError, match=r"shape \(12,\)"):
        cls(model, likelihood="classification").fit(x, torch.zeros(12, 1, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        cls(model, likelihood="classification").fit(x, torch.full((12,), -1))


def test_wrong_feature_count_and_target_shape_name_the_expected_shape() -> None:
    model = make_mlp(8, 1, (6,))
    x, y = torch.randn(20, 8), torch.randn(20)
    with pytest.raises(ValueError, match=r"could not run on inputs of shape \(20, 5\)"):
        BLL(model).fit(torch.randn(20, 5), y)
    post = BLL(model).fit(x, y)
    with pytest.raises(ValueError, match=r"shape \(4, 5\), expected \(N, 8\)"):
        post.predict(torch.randn(4, 5))
    with pytest.raises(ValueError, match=r"expected \(20,\) or \(20, 1\)"):
        BLL(model).fit(x, torch.randn(20, 2))
    with pytest.raises(ValueError, match=r"add the batch dimension"):
        post.predict(torch.randn(8))
    with pytest.raises(TypeError, match=r"torch\.as_tensor"):
        post.predict(x.numpy())


def test_float64_inputs_are_converted_to_the_network_dtype() -> None:
    model = make_mlp(3, 1, (6,))
    x, y = torch.randn(30, 3), torch.randn(30)
    a = NTKBLL(model, alpha=1.0, noise=0.1).fit(x, y).predict(x[:5])
    b = NTKBLL(model, alpha=1.0, noise=0.1).fit(x.double(), y.double()).predict(x[:5].double())
    torch.testing.assert_close(a.mean, b.mean)
    torch.testing.assert_close(a.var, b.var)


@pytest.mark.parametrize("likelihood", ["regression", "classification"])
def test_a_dataloader_gives_the_tensor_fit(likelihood: str) -> None:
    """``fit`` / ``predict`` on a DataLoader (small batches, read twice for the projection)
    equal the same calls on tensors; the subsampled projection picks the same points."""
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(2)
    C = 3 if likelihood == "classification" else 1
    model = make_mlp(3, C, (7, 5))
    x = torch.randn(47, 3)
    y = torch.randint(0, 3, (47,)) if likelihood == "classification" else torch.randn(47)
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    val = (x[:10] + 0.3, y[:10])
    val_loader = DataLoader(TensorDataset(*val), batch_size=4)
    for kw in ({}, {"subsample": 20, "posterior_subsample": 30}):
        a = NTKBLL(model, likelihood=likelihood, **kw).fit(x, y, val=val)
        b = NTKBLL(model, likelihood=likelihood, batch_size=5, **kw).fit(loader, val=val_loader)
        assert a.alpha_ == pytest.approx(b.alpha_)
        tol = {"rtol": 1e-4, "atol": 1e-6}  # float32 features: batch sizes change the sums
        torch.testing.assert_close(a.projection_.M, b.projection_.M, **tol)
        pa = a.predict(x)
        pb = b.predict(DataLoader(TensorDataset(x), batch_size=6))
        if likelihood == "regression":
            torch.testing.assert_close(pa.mean, pb.mean, **tol)
            torch.testing.assert_close(pa.var, pb.var, **tol)
        else:
            torch.testing.assert_close(pa.probs, pb.probs, **tol)
            torch.testing.assert_close(pa.logit_var, pb.logit_var, **tol)
    with pytest.raises(ValueError, match="inside the loader"):
        BLL(model, likelihood=likelihood).fit(loader, y)
    with pytest.raises(ValueError, match="targets are missing"):
        BLL(model, likelihood=likelihood).fit(DataLoader(TensorDataset(x), batch_size=8))


def test_validation_grid_search_picks_the_lowest_validation_nll() -> None:
    """The laplace-torch recipe: (α, σ²) is the grid pair with the lowest Gaussian NLL on the
    validation data, checked against refitting a fixed-hyperparameter BLL at every pair."""
    torch.manual_seed(3)
    model = make_mlp(2, 1, (6,))
    x, y = _reg_data(60, 2, 5)
    xv, yv = _reg_data(25, 2, 6)
    alphas, noises = np.logspace(-2, 2, 5), np.logspace(-2, 0, 4)
    post = BLL(model).fit(x, y)
    Zv = LastLayerModel(model).features(xv)[0].double()
    post.posterior_.select_on_validation(Zv, yv[:, 0], alpha_grid=alphas, noise_grid=noises)
    best = min(
        (
            float(gaussian_nll(yv.double(), p.mean, p.total_var).mean()),
            a,
            s,
        )
        for a in alphas
        for s in noises
        for p in [BLL(model, alpha=float(a), noise=float(s)).fit(x, y).predict(xv)]
    )
    assert (post.posterior_.alpha, post.posterior_.noise) == pytest.approx((best[1], best[2]))


def test_classification_validation_search_matches_refits_and_helps_an_overconfident_head() -> None:
    torch.manual_seed(6)
    model = make_mlp(2, 3, (8,))
    with torch.no_grad():
        model.head.weight.mul_(40.0)  # an overconfident head
    x = torch.randn(80, 2)
    y = torch.randint(0, 3, (80,))
    xv, yv = torch.randn(40, 2), torch.randint(0, 3, (40,))
    post = BLL(model, likelihood="classification").fit(x, y, val=(xv, yv))

    def val_nll(p: torch.Tensor) -> float:
        return float(-torch.log(p[torch.arange(40), yv]).mean())

    refits = {
        a: val_nll(BLL(model, likelihood="classification", alpha=a).fit(x, y).predict(xv).probs)
        for a in (1e-4, 1e-2, 1.0, 1e2, 1e4)
    }
    chosen = val_nll(post.predict(xv).probs)
    assert chosen <= min(refits.values()) + 1e-9
    assert chosen < val_nll(torch.softmax(model(xv).double(), 1))  # better than the MAP


def test_kron_structure_equals_the_full_posterior_when_the_ggn_is_a_kronecker_product() -> None:
    """At a zero head every softmax is uniform, so Σ_n Γ_n ⊗ φφᵀ is exactly Γ ⊗ Σ φφᵀ: the
    Kronecker-factored posterior equals the dense one, for BLL and for NTK-BLL (whose shared
    block then matters: the blocks are compared at C = 1 output subsets too)."""
    torch.manual_seed(8)
    model = make_mlp(3, 4, (5,))
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.zero_()
    x, y = torch.randn(40, 3), torch.randint(0, 4, (40,))
    xs = torch.randn(9, 3)
    full = BLL(model, likelihood="classification", alpha=0.3).fit(x, y).predict(xs)
    kron = BLL(model, likelihood="classification", alpha=0.3, structure="kron").fit(x, y)
    pk = kron.predict(xs)
    torch.testing.assert_close(pk.probs, full.probs)
    torch.testing.assert_close(pk.logit_var, full.logit_var)
    ntk_full = NTKBLL(model, likelihood="classification", alpha=0.3).fit(x, y)
    ntk_kron = NTKBLL(model, likelihood="classification", alpha=0.3, structure="kron").fit(x, y)
    # the full projection's diagonal blocks are what the shared block averages
    d = ntk_full.net.feature_dim
    blocks = ntk_full.projection_.M.reshape(4, d, 4, d).diagonal(dim1=0, dim2=2).mean(-1)
    torch.testing.assert_close(ntk_kron.projection_.shared_block(d), blocks)
    sub = NTKBLL(
        model, likelihood="classification", alpha=0.3, structure="kron", output_subsample=2
    ).fit(x, y)
    assert sub.projection_.M.shape == (2 * d, 2 * d)
    assert bool((sub.predict(xs).logit_var > 0).all())
    with pytest.raises(ValueError, match="kron"):
        BLL(model, likelihood="regression", structure="kron")


def test_kron_evidence_and_memory_for_a_large_head() -> None:
    """A 300-class head: the dense posterior would be (300·17)² = 26M entries; the Kronecker
    one holds 300² + 17². Predictions are finite probabilities."""
    torch.manual_seed(9)
    model = make_mlp(5, 300, (16,))
    x, y = torch.randn(400, 5), torch.randint(0, 300, (400,))
    post = NTKBLL(model, likelihood="classification", structure="kron", output_subsample=8).fit(
        x, y, val=(x[:50], y[:50])
    )
    p = post.predict(x[:7])
    assert p.probs.shape == (7, 300)
    torch.testing.assert_close(p.probs.sum(1), torch.ones(7, dtype=p.probs.dtype))
    assert post.posterior_._Qa.shape == (300, 300)


@pytest.mark.parametrize("cls", [LastLayerLaplace, LinearisedLaplace])
@pytest.mark.parametrize("n_train", [80, 20])  # weight space; function space (LLA: n < P)
def test_laplace_baselines_pick_the_validation_grid_pair_like_refits(
    cls: type, n_train: int
) -> None:
    """The Laplace baselines use the BLLs' rule: (α, σ²) the grid pair with the lowest
    validation NLL, checked against refitting the baseline at every fixed pair."""
    torch.manual_seed(4)
    model = make_mlp(2, 1, (6,))
    x, y = _reg_data(n_train, 2, 7)
    xv, yv = _reg_data(30, 2, 8)
    post = cls(model).fit(x, y, val=(xv, yv))
    base = cls(model).fit(x, y)
    alphas = np.logspace(-4, 4, 33)
    noises = float(base.noise_) * np.logspace(-1.5, 1.5, 25)
    best = min(
        (float(gaussian_nll(yv.double(), p.mean, p.total_var).mean()), a, s)
        for a in alphas[::4]
        for s in noises[::4]
        for p in [cls(model, alpha=float(a), noise=float(s)).fit(x, y).predict(xv)]
    )
    chosen = post.predict(xv)
    assert float(gaussian_nll(yv.double(), chosen.mean, chosen.total_var).mean()) <= best[0] + 1e-9


def test_linearised_laplace_classification_picks_alpha_on_validation() -> None:
    torch.manual_seed(6)
    model = make_mlp(2, 3, (8,))
    with torch.no_grad():
        model.head.weight.mul_(40.0)  # an overconfident network
    x, y = torch.randn(60, 2), torch.randint(0, 3, (60,))
    xv, yv = torch.randn(40, 2), torch.randint(0, 3, (40,))
    post = LinearisedLaplace(model, likelihood="classification").fit(x, y, val=(xv, yv))

    def val_nll(p: torch.Tensor) -> float:
        return float(-torch.log(p[torch.arange(40), yv]).mean())

    refits = [
        val_nll(
            LinearisedLaplace(model, likelihood="classification", alpha=a)
            .fit(x, y)
            .predict(xv)
            .probs
        )
        for a in (1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e8)
    ]
    assert val_nll(post.predict(xv).probs) <= min(refits) + 1e-9
