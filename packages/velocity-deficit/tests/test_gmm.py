"""The exact velocity field and density of isotropic mixtures against independent references."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal

from icml26.velocity_deficit.gmm import IsotropicGMM, gaussian_optimal_velocity, random_gmm


def test_log_prob_matches_scipy() -> None:
    gmm = random_gmm(3, 4, seed=1)
    x = np.random.default_rng(0).normal(size=(50, 3))
    ref = np.log(
        sum(
            w * multivariate_normal(m, s**2 * np.eye(3)).pdf(x)
            for m, s, w in zip(gmm.means, gmm.stds, gmm.weights, strict=True)
        )
    )
    np.testing.assert_allclose(gmm.log_prob(x), ref, rtol=1e-10)


@pytest.mark.parametrize("t", [0.1, 0.5, 0.9])
def test_gaussian_velocity_equals_least_squares_fit(t: float) -> None:
    """For a Gaussian target v* is affine; a least-squares fit of u on (x_t, 1) must recover it."""
    rng = np.random.default_rng(0)
    mean, std, n = np.array([1.5, -0.5]), 0.7, 400_000
    x0 = rng.standard_normal((n, 2))
    x1 = mean + std * rng.standard_normal((n, 2))
    xt, u = (1 - t) * x0 + t * x1, x1 - x0
    design = np.concatenate([xt, np.ones((n, 1))], 1)
    coef, *_ = np.linalg.lstsq(design, u, rcond=None)
    probe = rng.standard_normal((20, 2))
    fitted = np.concatenate([probe, np.ones((20, 1))], 1) @ coef
    exact = gaussian_optimal_velocity(torch.tensor(probe), t, torch.tensor(mean), std).numpy()
    np.testing.assert_allclose(fitted, exact, atol=0.02)


@given(
    t=st.floats(0.0, 1.0),
    mean=st.lists(st.floats(-3, 3), min_size=3, max_size=3),
    std=st.floats(0.1, 2.0),
)
@settings(max_examples=40, deadline=None)
def test_one_component_mixture_equals_gaussian_formula(
    t: float, mean: list[float], std: float
) -> None:
    gmm = IsotropicGMM(np.array([mean]), np.array([std]), np.array([1.0]))
    x = torch.randn(7, 3, dtype=torch.float64)
    np.testing.assert_allclose(
        gmm.optimal_velocity(x, t).numpy(),
        gaussian_optimal_velocity(x, t, torch.tensor(mean, dtype=torch.float64), std).numpy(),
        rtol=1e-9,
        atol=1e-9,
    )


def test_mixture_velocity_is_the_conditional_mean() -> None:
    """v* is E[u | x_t]: the residual u - v*(x_t) is orthogonal to every function of x_t."""
    gmm = random_gmm(2, 3, seed=3)
    rng = np.random.default_rng(1)
    x1, _ = gmm.sample(300_000, rng)
    x1 = torch.tensor(x1, dtype=torch.float64)
    x0 = torch.randn(x1.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    t = 0.6
    xt, u = (1 - t) * x0 + t * x1, x1 - x0
    resid = u - gmm.optimal_velocity(xt, t)
    for g in (
        torch.ones_like(xt[:, :1]),
        xt[:, :1],
        torch.sin(3 * xt[:, 1:]),
        xt.pow(2).sum(1, keepdim=True),
    ):
        corr = (resid * g).mean(0) / (u.norm(dim=1).mean() * g.abs().mean())
        assert corr.abs().max() < 0.01
    # and it beats a perturbed field on the FM loss
    v = gmm.optimal_velocity(xt, t)
    assert (v - u).pow(2).mean() < (1.05 * v - u).pow(2).mean()


def test_exact_field_has_a_deficit_at_t0() -> None:
    """At t = 0, v*(x) = E[x1] - x: shorter on average than |x1 - x0| (Jensen)."""
    gmm = random_gmm(16, seed=0)
    x1, _ = gmm.sample(20_000, np.random.default_rng(0))
    x0 = torch.randn(20_000, 16, dtype=torch.float64)
    v = gmm.optimal_velocity(x0, 0.0)
    np.testing.assert_allclose(v.numpy(), (gmm.weights @ gmm.means)[None] - x0.numpy(), atol=1e-12)
    assert v.norm(dim=1).mean() < (torch.tensor(x1, dtype=torch.float64) - x0).norm(dim=1).mean()


def test_bad_mixtures_raise() -> None:
    with pytest.raises(ValueError, match="stds must be positive"):
        IsotropicGMM(np.zeros((2, 2)), np.array([1.0, 0.0]), np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="sum to 1"):
        IsotropicGMM(np.zeros((2, 2)), np.ones(2), np.array([0.5, 0.6]))
    gmm = random_gmm(4)
    with pytest.raises(ValueError, match="shape"):
        gmm.optimal_velocity(torch.zeros(3, 5), 0.5)
    with pytest.raises(ValueError, match=r"t must lie in \[0, 1\]"):
        gmm.optimal_velocity(torch.zeros(3, 4), 1.5)
