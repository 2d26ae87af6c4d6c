"""Fitting NPPR on a toy linear model: the ordering AR <= NPPR <= PR, the learned distribution
reaching the exact worst case where the family can represent it, DataLoaders, and the
classifier's own ``requires_grad`` flags kept."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from icml26.nppr.baselines.noise import DISTRIBUTIONS, estimate_fixed_pr
from icml26.nppr.fit import FitConfig, estimate_nppr, fit_nppr, margin_loss, mixture_shape
from icml26.nppr.gmm import FORMS, PerturbationGMM
from icml26.nppr.montecarlo import kept_rates

from .conftest import Linear, exact_linear_robust

EPS = 0.05


@pytest.fixture(scope="module")
def fitted() -> dict[str, object]:
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    model = Linear(torch.randn(2, 36, generator=g), torch.zeros(2)).eval()
    x = torch.rand(400, 1, 6, 6, generator=g)
    with torch.no_grad():
        y = model(x).argmax(-1)
    out: dict[str, object] = {"model": model, "x": x[200:], "y": y[200:]}
    for form in ("none", "y"):
        torch.manual_seed(0)
        gmm = PerturbationGMM((1, 6, 6), 2, EPS, form=form, k=2, latent_size=6, hidden=16)
        cfg = FitConfig(steps=100, batch_size=32, samples=4, lr=0.05)
        fit_nppr(model, (x[:200], y[:200]), gmm, cfg)
        out[f"gmm_{form}"] = gmm
    return out


def test_nppr_never_above_fixed_pr(fitted) -> None:  # type: ignore[no-untyped-def]
    model, data = fitted["model"], (fitted["x"], fitted["y"])
    for form in ("none", "y"):
        nppr = estimate_nppr(model, data, fitted[f"gmm_{form}"], 64)
        for dist in DISTRIBUTIONS:
            pr = estimate_fixed_pr(model, data, dist, EPS, 64)
            assert nppr.lo <= pr.hi, (form, dist)
            if dist not in ("uniform_official", "gaussian_official"):
                assert nppr.value < pr.value - 0.1, (form, dist)  # clearly more conservative


def test_label_conditioned_mixture_reaches_the_exact_worst_case(fitted) -> None:  # type: ignore[no-untyped-def]
    """For two classes the worst perturbation is one sign corner per label, which the ``y``
    form can represent: its NPPR comes within 0.05 of the closed-form AR on held-out inputs."""
    model, x, y = fitted["model"], fitted["x"], fitted["y"]
    exact = exact_linear_robust(model, x, y, EPS).double().mean().item()
    nppr = estimate_nppr(model, (x, y), fitted["gmm_y"], 64)
    assert exact <= nppr.hi
    assert nppr.value <= exact + 0.05


def test_input_independent_mixture_is_between(fitted) -> None:  # type: ignore[no-untyped-def]
    model, data = fitted["model"], (fitted["x"], fitted["y"])
    none = estimate_nppr(model, data, fitted["gmm_none"], 64)
    yform = estimate_nppr(model, data, fitted["gmm_y"], 64)
    assert yform.value <= none.hi


def test_a_dataloader_gives_the_same_estimate(fitted) -> None:  # type: ignore[no-untyped-def]
    model, x, y = fitted["model"], fitted["x"], fitted["y"]
    loader = DataLoader(TensorDataset(x, y), batch_size=16)
    gmm = fitted["gmm_none"]
    # the same draws only when batches line up: compare the means, within Monte-Carlo noise
    a = estimate_nppr(model, loader, gmm, 64)
    b = estimate_nppr(model, (x, y), gmm, 64)
    assert a.n_inputs == b.n_inputs == len(y)
    assert abs(a.value - b.value) < 0.05


def test_fit_from_a_dataloader_learns_too(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    loader = DataLoader(TensorDataset(x[:120], y[:120]), batch_size=32, shuffle=True)
    torch.manual_seed(0)
    gmm = PerturbationGMM((1, 6, 6), 2, EPS, form="y", k=2, latent_size=6, hidden=16)
    res = fit_nppr(model, loader, gmm, FitConfig(steps=80, lr=0.05))
    assert len(res.losses) == 80  # the loader is cycled past its 4 batches
    nppr = estimate_nppr(model, (x[120:], y[120:]), gmm, 32)
    pr = estimate_fixed_pr(model, (x[120:], y[120:]), "uniform", EPS, 32)
    assert nppr.value < pr.value - 0.1


def test_fit_keeps_each_parameters_own_requires_grad() -> None:
    """A layer the user froze stays frozen, a trainable one stays trainable, and the model's
    parameters are frozen while fitting (the regression: every flag came back True)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(36, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    model[1].weight.requires_grad_(False)
    before = [p.requires_grad for p in model.parameters()]
    assert before == [False, True, True, True]
    seen: list[bool] = []
    forward = model.forward

    def spy(x: torch.Tensor) -> torch.Tensor:
        seen.append(any(p.requires_grad for p in model.parameters()))
        return forward(x)

    model.forward = spy  # type: ignore[method-assign]
    x = torch.rand(64, 1, 6, 6)
    with torch.no_grad():
        y = forward(x).argmax(-1)
    gmm = PerturbationGMM((1, 6, 6), 2, EPS, k=2, latent_size=3, hidden=8)
    fit_nppr(model, (x, y), gmm, FitConfig(steps=3))
    assert [p.requires_grad for p in model.parameters()] == before
    assert seen
    assert not any(seen[-3:])  # frozen during the fitting steps
    # also when fitting fails
    with pytest.raises(ValueError, match="none of the fitting inputs"):
        fit_nppr(model, (x, 1 - y), gmm, FitConfig(steps=1))
    assert [p.requires_grad for p in model.parameters()] == before


@given(st.integers(0, 10_000), st.sampled_from(FORMS), st.floats(0.01, 0.2))
@settings(max_examples=15, deadline=None)
def test_any_mixture_rate_is_at_least_exact_robustness(seed: int, form: str, eps: float) -> None:
    """AR <= PR_D for *every* distribution inside the ball, input by input: a random
    (unfitted) mixture keeps the label on every exactly-robust input with probability 1."""
    g = torch.Generator().manual_seed(seed)
    model = Linear(torch.randn(3, 16, generator=g), torch.randn(3, generator=g)).eval()
    x = torch.rand(40, 1, 4, 4, generator=g)
    y = torch.randint(0, 3, (40,), generator=g)
    torch.manual_seed(seed)
    gmm = PerturbationGMM((1, 4, 4), 3, eps, form=form, k=3, latent_size=2, hidden=8).eval()
    robust = exact_linear_robust(model, x, y, eps).numpy()
    rates = kept_rates(model, (x, y), gmm.sampler, 16, eps, seed=seed)
    assert (rates[robust] == 1.0).all()
    assert (rates >= robust).all()


def test_mixture_shape_tells_a_point_from_a_spread(fitted) -> None:  # type: ignore[no-untyped-def]
    x, y = fitted["x"], fitted["y"]
    gmm = PerturbationGMM((1, 6, 6), 2, EPS, k=3, latent_size=6, hidden=8, weight_floor=0.0)
    with torch.no_grad():  # one component, a tiny spread, a huge mean: a point at the corners
        gmm.pi_head.bias.copy_(torch.tensor([50.0, 0.0, 0.0]))
        gmm.logstd_head.bias.fill_(-30.0)
        gmm.mu_head.bias.fill_(10.0)
    point = mixture_shape(gmm, (x, y))
    assert point["effective_components"] == pytest.approx(1.0, abs=1e-3)
    assert point["spread"] < 1e-3
    assert point["spread_within"] < 1e-3
    assert point["saturation"] == pytest.approx(1.0)
    wide = mixture_shape(PerturbationGMM((1, 6, 6), 2, EPS, k=3, latent_size=6), (x, y))
    assert wide["effective_components"] > 2.9
    assert wide["spread"] > 0.2
    assert wide["spread_within"] > 0.2


def test_points_at_different_corners_spread_only_between_components(fitted) -> None:  # type: ignore[no-untyped-def]
    """K narrow components at +eps, -eps, ... with equal weights: draws differ (switching),
    but each component is a point (within-component spread 0); the floor's minimum is hit
    exactly by a floored mixture that puts all its free mass on one component."""
    x, y = fitted["x"], fitted["y"]
    gmm = PerturbationGMM((1, 6, 6), 2, EPS, k=2, latent_size=6, hidden=8, weight_floor=0.0)
    with torch.no_grad():
        gmm.logstd_head.bias.fill_(-30.0)
        gmm.mu_head.weight.zero_()
        gmm.mu_head.bias.copy_(torch.cat([torch.full((36,), 10.0), torch.full((36,), -10.0)]))
    s = mixture_shape(gmm, (x, y), draws=64)
    assert s["effective_components"] == pytest.approx(2.0, abs=1e-3)
    assert s["spread"] > 0.8  # +-eps half the time: std close to eps
    assert s["spread_within"] < 1e-3
    floored = PerturbationGMM((1, 6, 6), 2, EPS, k=4, latent_size=6, hidden=8, weight_floor=0.5)
    with torch.no_grad():
        floored.pi_head.bias.copy_(torch.tensor([60.0, 0.0, 0.0, 0.0]))
    f = mixture_shape(floored, (x, y))
    assert f["effective_components"] == pytest.approx(2.9257, abs=1e-3)  # the review's figure
    assert f["neff_excess"] == pytest.approx(0.0, abs=1e-3)


def test_margin_loss_closed_form() -> None:
    logits = torch.tensor([[2.0, 0.5, 1.0], [0.0, 3.0, -1.0]])
    y = torch.tensor([0, 2])
    margins = torch.tensor([2.0 - 1.0, -1.0 - 3.0])
    assert torch.allclose(margin_loss(logits, y), torch.nn.functional.softplus(margins))
    assert torch.allclose(
        margin_loss(logits, y, scale=0.5), 0.5 * torch.nn.functional.softplus(margins / 0.5)
    )


def test_fit_refuses_a_model_that_gets_nothing_right(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    gmm = PerturbationGMM((1, 6, 6), 2, EPS)
    with pytest.raises(ValueError, match="none of the fitting inputs"):
        fit_nppr(model, (x, 1 - y), gmm, FitConfig(steps=1))


def test_fit_config_validation() -> None:
    with pytest.raises(ValueError, match="steps"):
        FitConfig(steps=0)
    with pytest.raises(ValueError, match="positive"):
        FitConfig(tau_end=0.0)
