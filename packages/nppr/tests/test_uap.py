"""Universal and per-class adversarial perturbations against the closed form of a linear model."""

from __future__ import annotations

import pytest
import torch

from icml26.nppr.baselines.uap import UAPConfig, UniversalPerturbation, estimate_uap
from icml26.nppr.fit import FitConfig, estimate_nppr, fit_nppr
from icml26.nppr.gmm import PerturbationGMM

from .conftest import Linear, exact_linear_robust

EPS = 0.05


@pytest.fixture(scope="module")
def problem() -> tuple[Linear, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    model = Linear(torch.randn(2, 36, generator=g), torch.zeros(2)).eval()
    x = torch.rand(400, 1, 6, 6, generator=g)
    with torch.no_grad():
        y = model(x).argmax(-1)
    return model, x, y


def test_per_class_perturbation_reaches_the_two_class_worst_case(problem) -> None:  # type: ignore[no-untyped-def]
    """With two classes, -eps sign(w_y - w_j) is the worst perturbation of every input of
    class y (up to the box), so one perturbation per class reaches the exact AR."""
    model, x, y = problem
    uap = UniversalPerturbation((1, 6, 6), EPS, 2, per_class=True)
    uap.fit(model, (x[:200], y[:200]), UAPConfig(steps=100, lr=0.2))
    acc = estimate_uap(model, (x[200:], y[200:]), uap)
    exact = exact_linear_robust(model, x[200:], y[200:], EPS).double().mean().item()
    assert exact <= acc.value <= exact + 0.03
    assert float(uap.delta.detach().abs().max()) <= EPS + 1e-7


def test_one_universal_perturbation_is_weaker_than_one_per_class(problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = problem
    accs = {}
    for per_class in (False, True):
        uap = UniversalPerturbation((1, 6, 6), EPS, 2, per_class=per_class)
        uap.fit(model, (x[:200], y[:200]), UAPConfig(steps=100, lr=0.2))
        accs[per_class] = estimate_uap(model, (x[200:], y[200:]), uap).value
    assert accs[True] < accs[False]
    d = uap.sampler(x[:3], y[:3], 5, torch.Generator())
    assert d.shape == (5, 3, 1, 6, 6)
    assert torch.equal(d[0], d[4])  # a point perturbation: every draw is the same


def test_label_mixture_matches_the_per_class_perturbation(problem) -> None:  # type: ignore[no-untyped-def]
    """A ``y``-conditioned mixture can represent the per-class worst case; NPPR then lands
    within Monte-Carlo noise of the per-class perturbation's accuracy, not below it."""
    model, x, y = problem
    uap = UniversalPerturbation((1, 6, 6), EPS, 2, per_class=True)
    uap.fit(model, (x[:200], y[:200]), UAPConfig(steps=100, lr=0.2))
    torch.manual_seed(0)
    gmm = PerturbationGMM((1, 6, 6), 2, EPS, form="y", k=2, latent_size=6, hidden=16)
    fit_nppr(model, (x[:200], y[:200]), gmm, FitConfig(steps=100, lr=0.05))
    nppr = estimate_nppr(model, (x[200:], y[200:]), gmm, 64)
    point = estimate_uap(model, (x[200:], y[200:]), uap)
    assert point.value <= nppr.hi
    assert nppr.value <= point.value + 0.08


def test_bad_settings_and_inputs(problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = problem
    with pytest.raises(ValueError, match="steps"):
        UAPConfig(steps=0)
    with pytest.raises(ValueError, match="eps"):
        UniversalPerturbation((1, 6, 6), 0.0, 2)
    uap = UniversalPerturbation((1, 6, 6), EPS, 2)
    with pytest.raises(ValueError, match="none of the fitting inputs"):
        uap.fit(model, (x[:50], 1 - y[:50]), UAPConfig(steps=2))
    assert all(p.requires_grad for p in model.parameters())
