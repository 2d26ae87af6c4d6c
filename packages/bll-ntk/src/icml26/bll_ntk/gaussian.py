"""Gaussian-likelihood posteriors: Bayesian linear regression and a Laplace fit of a linear model.

Both work on *observation rows*: observation ``i`` is a scalar target ``y_i`` with a design
row ``z_i ∈ R^D`` (for a last layer with C outputs and features φ̃, ``z = e_c ⊗ φ̃(x)``, so
masked multi-output data, e.g. a bandit where only the pulled arm is seen, is just fewer
rows). Noise ``y = zᵀv + ε``, ``ε ~ N(0, σ²)``; prior ``v ~ N(0, α⁻¹ K)``.

* :class:`BayesLinReg` is exact conjugate inference (standard BLL with ``K = I``; the
  NTK-projected BLL with ``K = I + M``, see :mod:`icml26.bll_ntk.jacobians`). The marginal
  likelihood ``log N(y | 0, σ²I + α⁻¹ Z K Zᵀ)`` is evaluated in O(D) per hyperparameter
  after one eigendecomposition of the whitened Gram ``Lᵀ ZᵀZ L`` (``K = L Lᵀ``).
* :class:`LaplaceLinReg` keeps the trained weights as the mean (a Laplace approximation
  around the MAP ``v*``, Immer et al. 2021) with precision ``αI + ZᵀZ/σ²`` and the Laplace
  evidence ``log p(y|v*) − α/2‖v*‖² − ½ log|I + ZᵀZ/(ασ²)|``. With ``Z`` the last-layer rows it
  is last-layer Laplace; with ``Z`` the full Jacobian it is the linearised Laplace / NTK-GP
  (the methods ``bll.LastLayerLaplace`` and ``bll.LinearisedLaplace`` are built on it).
  It switches to function space (N × N) when there are fewer rows than parameters.

Hyperparameters ``(α, σ²)`` maximise the respective evidence (type-II ML) on successively
finer grids in log-space.

Devices: the factorisations and the posterior stay in float64 torch on the device of ``Z``.
The evidence search needs only the ``D`` eigenvalues (and ``D`` projected targets): those are
copied to the host once per fit, and the grid is evaluated there in NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["BayesLinReg", "LaplaceLinReg", "maximise_evidence"]

_LOG2PI = math.log(2 * math.pi)


def _check_rows(Z: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if Z.ndim != 2:
        raise ValueError(f"design rows must be a matrix (n, D), got shape {tuple(Z.shape)}")
    y = y.reshape(-1)
    if y.shape[0] != Z.shape[0]:
        raise ValueError(f"{Z.shape[0]} design rows but {y.shape[0]} targets")
    if Z.shape[0] == 0:
        raise ValueError("no observations to condition on")
    if not (torch.isfinite(Z).all() and torch.isfinite(y).all()):
        raise ValueError("design rows or targets contain NaN or inf")
    return Z.double(), y.double()


def maximise_evidence(
    log_evidence: Callable[[np.ndarray, np.ndarray], np.ndarray],
    *,
    alpha: float | None = None,
    noise: float | None = None,
    bounds: tuple[float, float] = (-14.0, 14.0),
    points: int = 29,
    rounds: int = 4,
) -> tuple[float, float]:
    """Maximise a *vectorised* ``log_evidence(log α, log σ²)`` over the free hyperparameters.

    A dense grid in log-space, then ``rounds`` successively finer grids around the best
    point: robust to the multi-modality of evidence surfaces, dependency-free, and cheap
    because each evaluation is O(D) after the eigendecomposition.

    Returns ``(α, σ²)``.
    """
    if alpha is not None and noise is not None:
        return alpha, noise
    lo, hi = bounds
    ca = (lo + hi) / 2 if alpha is None else math.log(alpha)
    cs = (lo + hi) / 2 if noise is None else math.log(noise)
    half = (hi - lo) / 2
    for _ in range(rounds + 1):
        ga = np.linspace(ca - half, ca + half, points) if alpha is None else np.array([ca])
        gs = np.linspace(cs - half, cs + half, points) if noise is None else np.array([cs])
        A, S = np.meshgrid(ga, gs, indexing="ij")
        vals = np.asarray(log_evidence(A.ravel(), S.ravel()), dtype=float)
        vals = np.where(np.isfinite(vals), vals, -np.inf)
        k = int(np.argmax(vals))
        ca, cs = float(A.ravel()[k]), float(S.ravel()[k])
        half *= 4.0 / (points - 1)
    return math.exp(ca), math.exp(cs)


@dataclass
class BayesLinReg:
    """Conjugate Bayesian linear regression with prior ``N(0, α⁻¹ K)``.

    Args:
        K: ``(D, D)`` positive-definite prior factor (``None`` = identity).
        alpha, noise: fixed hyperparameters; ``None`` = type-II ML (:meth:`fit`).
    """

    K: torch.Tensor | None = None
    alpha: float | None = None
    noise: float | None = None

    def fit(
        self, Z: torch.Tensor, y: torch.Tensor, weights: torch.Tensor | None = None
    ) -> BayesLinReg:
        """Condition on rows ``Z (n, D)`` and targets ``y (n,)``; set α, σ² by ML-II if unset.

        ``weights`` (n,) raise each row's likelihood to a power: ``N/m`` for a uniform
        subsample of ``m`` of ``N`` points gives an unbiased estimate of the full Gram.
        """
        Z, y = _check_rows(Z, y)
        if weights is not None:
            w = weights.to(device=Z.device, dtype=torch.float64).reshape(-1)
            if w.shape[0] != Z.shape[0] or bool((w < 0).any()):
                raise ValueError("weights must be one non-negative number per row")
            sw = w.sqrt()
            Z, y = Z * sw[:, None], y * sw
            n_eff = float(w.sum())
        else:
            n_eff = float(Z.shape[0])
        D = Z.shape[1]
        if self.K is None:
            L = torch.eye(D, dtype=torch.float64, device=Z.device)
        else:
            if self.K.shape != (D, D):
                raise ValueError(f"prior factor K is {tuple(self.K.shape)}, expected ({D}, {D})")
            try:
                L = torch.linalg.cholesky(self.K.to(device=Z.device, dtype=torch.float64))
            except torch.linalg.LinAlgError as exc:
                raise ValueError("prior factor K is not positive definite") from exc
        self._L = L
        Zw = Z @ L
        G = Zw.T @ Zw
        lam, Q = torch.linalg.eigh(0.5 * (G + G.T))
        self._lam = lam.clamp_min(0.0)
        self._Q = Q
        self._bq = Q.T @ (Zw.T @ y)
        self._lam_host = self._lam.cpu().numpy()  # the evidence search runs on the host
        self._bq_host = self._bq.cpu().numpy()
        self._yty = float(y @ y)
        self._n = n_eff
        self.alpha, self.noise = maximise_evidence(
            lambda la, ls: self.log_evidence(np.exp(la), np.exp(ls)),
            alpha=self.alpha,
            noise=self.noise,
        )
        return self

    def log_evidence(self, alpha: Any, noise: Any) -> Any:
        """``log p(y | α, σ²)`` (exact, conjugate); vectorised over arrays of α and σ²."""
        lam, bq = self._lam_host, self._bq_host
        a = np.asarray(alpha, dtype=float)[..., None]
        s = np.asarray(noise, dtype=float)[..., None]
        prec = a + lam / s
        quad = self._yty / s[..., 0] - np.sum(bq**2 / prec, axis=-1) / s[..., 0] ** 2
        logdet = np.sum(np.log1p(lam / (a * s)), axis=-1) + self._n * np.log(s[..., 0])
        return -0.5 * (self._n * _LOG2PI + logdet + quad)

    # -- posterior ------------------------------------------------------------------------
    def _prec(self) -> torch.Tensor:
        assert self.alpha is not None
        assert self.noise is not None
        return self.alpha + self._lam / self.noise

    @property
    def mean(self) -> torch.Tensor:
        """Posterior mean of ``v`` (D,)."""
        assert self.noise is not None
        u = self._Q @ (self._bq / self._prec()) / self.noise
        return self._L @ u

    @property
    def cov(self) -> torch.Tensor:
        """Posterior covariance of ``v`` (D, D)."""
        B = self._L @ self._Q / self._prec().sqrt()
        return B @ B.T

    def cov_factor(self) -> torch.Tensor:
        """``B`` with ``cov = B Bᵀ`` (for sampling)."""
        return self._L @ self._Q / self._prec().sqrt()

    def predict(self, Zs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and *function-space* (epistemic) variance of ``zᵀv`` for rows ``Zs``."""
        Zs = Zs.double()
        proj = (Zs @ self._L @ self._Q) / self._prec().sqrt()
        return Zs @ self.mean, (proj**2).sum(1)


