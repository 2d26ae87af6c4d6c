"""The exact GP oracle against scikit-learn, and the chain rule behind the Bayes-gap metric."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    ExpSineSquared,
    Matern,
    WhiteKernel,
)

from icml26.inctnp.gp import GPKernel, gp_log_marginal, gp_predict

NOISE = 0.1
SK = {
    "rbf": lambda: ConstantKernel(1.3, "fixed") * RBF(0.7, "fixed"),
    "matern52": lambda: ConstantKernel(1.3, "fixed") * Matern(0.7, "fixed", nu=2.5),
    "periodic": lambda: ConstantKernel(1.3, "fixed") * ExpSineSquared(0.7, 1.1, "fixed", "fixed"),
}


@pytest.mark.parametrize("name", ["rbf", "matern52", "periodic"])
def test_posterior_matches_scikit_learn(name: str) -> None:
    rng = np.random.default_rng(0)
    xc, xt = rng.uniform(-2, 2, (15, 1)), rng.uniform(-2, 2, (7, 1))
    yc = np.sin(2 * xc[:, 0]) + 0.1 * rng.normal(size=15)
    kern = GPKernel(name, lengthscale=0.7, variance=1.3, period=1.1)
    mean, std = gp_predict(
        kern, NOISE, torch.tensor(xc), torch.tensor(yc)[:, None], torch.tensor(xt)
    )
    sk = GaussianProcessRegressor(
        SK[name]() + WhiteKernel(NOISE**2, "fixed"), alpha=1e-14, optimizer=None
    ).fit(xc, yc)
    sk_mean, sk_std = sk.predict(xt, return_std=True)  # includes the white noise term
    np.testing.assert_allclose(mean[:, 0].numpy(), sk_mean, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(std[:, 0].numpy(), sk_std, rtol=1e-6, atol=1e-8)
    lml = gp_log_marginal(kern, NOISE, torch.tensor(xc), torch.tensor(yc)[:, None])
    assert float(lml) == pytest.approx(sk.log_marginal_likelihood_value_, rel=1e-9)


def test_chain_rule_makes_the_sequential_likelihood_order_free() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.rand(12, 2, generator=g, dtype=torch.float64) * 4 - 2
    y = torch.randn(12, 1, generator=g, dtype=torch.float64)
    kern = GPKernel("matern52", lengthscale=(0.5, 0.9))
    joint = float(gp_log_marginal(kern, NOISE, x, y))
    for _ in range(3):
        order = torch.randperm(12, generator=g)
        xs, ys = x[order], y[order]
        total = 0.0
        for j in range(12):
            m, s = gp_predict(kern, NOISE, xs[:j], ys[:j], xs[j : j + 1])
            total += float(
                -0.5 * ((ys[j] - m[0]) / s[0]) ** 2 - torch.log(s[0]) - 0.5 * math.log(2 * math.pi)
            )
        assert total == pytest.approx(joint, abs=1e-8)


def test_empty_context_is_the_prior() -> None:
    kern = GPKernel("rbf", variance=2.0)
    mean, std = gp_predict(kern, NOISE, torch.zeros(0, 1), torch.zeros(0, 1), torch.zeros(3, 1))
    assert torch.all(mean == 0)
    assert torch.allclose(std, torch.full_like(std, math.sqrt(2.0 + NOISE**2)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"name": "cosine"}, "kernel must be"), ({"name": "rbf", "lengthscale": -1.0}, "positive")],
)
def test_bad_kernels(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GPKernel(**kwargs)
