"""The user-facing posteriors for a trained network: BLL, NTK-projected BLL and Laplace.

Every class wraps a trained ``nn.Module`` with a named final ``nn.Linear``::

    post = NTKBLL(model, last_layer="head", likelihood="regression").fit(x_train, y_train)
    pred = post.predict(x_test)        # RegressionPredictive(mean, var, noise)

* :class:`BLL`: standard Bayesian last layer (conjugate regression / Laplace-GLM softmax).
* :class:`NTKBLL`: BLL whose prior covariance carries the projected NTK features of the
  earlier layers, ``α⁻¹(I + M)`` (:func:`icml26.bll_ntk.jacobians.ntk_projection`); optional
  uniform subsampling for the projection (``subsample``) and the posterior
  (``posterior_subsample``). With the same (α, σ²) its posterior variance is never below
  BLL's, because ``I + M ⪰ I``.
* :class:`LastLayerLaplace`: Laplace around the trained head.
* :class:`LinearisedLaplace`: the full-network linearised Laplace / NTK-GP (``lla``).

Regression targets are ``(N,)`` or ``(N, C)``; a boolean ``mask (N, C)`` marks which entries
are observed (contextual bandits). Classification targets are integer labels.

Devices: everything runs on the device of the network and its inputs (CUDA in, CUDA out).
Targets and masks are moved there; the posterior algebra is float64 torch on that device.
Random subsamples and samples are drawn from CPU generators and moved, so a seed gives the
same draws on every device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from icml26.bll_ntk.gaussian import BayesLinReg, LaplaceLinReg
from icml26.bll_ntk.glm import FullGGNLaplace, LastLayerGLM, predictive_probs
from icml26.bll_ntk.jacobians import NTKProjection, jacobian, ntk_projection
from icml26.bll_ntk.network import LastLayerModel

__all__ = [
    "BLL",
    "NTKBLL",
    "ClassificationPredictive",
    "LastLayerLaplace",
    "LinearisedLaplace",
    "RegressionPredictive",
]

Likelihood = Literal["regression", "classification"]


@dataclass(frozen=True)
class RegressionPredictive:
    """Gaussian predictive: ``mean (N, C)``, epistemic ``var (N, C)``, homoscedastic ``noise``."""

    mean: torch.Tensor
    var: torch.Tensor
    noise: float

    @property
    def total_var(self) -> torch.Tensor:
        return self.var + self.noise


@dataclass(frozen=True)
class ClassificationPredictive:
    """Class probabilities ``(N, C)`` and the epistemic logit variance ``tr Σ_f(x)`` (N,)."""

    probs: torch.Tensor
    logit_var: torch.Tensor


def head_rows(phi: torch.Tensor, n_outputs: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Design rows ``e_c ⊗ φ̃(x_n)`` for every (observed) pair (n, c), n-major."""
    N, d = phi.shape
    Z = torch.zeros(N, n_outputs, n_outputs * d, dtype=phi.dtype, device=phi.device)
    for c in range(n_outputs):
        Z[:, c, c * d : (c + 1) * d] = phi
    Z = Z.reshape(N * n_outputs, n_outputs * d)
    return Z if mask is None else Z[mask.reshape(-1).bool()]