@dataclass
class LaplaceLinReg:
    """Laplace approximation around given weights ``v*`` for a model linear in ``Z``.

    Args:
        alpha, noise: fixed hyperparameters; ``None`` = maximise the Laplace evidence.
    """

    alpha: float | None = None
    noise: float | None = None

    def fit(self, Z: torch.Tensor, residual: torch.Tensor, sq_norm: float) -> LaplaceLinReg:
        """Fit on rows ``Z (n, D)``, training residuals ``y − f*(x)`` and ``‖v*‖²``."""
        Z, r = _check_rows(Z, residual)
        n, D = Z.shape
        self._function_space = n < D
        G = Z @ Z.T if self._function_space else Z.T @ Z
        lam, Q = torch.linalg.eigh(0.5 * (G + G.T))
        self._lam, self._Q, self._Z = lam.clamp_min(0.0), Q, Z
        self._lam_host = self._lam.cpu().numpy()  # the evidence search runs on the host
        self._rss, self._n, self._sq = float(r @ r), n, float(sq_norm)
        self.alpha, self.noise = maximise_evidence(
            lambda la, ls: self.log_evidence(np.exp(la), np.exp(ls)),
            alpha=self.alpha,
            noise=self.noise,
        )
        return self

    def log_evidence(self, alpha: Any, noise: Any) -> Any:
        """Laplace evidence at ``v*`` (the P log α of prior and Hessian cancel); vectorised."""
        lam = self._lam_host
        a = np.asarray(alpha, dtype=float)
        s = np.asarray(noise, dtype=float)
        loglik = -0.5 * (self._n * (_LOG2PI + np.log(s)) + self._rss / s)
        logdet = np.sum(np.log1p(lam / (a * s)[..., None]), axis=-1)
        return loglik - 0.5 * a * self._sq - 0.5 * logdet

    def predict_cov(self, Zs: torch.Tensor) -> torch.Tensor:
        """Posterior covariance of ``Zs v`` (m × m) for a few rows (e.g. the C outputs at one x)."""
        F = self._factor(Zs)
        base = Zs.double() @ Zs.double().T / self.alpha if self._function_space else 0.0
        return base + (F @ F.T if not self._function_space else -(F @ F.T))

    def predict_var(self, Zs: torch.Tensor) -> torch.Tensor:
        """Posterior (epistemic) variance of ``zᵀv`` for every row of ``Zs``."""
        F = self._factor(Zs)
        if self._function_space:
            return (Zs.double() ** 2).sum(1) / self.alpha - (F**2).sum(1)
        return (F**2).sum(1)

    def _factor(self, Zs: torch.Tensor) -> torch.Tensor:
        assert self.alpha is not None
        assert self.noise is not None
        Zs = Zs.double()
        if self._function_space:
            # Λ⁻¹ = α⁻¹ [I − Zᵀ (ασ² I + ZZᵀ)⁻¹ Z]  (Woodbury)
            K = Zs @ self._Z.T @ self._Q
            return K / torch.sqrt(self.alpha * (self._lam + self.alpha * self.noise))
        return (Zs @ self._Q) / torch.sqrt(self.alpha + self._lam / self.noise)
