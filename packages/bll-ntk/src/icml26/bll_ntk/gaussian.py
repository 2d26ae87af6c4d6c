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


def _eigh_fixed_signs(S: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``torch.linalg.eigh`` with each eigenvector's sign fixed (largest entry positive).

    LAPACK and cuSOLVER may return an eigenvector or its negative; fixing the sign makes the
    covariance factor, and so posterior samples drawn with one seed, the same on every device.
    """
    lam, Q = torch.linalg.eigh(S)
    pivot = Q.abs().argmax(dim=0, keepdim=True)
    signs = torch.sign(torch.gather(Q, 0, pivot))
    return lam, Q * torch.where(signs == 0, torch.ones_like(signs), signs)


def _search_grid(
    model: Any, alpha_grid: Any | None, noise_grid: Any | None
) -> tuple[np.ndarray, np.ndarray]:
    """The flattened (α, σ²) pairs a validation search tries: by default α on
    ``10^-4 .. 10^4`` (33 points) and σ² on ``10^-1.5 .. 10^1.5`` times ``model.noise``
    (25 points); a hyperparameter given to ``model``'s constructor stays fixed."""
    a_grid = np.logspace(-4, 4, 33) if alpha_grid is None else np.asarray(alpha_grid, float)
    s_grid = (
        float(model.noise) * np.logspace(-1.5, 1.5, 25)
        if noise_grid is None
        else np.asarray(noise_grid, float)
    )
    a_grid = a_grid if model._given_alpha is None else np.array([model._given_alpha])
    s_grid = s_grid if model._given_noise is None else np.array([model._given_noise])
    A, S = (g.ravel() for g in np.meshgrid(a_grid, s_grid, indexing="ij"))
    return A, S


@dataclass
class BayesLinReg:
    """Conjugate Bayesian linear regression with prior ``N(0, α⁻¹ K)``.

    Args:
        K: ``(D, D)`` positive-definite prior factor (``None`` = identity).
        alpha: fixed prior precision; ``None`` = chosen by :meth:`fit` (type-II ML) or
            :meth:`select_on_validation`.
        noise: fixed noise variance σ²; ``None`` = chosen likewise.
    """

    K: torch.Tensor | None = None
    alpha: float | None = None
    noise: float | None = None

    def fit(
        self, Z: torch.Tensor, y: torch.Tensor, weights: torch.Tensor | None = None
    ) -> BayesLinReg:
        """Condition on rows ``Z (n, D)`` and targets ``y (n,)``; set α, σ² by ML-II if unset.

        Args:
            Z: design rows.
            y: targets.
            weights: ``(n,)`` powers of each row's likelihood: ``N/m`` for a uniform subsample
                of ``m`` of ``N`` points gives an unbiased estimate of the full Gram.

        Returns:
            ``self``, fitted.

        Raises:
            ValueError: shapes that do not match, NaN/inf, negative weights, or a ``K`` that
                is not positive definite.
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
        return self.fit_gram(Z.T @ Z, Z.T @ y, float(y @ y), n_eff)

    def fit_gram(self, G: torch.Tensor, b: torch.Tensor, yty: float, n: float) -> BayesLinReg:
        """Condition on sufficient statistics: ``G = ZᵀZ (D, D)``, ``b = Zᵀy (D,)``,
        ``yᵀy`` and the (effective) number of observations ``n``.

        The statistics can be accumulated over mini-batches, so the ``n × D`` design is never
        formed (a multi-output last layer's ``ZᵀZ`` is block-diagonal, one block per output).

        Args:
            G: the Gram matrix.
            b: the design-target products.
            yty: the targets' sum of squares.
            n: the number of observations (the sum of the weights).

        Returns:
            ``self``, fitted.

        Raises:
            ValueError: no observations, mismatched shapes, NaN/inf, or a ``K`` that is not
                positive definite.
        """
        G, b = G.double(), b.double().reshape(-1)
        D = G.shape[0]
        if G.shape != (D, D) or b.shape != (D,):
            raise ValueError(f"Gram {tuple(G.shape)} and products {tuple(b.shape)} do not match")
        if n <= 0:
            raise ValueError("no observations to condition on")
        if not (torch.isfinite(G).all() and torch.isfinite(b).all() and math.isfinite(yty)):
            raise ValueError("design rows or targets contain NaN or inf")
        if self.K is None:
            L = torch.eye(D, dtype=torch.float64, device=G.device)
        else:
            if self.K.shape != (D, D):
                raise ValueError(f"prior factor K is {tuple(self.K.shape)}, expected ({D}, {D})")
            try:
                L = torch.linalg.cholesky(self.K.to(device=G.device, dtype=torch.float64))
            except torch.linalg.LinAlgError as exc:
                raise ValueError("prior factor K is not positive definite") from exc
        self._L = L
        Gw = L.T @ G @ L
        lam, Q = _eigh_fixed_signs(0.5 * (Gw + Gw.T))
        self._lam = lam.clamp_min(0.0)
        self._Q = Q
        self._bq = Q.T @ (L.T @ b)
        self._lam_host = self._lam.cpu().numpy()  # the evidence search runs on the host
        self._bq_host = self._bq.cpu().numpy()
        self._yty = float(yty)
        self._n = float(n)
        self.alpha, self.noise = maximise_evidence(
            lambda la, ls: self.log_evidence(np.exp(la), np.exp(ls)),
            alpha=self.alpha,
            noise=self.noise,
        )
        return self

    def log_evidence(self, alpha: Any, noise: Any) -> Any:
        """``log p(y | α, σ²)`` (exact, conjugate); vectorised over arrays of α and σ².

        Args:
            alpha: prior precision(s).
            noise: noise variance(s), broadcast against ``alpha``.

        Returns:
            The log marginal likelihood, an array shaped like the broadcast inputs.
        """
        lam, bq = self._lam_host, self._bq_host
        a = np.asarray(alpha, dtype=float)[..., None]
        s = np.asarray(noise, dtype=float)[..., None]
        prec = a + lam / s
        quad = self._yty / s[..., 0] - np.sum(bq**2 / prec, axis=-1) / s[..., 0] ** 2
        logdet = np.sum(np.log1p(lam / (a * s)), axis=-1) + self._n * np.log(s[..., 0])
        return -0.5 * (self._n * _LOG2PI + logdet + quad)

    def grid_predict(
        self, Zs: torch.Tensor, alphas: np.ndarray, noises: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Predictive means and epistemic variances of rows ``Zs`` for every ``(α, σ²)`` pair.

        Args:
            Zs: ``(m, D)`` rows.
            alphas: ``(g,)`` prior precisions.
            noises: ``(g,)`` noise variances (paired with ``alphas``).

        Returns:
            ``(mean, var)``, each ``(m, g)`` (host arrays).
        """
        P = (Zs.double() @ self._L @ self._Q).cpu().numpy()
        a, s = np.asarray(alphas, float)[None], np.asarray(noises, float)[None]
        lam, bq = self._lam_host[:, None], self._bq_host[:, None]
        mean = P @ (bq / (a * s + lam))
        var = (P**2) @ (1.0 / (a + lam / s))
        return mean, var

    def select_on_validation(
        self,
        Zs: torch.Tensor,
        ys: torch.Tensor,
        *,
        alpha_grid: np.ndarray | None = None,
        noise_grid: np.ndarray | None = None,
    ) -> tuple[float, float]:
        """Set (α, σ²) to the pair of the grid with the lowest Gaussian NLL on validation rows.

        The laplace-torch recipe (``optimize_prior_precision(method="gridsearch")``) with the
        noise searched jointly: by default α on ``10^-4 .. 10^4`` (33 points) and σ² on
        ``10^-1.5 .. 10^1.5`` times the type-II ML σ² (25 points). A hyperparameter given to
        the constructor stays fixed.

        Args:
            Zs: ``(m, D)`` validation rows.
            ys: ``(m,)`` validation targets.
            alpha_grid: candidate α (default above).
            noise_grid: candidate σ² (default above).

        Returns:
            The chosen ``(α, σ²)``, also stored on ``self``.
        """
        y = ys.double().reshape(-1).cpu().numpy()[:, None]
        A, S = _search_grid(self, alpha_grid, noise_grid)
        mean, var = self.grid_predict(Zs, A, S)
        total = var + S[None]
        nll = 0.5 * np.mean(np.log(2 * np.pi * total) + (y - mean) ** 2 / total, axis=0)
        k = int(np.argmin(np.where(np.isfinite(nll), nll, np.inf)))
        self.alpha, self.noise = float(A[k]), float(S[k])
        return self.alpha, self.noise

    def __post_init__(self) -> None:
        self._given_alpha, self._given_noise = self.alpha, self.noise

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
        B = self.cov_factor()
        return B @ B.T

    def cov_factor(self) -> torch.Tensor:
        """``B`` with ``cov = B Bᵀ`` (for sampling)."""
        return self._L @ self._Q / self._prec().sqrt()

    def predict(self, Zs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and *function-space* (epistemic) variance of ``zᵀv`` for rows ``Zs``.

        Args:
            Zs: ``(m, D)`` rows.

        Returns:
            ``(mean (m,), var (m,))``.
        """
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

    def __post_init__(self) -> None:
        self._given_alpha, self._given_noise = self.alpha, self.noise

    def fit(self, Z: torch.Tensor, residual: torch.Tensor, sq_norm: float) -> LaplaceLinReg:
        """Fit on rows ``Z (n, D)``, training residuals ``y − f*(x)`` and ``‖v*‖²``."""
        Z, r = _check_rows(Z, residual)
        n, D = Z.shape
        self._function_space = n < D
        G = Z @ Z.T if self._function_space else Z.T @ Z
        lam, Q = _eigh_fixed_signs(0.5 * (G + G.T))
        self._lam, self._Q, self._Z = lam.clamp_min(0.0), Q, Z
        self._lam_host = self._lam.cpu().numpy()  # the evidence search runs on the host
        self._rss, self._n, self._sq = float(r @ r), n, float(sq_norm)
        self.alpha, self.noise = maximise_evidence(
            lambda la, ls: self.log_evidence(np.exp(la), np.exp(ls)),
            alpha=self._given_alpha,
            noise=self._given_noise,
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

    def select_on_validation(
        self,
        Zs: torch.Tensor,
        residual: torch.Tensor,
        *,
        alpha_grid: np.ndarray | None = None,
        noise_grid: np.ndarray | None = None,
    ) -> tuple[float, float]:
        """Set (α, σ²) to the grid pair with the lowest Gaussian NLL on validation rows.

        The same recipe and default grids as :meth:`BayesLinReg.select_on_validation` (α on
        ``10^-4 .. 10^4``, σ² on ``10^-1.5 .. 10^1.5`` times the evidence's σ²); the mean
        stays the trained network's, so only the variance depends on the pair. A
        hyperparameter given to the constructor stays fixed.

        Args:
            Zs: ``(m, D)`` validation rows.
            residual: ``(m,)`` validation residuals ``y − f*(x)``.
            alpha_grid: candidate α.
            noise_grid: candidate σ².

        Returns:
            The chosen ``(α, σ²)``, also stored on ``self``.
        """
        r = residual.double().reshape(-1).cpu().numpy()[:, None]
        A, S = (g[None] for g in _search_grid(self, alpha_grid, noise_grid))
        Zs = Zs.double().to(self._Q.device)
        lam = self._lam_host[:, None]
        if self._function_space:
            K2 = ((Zs @ self._Z.T @ self._Q) ** 2).cpu().numpy()  # (m, n)
            sq = (Zs**2).sum(1).cpu().numpy()[:, None]
            var = sq / A - K2 @ (1.0 / (A * (lam + A * S)))
        else:
            F2 = ((Zs @ self._Q) ** 2).cpu().numpy()  # (m, D)
            var = F2 @ (1.0 / (A + lam / S))
        total = np.maximum(var, 0.0) + S
        nll = 0.5 * np.mean(np.log(2 * np.pi * total) + r**2 / total, axis=0)
        k = int(np.argmin(np.where(np.isfinite(nll), nll, np.inf)))
        self.alpha, self.noise = float(A[0, k]), float(S[0, k])
        return self.alpha, self.noise

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
