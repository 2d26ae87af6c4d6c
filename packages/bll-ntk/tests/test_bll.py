"""The wrappers: BLL = conjugate regression on the features, the variance guarantee of the
NTK-projected BLL, the softmax Laplace against autograd, and clear errors on bad input."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from icml26.bll_ntk.bll import BLL, NTKBLL, LastLayerLaplace, LinearisedLaplace
from icml26.bll_ntk.glm import LastLayerGLM, predictive_probs
from icml26.bll_ntk.jacobians import ntk_projection
from icml26.bll_ntk.network import LastLayerError, LastLayerModel, make_mlp


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
    with pytest.raises(ValueError, match="labels"):
        BLL(make_mlp(2, 2, (4,)), likelihood="classification").fit(x, torch.full((10,), 5))


@pytest.mark.parametrize("likelihood", ["regression", "classification"])
def test_default_ntk_bll_keeps_the_variance_guarantee(likelihood: str) -> None:
    """The API default (``hyperparameters="bll"``) is the theorem's setting: with evidence-fitted
    hyperparameters on both sides, no NTK-BLL predictive variance is below BLL's."""
    torch.manual_seed(4)
    model = make_mlp(3, 3 if likelihood == "classification" else 1, (8, 8))
    x = torch.randn(50, 3)
    y = torch.randint(0, 3, (50,)) if likelihood == "classification" else torch.randn(50, 1)
    bll = BLL(model, likelihood=likelihood).fit(x, y)
    ntk = NTKBLL(model, likelihood=likelihood).fit(x, y)
    assert ntk.hyperparameters == "bll"
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