def _targets(
    y: torch.Tensor, n: int, C: int, mask: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    if y.ndim == 1:
        y = y[:, None]
    if y.shape != (n, C):
        raise ValueError(f"regression targets have shape {tuple(y.shape)}, expected ({n}, {C})")
    if mask is not None:
        if mask.shape != (n, C):
            raise ValueError(f"mask has shape {tuple(mask.shape)}, expected ({n}, {C})")
        mask = mask.to(device=y.device, dtype=torch.bool)
        obs = y[mask]
    else:
        obs = y.reshape(-1)
    if not torch.isfinite(obs).all():
        raise ValueError("regression targets contain NaN or inf")
    return obs, mask


def _check_inputs(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"inputs must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim < 2 or x.shape[0] == 0:
        raise ValueError(f"inputs must be a non-empty batch (N, ...), got shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("inputs contain NaN or inf")


class _Base:
    def __init__(
        self,
        model: nn.Module,
        last_layer: str = "head",
        likelihood: Likelihood = "regression",
        *,
        alpha: float | None = None,
        noise: float | None = None,
        predictive: str = "probit",
        refit: bool = False,
    ) -> None:
        if likelihood not in ("regression", "classification"):
            raise ValueError(
                f"likelihood must be 'regression' or 'classification', got {likelihood!r}"
            )
        if alpha is not None and alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        if noise is not None and noise <= 0:
            raise ValueError(f"noise must be > 0, got {noise}")
        if predictive not in ("probit", "mc"):
            raise ValueError(f"predictive must be 'probit' or 'mc', got {predictive!r}")
        self.net = LastLayerModel(model, last_layer)
        self.likelihood = likelihood
        self.alpha, self.noise, self.predictive = alpha, noise, predictive
        self._given = (alpha, noise)
        self.refit = refit
        self._fitted = False

    @property
    def n_outputs(self) -> int:
        return self.net.n_outputs

    def _require_fit(self) -> None:
        if not self._fitted:
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit(x, y) first")

    def _probs(self, mean: torch.Tensor, cov: torch.Tensor) -> ClassificationPredictive:
        probs = predictive_probs(mean, cov, method=self.predictive)
        return ClassificationPredictive(probs, torch.diagonal(cov, dim1=1, dim2=2).sum(1))


class BLL(_Base):
    """Standard Bayesian last layer: prior ``N(0, α⁻¹ I)`` on ``vec([W, b])``, α and σ² by
    type-II maximum likelihood unless given.

    Classification uses the Laplace/GLM approximation. By default (``refit=False``) it is
    taken at the trained head, the usual choice because on the (nearly separable) training
    features the MAP-refit's Laplace evidence drives α towards 0. ``refit=True`` re-estimates
    the head as the MAP under the prior.
    """

    def _prior_factor(self, x: torch.Tensor) -> torch.Tensor | None:
        return None

    def _posterior_weights(self, n: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(indices, weights) of the points used for posterior inference (all by default)."""
        return None, None

    def fit(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None) -> BLL:
        _check_inputs(x)
        self.net.model.eval()
        phi, _ = self.net.features(x)
        phi = phi.double()
        N, C = phi.shape[0], self.n_outputs
        K = self._prior_factor(x)
        idx, w = self._posterior_weights(N)
        dev = phi.device
        y = y.to(dev)
        idx = None if idx is None else idx.to(dev)
        if self.likelihood == "regression":
            _obs, mask = _targets(y.double(), N, C, mask)
            full_mask = mask if mask is not None else torch.ones(N, C, dtype=torch.bool, device=dev)
            if idx is not None:
                keep = torch.zeros(N, dtype=torch.bool, device=dev)
                keep[idx] = True
                full_mask = full_mask & keep[:, None]
            Z = head_rows(phi, C, full_mask)
            yy = y.double().reshape(N, C)[full_mask]
            ww = (
                None
                if w is None
                else torch.full((Z.shape[0],), float(w), dtype=torch.float64, device=dev)
            )
            self.posterior_ = BayesLinReg(K=K, alpha=self.alpha, noise=self.noise).fit(Z, yy, ww)
            self.alpha_, self.noise_ = self.posterior_.alpha, self.posterior_.noise
        else:
            if mask is not None:
                raise ValueError("a mask is only meaningful for regression targets")
            if y.ndim != 1 or y.shape[0] != N:
                raise ValueError(
                    f"classification labels must have shape ({N},), got {tuple(y.shape)}"
                )
            phis, ys = (phi, y) if idx is None else (phi[idx], y[idx])
            ws = (
                None
                if w is None
                else torch.full((phis.shape[0],), float(w), dtype=torch.float64, device=dev)
            )
            self.posterior_ = LastLayerGLM(C, K=K, alpha=self.alpha, refit=self.refit).fit(
                phis, ys, self.net.head_vector(), ws
            )
            self.alpha_, self.noise_ = self.posterior_.alpha, None
        self._fitted = True
        return self

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        self._require_fit()
        _check_inputs(x)
        phi, _ = self.net.features(x)
        phi = phi.double()
        N, C = phi.shape[0], self.n_outputs
        if self.likelihood == "regression":
            mean, var = self.posterior_.predict(head_rows(phi, C))
            return RegressionPredictive(mean.reshape(N, C), var.reshape(N, C), float(self.noise_))
        mean, cov = self.posterior_.predict_logits(phi)
        return self._probs(mean, cov)

    def sample_functions(
        self, x: torch.Tensor, n_samples: int = 1, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Posterior function samples ``(S, N, C)`` (weights drawn jointly): Thompson sampling.

        The standard normals come from ``generator`` on its own device (the CPU by default) and
        are moved to the posterior's device, so one seed gives the same samples everywhere.
        """
        self._require_fit()
        phi, _ = self.net.features(x)
        phi = phi.double()
        C = self.n_outputs
        if self.likelihood == "regression":
            mean, B = self.posterior_.mean, self.posterior_.cov_factor()
        else:
            mean = self.posterior_.mean
            B = torch.linalg.cholesky(
                self.posterior_.cov
                + 1e-10 * torch.eye(mean.shape[0], dtype=torch.float64, device=mean.device)
            )
        eps = torch.randn(
            n_samples,
            B.shape[1],
            generator=generator,
            dtype=torch.float64,
            device=generator.device if generator is not None else "cpu",
        ).to(B.device)
        v = mean[None] + eps @ B.T
        return torch.einsum("nk,sck->snc", phi, v.reshape(n_samples, C, -1))


class NTKBLL(BLL):
    """Bayesian last layer with projected NTK features (the paper's method).

    Args:
        ridge: ``λ`` of the least-squares projection of body Jacobians onto the features.
        subsample: points drawn uniformly to estimate the projection (``None`` = all).
        posterior_subsample: points drawn uniformly for posterior inference, each weighted
            ``N/m`` (``None`` = all).
        hyperparameters: ``"bll"`` (default) reuses the standard BLL's type-II ML (α, σ²), the
            setting of the variance guarantee (every predictive variance >= BLL's);
            ``"own"`` maximises this model's own evidence, where the guarantee does not hold.
        seed: RNG seed of the subsamples.
        chunk: examples per Jacobian chunk.
    """

    def __init__(
        self,
        model: nn.Module,
        last_layer: str = "head",
        likelihood: Likelihood = "regression",
        *,
        ridge: float = 1.0,
        subsample: int | None = None,
        posterior_subsample: int | None = None,
        hyperparameters: Literal["own", "bll"] = "bll",
        alpha: float | None = None,
        noise: float | None = None,
        predictive: str = "probit",
        refit: bool = False,
        seed: int = 0,
        chunk: int = 128,
    ) -> None:
        super().__init__(
            model,
            last_layer,
            likelihood,
            alpha=alpha,
            noise=noise,
            predictive=predictive,
            refit=refit,
        )
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        for name, val in (("subsample", subsample), ("posterior_subsample", posterior_subsample)):
            if val is not None and val < 1:
                raise ValueError(f"{name} must be a positive number of points, got {val}")
        if hyperparameters not in ("own", "bll"):
            raise ValueError(f"hyperparameters must be 'own' or 'bll', got {hyperparameters!r}")
        self.ridge, self.subsample, self.posterior_subsample = ridge, subsample, posterior_subsample
        self.hyperparameters = hyperparameters
        self.seed, self.chunk = seed, chunk

    def _prior_factor(self, x: torch.Tensor) -> torch.Tensor:
        if self._reuse and hasattr(self, "projection_"):
            return self.projection_.prior_factor()
        gen = torch.Generator().manual_seed(self.seed)
        self.projection_: NTKProjection = ntk_projection(
            self.net, x, ridge=self.ridge, subsample=self.subsample, generator=gen, chunk=self.chunk
        )
        return self.projection_.prior_factor()

    def _posterior_weights(self, n: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        m = self.posterior_subsample
        if m is None or m >= n:
            return None, None
        gen = torch.Generator().manual_seed(self.seed + 1)
        return torch.randperm(n, generator=gen)[:m], torch.tensor(n / m)

    def fit(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        reuse_projection: bool = False,
    ) -> NTKBLL:
        """Fit; ``reuse_projection`` keeps the projection of an earlier fit (same network,
        more data: e.g. between two retrainings of a bandit's network)."""
        self._reuse = reuse_projection
        self.alpha, self.noise = self._given
        if self.hyperparameters == "bll" and (
            self.alpha is None or (self.noise is None and self.likelihood == "regression")
        ):
            ref = BLL(
                self.net.model,
                self.net.last_layer,
                self.likelihood,
                alpha=self.alpha,
                noise=self.noise,
                refit=self.refit,
            )
            ref.fit(x, y, mask)
            self.alpha, self.noise = ref.alpha_, ref.noise_
        super().fit(x, y, mask)
        return self


class LastLayerLaplace(_Base):
    """Laplace approximation of the last layer around the trained head (mean = the network)."""

    def fit(
        self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None
    ) -> LastLayerLaplace:
        _check_inputs(x)
        self.net.model.eval()
        phi, out = self.net.features(x)
        phi, out = phi.double(), out.double()
        N, C = phi.shape[0], self.n_outputs
        v0 = self.net.head_vector().double()
        y = y.to(phi.device)
        if self.likelihood == "regression":
            obs, mask = _targets(y.double(), N, C, mask)
            resid = obs - (out[mask] if mask is not None else out.reshape(-1))
            Z = head_rows(phi, C, mask)
            self.posterior_ = LaplaceLinReg(alpha=self.alpha, noise=self.noise).fit(
                Z, resid, float(v0 @ v0)
            )
            self.alpha_, self.noise_ = self.posterior_.alpha, self.posterior_.noise
        else:
            self.posterior_ = LastLayerGLM(C, alpha=self.alpha, refit=False).fit(phi, y, v0)
            self.alpha_, self.noise_ = self.posterior_.alpha, None
        self._fitted = True
        return self

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        self._require_fit()
        _check_inputs(x)
        phi, out = self.net.features(x)
        phi, out = phi.double(), out.double()
        N, C = phi.shape[0], self.n_outputs
        if self.likelihood == "regression":
            var = self.posterior_.predict_var(head_rows(phi, C)).reshape(N, C)
            return RegressionPredictive(out, var, float(self.noise_))
        mean, cov = self.posterior_.predict_logits(phi)
        return self._probs(mean, cov)

    def output_cov(self, x: torch.Tensor) -> torch.Tensor:
        """Joint covariance of the C outputs at each input ``(N, C, C)`` (regression)."""
        phi, _ = self.net.features(x)
        C = self.n_outputs
        return torch.stack(
            [self.posterior_.predict_cov(head_rows(p[None].double(), C)) for p in phi]
        )


class LinearisedLaplace(_Base):
    """Linearised Laplace over *all* parameters (NTK-GP); exact on small networks, costs
    Jacobians of every training and test point and a (P or N)-sized factorisation."""

    def __init__(self, *args, chunk: int = 128, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.chunk = chunk

    def _sq_norm(self) -> float:
        return float(sum((p.detach().double() ** 2).sum() for p in self.net.model.parameters()))

    def fit(
        self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None
    ) -> LinearisedLaplace:
        _check_inputs(x)
        self.net.model.eval()
        with torch.no_grad():
            out = self.net.model(x).double().reshape(x.shape[0], -1)
        N, C = out.shape
        dev = out.device
        y = y.to(dev)
        if self.likelihood == "regression":
            obs, mask = _targets(y.double(), N, C, mask)
            J = jacobian(self.net, x, chunk=self.chunk).double().reshape(N * C, -1)
            sel = (
                mask.reshape(-1)
                if mask is not None
                else torch.ones(N * C, dtype=torch.bool, device=dev)
            )
            resid = obs - out.reshape(-1)[sel]
            self.posterior_ = LaplaceLinReg(alpha=self.alpha, noise=self.noise).fit(
                J[sel], resid, self._sq_norm()
            )
            self.alpha_, self.noise_ = self.posterior_.alpha, self.posterior_.noise
        else:
            probs = torch.softmax(out, dim=1)
            loglik = float(torch.log_softmax(out, 1)[torch.arange(N, device=dev), y.long()].sum())
            chunks = [
                jacobian(self.net, x[s : s + self.chunk], chunk=self.chunk)
                for s in range(0, N, self.chunk)
            ]
            self.posterior_ = FullGGNLaplace(alpha=self.alpha).fit(
                chunks, probs, loglik, self._sq_norm()
            )
            self.alpha_, self.noise_ = self.posterior_.alpha, None
        self._fitted = True
        return self

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        self._require_fit()
        _check_inputs(x)
        with torch.no_grad():
            out = self.net.model(x).double().reshape(x.shape[0], -1)
        N, C = out.shape
        if self.likelihood == "regression":
            var = torch.cat(
                [
                    self.posterior_.predict_var(
                        jacobian(self.net, x[s : s + self.chunk]).reshape(-1, self._P(x))
                    )
                    for s in range(0, N, self.chunk)
                ]
            )
            return RegressionPredictive(out, var.reshape(N, C), float(self.noise_))
        cov = torch.cat(
            [
                self.posterior_.logit_cov(jacobian(self.net, x[s : s + self.chunk]))
                for s in range(0, N, self.chunk)
            ]
        )
        return self._probs(out, cov)

    def _P(self, x: torch.Tensor) -> int:
        return sum(p.numel() for p in self.net.model.parameters())

    def output_cov(self, x: torch.Tensor) -> torch.Tensor:
        """Joint covariance of the C outputs at each input ``(N, C, C)`` (regression)."""
        J = jacobian(self.net, x).double()
        return torch.stack([self.posterior_.predict_cov(Jn) for Jn in J])


def gaussian_nll(y: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """Per-point Gaussian negative log-likelihood."""
    return 0.5 * (torch.log(2 * math.pi * var) + (y - mean) ** 2 / var)
