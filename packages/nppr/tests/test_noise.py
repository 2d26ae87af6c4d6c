"""Fixed-distribution PR: the samplers' laws and PR of a model constant in the ball."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from icml26.nppr.baselines.noise import (
    DISTRIBUTIONS,
    OFFICIAL_DISTRIBUTIONS,
    FixedNoise,
    estimate_fixed_pr,
    tuned_fixed_pr,
)

from .conftest import exact_linear_robust


class Constant(nn.Module):
    """Logits that ignore the input: constant inside any ball."""

    def __init__(self, label: int, n_classes: int = 3) -> None:
        super().__init__()
        self.logits = nn.Parameter(
            torch.nn.functional.one_hot(torch.tensor(label), n_classes).float()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits.expand(x.shape[0], -1)


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_pr_of_a_model_constant_in_the_ball_is_one(dist: str) -> None:
    model = Constant(1).eval()
    x = torch.rand(30, 1, 5, 5)
    y = torch.ones(30, dtype=torch.long)
    est = estimate_fixed_pr(model, (x, y), dist, eps=0.3, m=16)
    assert est.value == 1.0
    assert est.hi == 1.0
    assert est.lo > 0.99  # Wilson over 480 draws


@given(st.sampled_from(DISTRIBUTIONS), st.floats(0.01, 0.5), st.floats(0.1, 100.0))
@settings(max_examples=30, deadline=None)
def test_draws_stay_in_the_ball(dist: str, eps: float, scale: float) -> None:
    g = torch.Generator().manual_seed(0)
    d = FixedNoise(dist, eps, scale)(
        torch.zeros(4, 1, 3, 3), torch.zeros(4, dtype=torch.long), 8, g
    )
    assert d.shape == (8, 4, 1, 3, 3)
    assert float(d.abs().max()) <= eps + 1e-7


@pytest.mark.parametrize(
    ("dist", "scale", "std"),
    [
        ("uniform", 1.0, 1 / math.sqrt(3)),
        ("gaussian", 0.1, 0.1),
        ("laplace", 0.05, 0.05 * math.sqrt(2)),
    ],
)
def test_draws_have_the_stated_law(dist: str, scale: float, std: float) -> None:
    """Std of the (barely clipped at these scales) draws, in units of eps, against the closed form."""
    eps = 0.2
    g = torch.Generator().manual_seed(0)
    d = FixedNoise(dist, eps, scale)(
        torch.zeros(1, 1, 50, 50), torch.zeros(1, dtype=torch.long), 40, g
    )
    assert float(d.mean()) == pytest.approx(0.0, abs=0.01 * eps)
    assert float(d.std()) / eps == pytest.approx(std, rel=0.02)


def test_huge_scale_gives_sign_corners() -> None:
    g = torch.Generator().manual_seed(0)
    d = FixedNoise("gaussian", 0.1, 1e4)(
        torch.zeros(1, 1, 20, 20), torch.zeros(1, dtype=torch.long), 10, g
    )
    assert float((d.abs() == 0.1).float().mean()) > 0.999


def test_fixed_pr_is_never_below_exact_ar(linear_problem) -> None:  # type: ignore[no-untyped-def]
    """Per input, PR_D >= 1[robust] for any D in the ball (a theorem, no tolerance)."""
    from icml26.nppr.montecarlo import kept_rates

    model, x, y = linear_problem
    robust = exact_linear_robust(model, x, y, 0.05)
    for dist in DISTRIBUTIONS:
        rates = kept_rates(model, (x, y), FixedNoise(dist, 0.05, 64.0), 32, 0.05)
        assert (rates[robust.numpy()] == 1.0).all()


def test_tuned_noise_is_at_most_each_family(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    est, noise = tuned_fixed_pr(
        model, (x[:100], y[:100]), (x[100:], y[100:]), 0.05, m_select=32, m=64
    )
    for dist in DISTRIBUTIONS:
        other = estimate_fixed_pr(model, (x[100:], y[100:]), dist, 0.05, 64, seed=5)
        assert est.lo <= other.hi
    assert noise.dist in DISTRIBUTIONS


def test_bad_noise_settings() -> None:
    with pytest.raises(ValueError, match="dist"):
        FixedNoise("cauchy", 0.1)
    with pytest.raises(ValueError, match="eps"):
        FixedNoise("uniform", 0.0)
    with pytest.raises(ValueError, match="scale"):
        FixedNoise("gaussian", 0.1, -1.0)


@pytest.mark.parametrize(
    ("dist", "inside"), [("gaussian_official", 0.0797), ("uniform_official", 0.1)]
)
def test_official_noise_sits_at_the_corners(dist: str, inside: float) -> None:
    """The official code's randn and U(-1, 1) clipped to eps = 0.1: a coordinate is inside the
    ball with probability P(|z| < 0.1) = 0.0797 (normal) or 0.1 (uniform); all else at +-eps."""
    g = torch.Generator().manual_seed(0)
    d = FixedNoise(dist, 0.1)(torch.zeros(1, 1, 50, 50), torch.zeros(1, dtype=torch.long), 40, g)
    at_corner = float((d.abs() == 0.1).float().mean())
    assert 1 - at_corner == pytest.approx(inside, abs=0.005)
    assert float(d.mean()) == pytest.approx(0.0, abs=0.002)


def test_official_noise_is_harsher_than_ours(linear_problem) -> None:  # type: ignore[no-untyped-def]
    model, x, y = linear_problem
    ours = estimate_fixed_pr(model, (x, y), "uniform", 0.05, 64)
    for dist in OFFICIAL_DISTRIBUTIONS:
        official = estimate_fixed_pr(model, (x, y), dist, 0.05, 64)
        assert official.value < ours.value
