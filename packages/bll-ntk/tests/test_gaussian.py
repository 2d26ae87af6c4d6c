"""Conjugate Bayesian linear regression and the Gaussian Laplace against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal
from sklearn.linear_model import BayesianRidge

from icml26.bll_ntk.gaussian import BayesLinReg, LaplaceLinReg, maximise_evidence


def _data(n: int = 40, d: int = 5, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    Z = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = Z @ torch.randn(d, generator=g, dtype=torch.float64) + 0.3 * torch.randn(
        n, generator=g, dtype=torch.float64
    )
    return Z, y


def _spd(d: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    B = torch.randn(d, d, generator=g, dtype=torch.float64)
    return torch.eye(d, dtype=torch.float64) + B @ B.T


@pytest.mark.parametrize("with_K", [False, True])
def test_posterior_matches_closed_form(with_K: bool) -> None:
    Z, y = _data()
    K = _spd(5, 1) if with_K else torch.eye(5, dtype=torch.float64)
    a, s = 0.7, 0.2
    post = BayesLinReg(K=K if with_K else None, alpha=a, noise=s).fit(Z, y)
    prec = a * torch.linalg.inv(K) + Z.T @ Z / s
    cov = torch.linalg.inv(prec)
    mean = cov @ Z.T @ y / s
    torch.testing.assert_close(post.mean, mean, rtol=1e-8, atol=1e-10)
    torch.testing.assert_close(post.cov, cov, rtol=1e-8, atol=1e-10)
    zs = torch.randn(7, 5, dtype=torch.float64)
    m, v = post.predict(zs)
    torch.testing.assert_close(v, torch.einsum("nd,de,ne->n", zs, cov, zs), rtol=1e-8, atol=1e-10)
    torch.testing.assert_close(m, zs @ mean)
    # evidence = log N(y | 0, σ²I + α⁻¹ Z K Zᵀ) (scipy, N × N)
    S = s * np.eye(len(y)) + (Z @ K @ Z.T).numpy() / a
    ref = multivariate_normal(mean=np.zeros(len(y)), cov=S).logpdf(y.numpy())
    assert post.log_evidence(a, s) == pytest.approx(ref, rel=1e-9)


def test_type2_ml_matches_scikit_learn_bayesian_ridge() -> None:
    Z, y = _data(n=200, d=6, seed=3)
    post = BayesLinReg().fit(Z, y)
    br = BayesianRidge(
        fit_intercept=False,
        alpha_1=1e-12,
        alpha_2=1e-12,
        lambda_1=1e-12,
        lambda_2=1e-12,
        tol=1e-10,
        max_iter=1000,
    ).fit(Z.numpy(), y.numpy())
    assert post.alpha == pytest.approx(br.lambda_, rel=2e-2)
    assert post.noise == pytest.approx(1.0 / br.alpha_, rel=2e-2)
    np.testing.assert_allclose(post.mean.numpy(), br.coef_, rtol=1e-2, atol=1e-3)


def test_integer_weights_equal_duplicated_rows() -> None:
    Z, y = _data(n=20)
    w = torch.tensor([1.0, 2.0] * 10, dtype=torch.float64)
    rep = torch.repeat_interleave(torch.arange(20), w.long())
    a = BayesLinReg(alpha=0.5, noise=0.1).fit(Z, y, w)
    b = BayesLinReg(alpha=0.5, noise=0.1).fit(Z[rep], y[rep])
    torch.testing.assert_close(a.cov, b.cov)
    torch.testing.assert_close(a.mean, b.mean)
    assert a.log_evidence(0.5, 0.1) == pytest.approx(b.log_evidence(0.5, 0.1), rel=1e-9)


@pytest.mark.parametrize("n", [6, 30])  # function space (n < D) and weight space (n >= D)
def test_laplace_both_spaces_match_direct_inverse(n: int) -> None:
    Z, r = _data(n=n, d=12)
    vstar = torch.randn(12, dtype=torch.float64)
    lap = LaplaceLinReg(alpha=0.9, noise=0.3).fit(Z, r, float(vstar @ vstar))
    assert lap._function_space is (n < 12)
    cov = torch.linalg.inv(0.9 * torch.eye(12, dtype=torch.float64) + Z.T @ Z / 0.3)
    zs = torch.randn(5, 12, dtype=torch.float64)
    torch.testing.assert_close(
        lap.predict_var(zs), torch.einsum("nd,de,ne->n", zs, cov, zs), rtol=1e-7, atol=1e-9
    )
    torch.testing.assert_close(lap.predict_cov(zs), zs @ cov @ zs.T, rtol=1e-7, atol=1e-9)
    # Laplace evidence: log p(r|v*) + log p(v*) + D/2 log 2π − ½ log|Λ|
    a, s = 0.9, 0.3
    loglik = -0.5 * (n * math.log(2 * math.pi * s) + float(r @ r) / s)
    logprior = 0.5 * 12 * math.log(a / (2 * math.pi)) - 0.5 * a * float(vstar @ vstar)
    _, logdet = torch.linalg.slogdet(torch.linalg.inv(cov))
    ref = loglik + logprior + 6 * math.log(2 * math.pi) - 0.5 * float(logdet)
    assert lap.log_evidence(a, s) == pytest.approx(ref, rel=1e-9)


def test_maximise_evidence_finds_the_peak() -> None:
    f = lambda la, ls: -((la - 1.3) ** 2) - 2 * (ls + 0.7) ** 2  # noqa: E731
    a, s = maximise_evidence(f)
    assert math.log(a) == pytest.approx(1.3, abs=1e-2)
    assert math.log(s) == pytest.approx(-0.7, abs=1e-2)
    a, s = maximise_evidence(f, noise=2.0)
    assert s == 2.0
    assert math.log(a) == pytest.approx(1.3, abs=1e-2)


def test_bad_inputs_raise_clear_errors() -> None:
    Z, y = _data()
    with pytest.raises(ValueError, match="targets"):
        BayesLinReg().fit(Z, y[:-1])
    bad = y.clone()
    bad[0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        BayesLinReg().fit(Z, bad)
    with pytest.raises(ValueError, match="positive definite"):
        BayesLinReg(K=-torch.eye(5, dtype=torch.float64)).fit(Z, y)
    with pytest.raises(ValueError, match="expected"):
        BayesLinReg(K=torch.eye(3, dtype=torch.float64)).fit(Z, y)


def test_covariance_factor_does_not_depend_on_the_eigensolvers_signs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """cuSOLVER and LAPACK may return an eigenvector or its negative: the factor used for
    sampling (so samples drawn with one seed) must not change (found on an H200)."""
    g = torch.Generator().manual_seed(3)
    Z = torch.randn(40, 5, generator=g, dtype=torch.float64)
    y = Z @ torch.randn(5, generator=g, dtype=torch.float64)
    plain = BayesLinReg(alpha=0.7, noise=0.1).fit(Z, y).cov_factor()
    eigh = torch.linalg.eigh

    def flipped(S: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        lam, Q = eigh(S)
        return lam, -Q

    monkeypatch.setattr(torch.linalg, "eigh", flipped)
    torch.testing.assert_close(BayesLinReg(alpha=0.7, noise=0.1).fit(Z, y).cov_factor(), plain)
