"""The perturbation mixture: shapes, the budget, exact sampling, Gumbel-softmax gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.nppr.gmm import (
    FORMS,
    MixtureParams,
    PerturbationGMM,
    effective_components,
    floor_minimum_components,
    gumbel_softmax_weights,
)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shape", [(1, 8, 8), (2, 12)])
def test_shapes_and_budget_for_every_form(form: str, shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    gmm = PerturbationGMM(shape, 5, 0.1, form=form, k=3, latent_size=4, hidden=8)
    x, y = torch.rand(6, *shape), torch.randint(0, 5, (6,))
    p = gmm(x, y)
    assert p.logits.shape == (6, 3)
    assert p.mu.shape == p.log_std.shape == (6, 3, gmm.d)
    assert gmm.d == shape[0] * 4 ** (len(shape) - 1)
    z = gmm.rsample_latent(p, 7, tau=0.5)
    assert z.shape == (7, 6, gmm.d)
    d = gmm.decode(z)
    assert d.shape == (7, 6, *shape)
    assert float(d.detach().abs().max()) <= 0.1
    g = torch.Generator().manual_seed(0)
    assert gmm.sampler(x, y, 5, g).shape == (5, 6, *shape)


def test_input_independent_form_ignores_the_input() -> None:
    gmm = PerturbationGMM((1, 6, 6), 3, 0.1, form="none", k=2)
    a, b = (
        gmm(torch.rand(2, 1, 6, 6), torch.tensor([0, 1])),
        gmm(torch.rand(2, 1, 6, 6), torch.tensor([2, 2])),
    )
    assert torch.equal(a.mu, b.mu)
    assert torch.equal(a.logits, b.logits)


def test_y_form_depends_only_on_the_label() -> None:
    gmm = PerturbationGMM((1, 6, 6), 3, 0.1, form="y", k=2)
    p = gmm(torch.rand(3, 1, 6, 6), torch.tensor([0, 0, 1]))
    assert torch.equal(p.mu[0], p.mu[1])
    assert not torch.equal(p.mu[0], p.mu[2])


@given(st.floats(0.001, 0.9), st.floats(-5, 5))
@settings(max_examples=40, deadline=None)
def test_perturbations_never_leave_the_ball(eps: float, shift: float) -> None:
    gmm = PerturbationGMM((1, 4, 4), 2, eps, form="none", k=2, logstd_bounds=(-1.0, 3.0))
    with torch.no_grad():
        gmm.mu_head.bias.add_(shift * 10)
    p = gmm(torch.rand(3, 1, 4, 4), torch.zeros(3, dtype=torch.long))
    d = gmm.decode(gmm.sample_latent(p, 16))
    assert float(d.abs().max()) <= eps * (1 + 1e-6)


def test_log_std_is_clamped() -> None:
    gmm = PerturbationGMM((1, 4, 4), 2, 0.1, form="none", k=2, logstd_bounds=(-1.5, 0.5))
    with torch.no_grad():
        gmm.logstd_head.bias.fill_(-50.0)
    p = gmm(torch.rand(2, 1, 4, 4), torch.zeros(2, dtype=torch.long))
    assert float(p.log_std.detach().min()) == -1.5


def test_hard_sampling_follows_the_mixture_weights() -> None:
    """Components far apart in latent space: the fraction of draws near each mean matches π."""
    k, d = 3, 2
    logits = torch.log(torch.tensor([[0.6, 0.3, 0.1]]))
    mu = torch.tensor([[[-10.0, 0.0], [0.0, 0.0], [10.0, 0.0]]])
    p = MixtureParams(logits, mu, torch.full((1, k, d), -3.0))
    gmm = PerturbationGMM((1, 2, 1), 2, 0.1, form="none", k=k, latent_size=1)
    gmm.d = d
    z = gmm.sample_latent(p, 20000, torch.Generator().manual_seed(0))[:, 0, 0]
    freq = torch.stack(
        [(z < -5).float().mean(), (z.abs() < 5).float().mean(), (z > 5).float().mean()]
    )
    assert freq.tolist() == pytest.approx([0.6, 0.3, 0.1], abs=0.015)  # 4 binomial sd


def test_gumbel_softmax_weights_approach_categorical_frequencies() -> None:
    logits = torch.log(torch.tensor([0.5, 0.25, 0.25]))
    w = gumbel_softmax_weights(logits, 20000, tau=0.05, generator=torch.Generator().manual_seed(0))
    freq = torch.nn.functional.one_hot(w.argmax(-1), 3).float().mean(0)
    assert freq.tolist() == pytest.approx([0.5, 0.25, 0.25], abs=0.015)
    assert torch.allclose(w.sum(-1), torch.ones(20000))


def test_gumbel_softmax_gradients_match_finite_differences() -> None:
    """d/d(logits, mu, log_std) of a loss of reparameterised draws, with the noise held
    fixed, equals central finite differences (torch.autograd.gradcheck in float64)."""
    gmm = PerturbationGMM((1, 2, 2), 2, 0.2, form="none", k=3, latent_size=2)
    target = torch.randn(4, dtype=torch.float64)

    def loss(logits: torch.Tensor, mu: torch.Tensor, log_std: torch.Tensor) -> torch.Tensor:
        g = torch.Generator().manual_seed(123)  # same Gumbel and Gaussian noise every call
        p = MixtureParams(logits, mu, log_std)
        z = gmm.rsample_latent(p, 3, tau=0.7, generator=g)
        delta = gmm.decode(z).flatten(2)
        return (delta * target).sum()

    args = (
        torch.randn(2, 3, dtype=torch.float64, requires_grad=True),
        torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True),
        (0.3 * torch.randn(2, 3, 4, dtype=torch.float64)).requires_grad_(True),
    )
    assert torch.autograd.gradcheck(loss, args, eps=1e-6, atol=1e-5)


def test_gradients_reach_every_head_through_the_classifier() -> None:
    gmm = PerturbationGMM((1, 6, 6), 3, 0.1, form="xy", k=2, latent_size=3, hidden=8)
    clf = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(36, 3))
    x, y = torch.rand(5, 1, 6, 6), torch.randint(0, 3, (5,))
    p = gmm(x, y)
    out = clf((x + gmm.decode(gmm.rsample_latent(p, 3, 0.5))).flatten(0, 1)).sum()
    out.backward()
    for name, prm in gmm.named_parameters():
        assert prm.grad is not None, name
        assert float(prm.grad.abs().sum()) > 0, name


def test_regularisers_vanish_at_their_optimum() -> None:
    gmm = PerturbationGMM((1, 2, 2), 2, 0.1, form="none", k=2, latent_size=2)
    logits = torch.zeros(1, 2)
    mu = torch.tensor([[[1.0, 0, 0, 0], [0, 1.0, 0, 0]]])
    reg = gmm.regularisers(MixtureParams(logits, mu, torch.zeros(1, 2, 4)))
    assert float(reg["entropy"]) == pytest.approx(0.0, abs=1e-6)
    assert float(reg["diversity"]) == pytest.approx(0.0, abs=1e-3)
    same = torch.tensor([[[1.0, 0, 0, 0], [1.0, 0, 0, 0]]])
    peaked = torch.tensor([[10.0, -10.0]])
    reg2 = gmm.regularisers(MixtureParams(peaked, same, torch.zeros(1, 2, 4)))
    assert float(reg2["entropy"]) > 0.9
    assert float(reg2["diversity"]) > 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"form": "z"}, "form"),
        ({"k": 0}, "k and hidden"),
        ({"eps": 0.0}, "eps"),
        ({"latent_size": 99}, "latent_size"),
        ({"logstd_bounds": (1.0, -1.0)}, "logstd_bounds"),
        ({"weight_floor": 1.0}, "weight_floor"),
        ({"weight_floor": -0.1}, "weight_floor"),
    ],
)
def test_bad_gmm_settings(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    base = {"input_shape": (1, 8, 8), "n_classes": 3, "eps": 0.1}
    with pytest.raises(ValueError, match=message):
        PerturbationGMM(**{**base, **kwargs})


def test_wrong_input_shape_is_refused() -> None:
    gmm = PerturbationGMM((1, 8, 8), 3, 0.1)
    with pytest.raises(ValueError, match="built for"):
        gmm(torch.rand(2, 1, 6, 6), torch.zeros(2, dtype=torch.long))


def test_x_form_uses_attached_features() -> None:
    gmm = PerturbationGMM((1, 8, 8), 3, 0.1, form="x", k=2, feature_dim=3, hidden=8)
    x, y = torch.rand(4, 1, 8, 8), torch.zeros(4, dtype=torch.long)
    with pytest.raises(RuntimeError, match="set_feature_extractor"):
        gmm(x, y)
    gmm.set_feature_extractor(lambda t: torch.zeros(t.shape[0], 3))
    a = gmm(x, y).mu
    gmm.set_feature_extractor(lambda t: torch.ones(t.shape[0], 3))
    assert not torch.equal(a, gmm(x, y).mu)
    gmm.set_feature_extractor(lambda t: torch.ones(t.shape[0], 5))
    with pytest.raises(ValueError, match="expected 3"):
        gmm(x, y)
    assert not any("feature" in k for k in gmm.state_dict())  # the extractor is not saved


@given(st.floats(0.0, 0.99), st.integers(2, 8), st.floats(-30.0, 30.0))
@settings(max_examples=40, deadline=None)
def test_weight_floor_keeps_every_component(floor: float, k: int, push: float) -> None:
    """Whatever the logits (here pushed hard onto one component), π_k >= floor / K and the
    weights sum to 1, so exp H(π) is at least that of the most lopsided floored mixture."""
    gmm = PerturbationGMM((1, 4, 4), 3, 0.1, form="none", k=k, hidden=4, weight_floor=floor)
    with torch.no_grad():
        gmm.pi_head.bias.zero_()
        gmm.pi_head.bias[0] = push
    w = gmm(torch.rand(2, 1, 4, 4), torch.zeros(2, dtype=torch.long)).weights.detach()
    assert torch.allclose(w.sum(-1), torch.ones(2), atol=1e-6)
    assert float(w.min()) >= floor / k - 1e-6
    top = 1 - (k - 1) * floor / k  # the most lopsided floored mixture
    lopsided = torch.tensor([[top] + [floor / k] * (k - 1)])
    assert effective_components(w) >= effective_components(lopsided) - 1e-4


@pytest.mark.parametrize(("k", "floor"), [(1, 0.5), (2, 0.0), (4, 0.5), (8, 0.9)])
def test_floor_minimum_is_the_entropy_of_the_most_collapsed_weights(k: int, floor: float) -> None:
    """Against NumPy: weights (floor/K + 1 - floor, floor/K, ...) and exp of their entropy; a
    floored mixture pushed onto one component reaches it."""
    w = np.full(k, floor / k)
    w[0] += 1 - floor
    w = w[w > 0]
    expected = float(np.exp(-(w * np.log(w)).sum()))
    assert floor_minimum_components(k, floor) == pytest.approx(expected)
    gmm = PerturbationGMM((1, 4, 4), 3, 0.1, k=k, latent_size=2, hidden=8, weight_floor=floor)
    with torch.no_grad():
        gmm.pi_head.bias.zero_()
        gmm.pi_head.bias[0] = 80.0
    weights = gmm(torch.rand(5, 1, 4, 4), torch.zeros(5, dtype=torch.long)).weights
    assert effective_components(weights) == pytest.approx(expected, abs=1e-4)
    with pytest.raises(ValueError, match="weight_floor"):
        floor_minimum_components(k, 1.0)


def test_default_floor_is_the_runs() -> None:
    from icml26.nppr.config import QUICK

    gmm = PerturbationGMM((1, 4, 4), 3, 0.1, latent_size=2, hidden=8)
    assert gmm.weight_floor == QUICK.weight_floor == 0.5


def test_effective_components_closed_forms() -> None:
    assert effective_components(torch.tensor([[1.0, 0.0, 0.0]])) == pytest.approx(1.0)
    assert effective_components(torch.full((3, 4), 0.25)) == pytest.approx(4.0)
    # exp H of (1/2, 1/2, 0) is 2
    assert effective_components(torch.tensor([[0.5, 0.5, 0.0]])) == pytest.approx(2.0)


def test_feature_extractor_in_the_constructor() -> None:
    gmm = PerturbationGMM(
        (1, 8, 8),
        3,
        0.1,
        form="x",
        k=2,
        feature_dim=3,
        hidden=8,
        feature_extractor=lambda t: torch.ones(t.shape[0], 3),
    )
    assert gmm(torch.rand(2, 1, 8, 8), torch.zeros(2, dtype=torch.long)).mu.shape == (2, 2, 64)
