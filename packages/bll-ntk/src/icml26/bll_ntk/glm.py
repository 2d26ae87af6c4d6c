"""Categorical-likelihood (classification) posteriors: Laplace / GLM approximations.

* :class:`LastLayerGLM`: Laplace over the output-major vector ``v = vec(W̃)`` of the last
  layer with prior ``N(0, α⁻¹ K)``. With ``refit=True`` the mean is the MAP of the softmax
  regression on the fixed features (a Bayesian last layer: standard BLL with ``K = I``, the
  NTK-projected BLL with ``K = I + M``); with ``refit=False`` the mean is the trained head
  (last-layer Laplace). The precision is ``α K⁻¹ + H`` with the GGN (= Hessian for softmax)
  ``H = Σ_n (diag p_n − p_n p_nᵀ) ⊗ φ̃_n φ̃_nᵀ``; α maximises the Laplace evidence
  ``log p(y|v̂) − α/2 ‖L⁻¹v̂‖² + D/2 log α − ½ log|αI + LᵀHL|`` (``K = LLᵀ``).
* :class:`FullGGNLaplace`: the linearised Laplace over *all* parameters (the full-network
  baseline ``lla``) in weight space, with the GGN accumulated from chunks of per-example
  Jacobians.

Predictive distributions over class probabilities from a Gaussian over logits
``N(μ(x), Σ(x))``: the probit approximation ``softmax(μ_c / sqrt(1 + π/8 Σ_cc))`` or Monte
Carlo averaging of the softmax (:func:`predictive_probs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icml26.bll_ntk.gaussian import maximise_evidence

__all__ = ["FullGGNLaplace", "LastLayerGLM", "last_layer_ggn", "predictive_probs"]


def _check_labels(y: torch.Tensor, n: int, n_classes: int) -> torch.Tensor:
    y = y.reshape(-1).long()
    if y.shape[0] != n:
        raise ValueError(f"{n} feature rows but {y.shape[0]} labels")
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(
            f"labels must lie in [0, {n_classes}), got [{int(y.min())}, {int(y.max())}]"
        )
    return y


def last_layer_ggn(phi: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    """``Σ_n (diag p_n − p_n p_nᵀ) ⊗ φ̃_n φ̃_nᵀ`` as a (C·d × C·d) matrix (output-major)."""
    N, d = phi.shape
    C = probs.shape[1]
    diag = torch.einsum("nc,nk,nl->ckl", probs, phi, phi)
    H = torch.block_diag(*diag)
    X = (probs[:, :, None] * phi[:, None, :]).reshape(N, C * d)
    return H - X.T @ X


def predictive_probs(
    mean: torch.Tensor,
    cov: torch.Tensor,
    *,
    method: str = "probit",
    n_samples: int = 200,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Class probabilities ``(N, C)`` from logits ``N(mean (N, C), cov (N, C, C))``."""
    if method == "probit":
        var = torch.diagonal(cov, dim1=1, dim2=2).clamp_min(0.0)
        return torch.softmax(mean / torch.sqrt(1.0 + math.pi / 8.0 * var), dim=1)
    if method == "mc":
        C = mean.shape[1]
        jitter = 1e-9 * torch.eye(C, dtype=cov.dtype, device=cov.device)
        L = torch.linalg.cholesky(cov + jitter)
        # drawn on the generator's device (CPU by default), then moved: same draws everywhere
        eps = torch.randn(
            n_samples,
            *mean.shape,
            generator=generator,
            dtype=mean.dtype,
            device=generator.device if generator is not None else "cpu",
        ).to(mean.device)
        logits = mean[None] + torch.einsum("ncd,snd->snc", L, eps)
        return torch.softmax(logits, dim=2).mean(0)
    raise ValueError(f"predictive must be 'probit' or 'mc', got {method!r}")


@dataclass
class LastLayerGLM:
    """Laplace posterior over the last layer of a classifier (see the module docstring).

    Args:
        n_classes: C.
        K: ``(C·d, C·d)`` prior factor; ``None`` = identity.
        alpha: prior precision; ``None`` = maximise the Laplace evidence over ``alpha_grid``.
        refit: re-estimate the mean as the MAP under this prior (BLL) or keep ``v0`` (LL-Laplace).
        alpha_grid: candidate α values for ``refit=True`` (each needs a MAP fit).
    """

    n_classes: int
    K: torch.Tensor | None = None
    alpha: float | None = None
    refit: bool = True
    alpha_grid: tuple[float, ...] = tuple(10.0**k for k in np.arange(-3.0, 3.01, 0.5))
    newton_steps: int = 30

    def fit(
        self,
        phi: torch.Tensor,
        y: torch.Tensor,
        v0: torch.Tensor,
        weights: torch.Tensor | None = None,
    ) -> LastLayerGLM:
        """Fit on features ``φ̃ (N, d)``, labels ``y (N,)`` with the trained head ``v0 (C·d,)``.

        ``weights`` (N,) scale each point's log-likelihood (``N/m`` for a uniform subsample).
        """
        phi = phi.double()
        N, d = phi.shape
        C = self.n_classes
        dev = phi.device
        y = _check_labels(y.to(dev), N, C)
        w = (
            torch.ones(N, dtype=torch.float64, device=dev)
            if weights is None
            else weights.to(device=dev, dtype=torch.float64).reshape(-1)
        )
        if w.shape[0] != N or bool((w < 0).any()):
            raise ValueError("weights must be one non-negative number per data point")
        D = C * d
        if v0.shape != (D,):
            raise ValueError(f"head vector has shape {tuple(v0.shape)}, expected ({D},)")
        v0 = v0.to(dev)
        if self.K is None:
            L = torch.eye(D, dtype=torch.float64, device=dev)
        else:
            if self.K.shape != (D, D):
                raise ValueError(f"prior factor K is {tuple(self.K.shape)}, expected ({D}, {D})")
            try:
                L = torch.linalg.cholesky(self.K.to(device=dev, dtype=torch.float64))
            except torch.linalg.LinAlgError as exc:
                raise ValueError("prior factor K is not positive definite") from exc
        self._L, self._d = L, d
        onehot = torch.nn.functional.one_hot(y, C).double() * w[:, None]
        phi_w = phi * w.sqrt()[:, None]  # GGN rows carry the weights quadratically
        u0 = torch.linalg.solve_triangular(L, v0.double()[:, None], upper=False)[:, 0]

        def loglik(v: torch.Tensor) -> tuple[float, torch.Tensor]:
            logits = phi @ v.reshape(C, d).T
            logp = torch.log_softmax(logits, dim=1)
            return float((onehot * logp).sum()), logp.exp()

        def ggn(p: torch.Tensor) -> torch.Tensor:
            return last_layer_ggn(phi_w, p)

        def map_fit(alpha: float, u: torch.Tensor) -> torch.Tensor:
            for _ in range(self.newton_steps):
                v = L @ u
                ll, p = loglik(v)
                g_v = ((onehot - w[:, None] * p)[:, :, None] * phi[:, None, :]).reshape(N, D).sum(0)
                grad = L.T @ g_v - alpha * u
                Hu = L.T @ ggn(p) @ L + alpha * torch.eye(D, dtype=torch.float64, device=dev)
                step = torch.linalg.solve(Hu, grad)
                obj = ll - 0.5 * alpha * float(u @ u)
                t = 1.0
                while t > 1e-6:
                    un = u + t * step
                    if loglik(L @ un)[0] - 0.5 * alpha * float(un @ un) >= obj:
                        break
                    t *= 0.5
                u = u + t * step
                if float(step.abs().max()) * t < 1e-8:
                    break
            return u

        def evidence(alpha: float, u: torch.Tensor) -> tuple[float, torch.Tensor]:
            ll, p = loglik(L @ u)
            Hu = L.T @ ggn(p) @ L
            lam = torch.linalg.eigvalsh(0.5 * (Hu + Hu.T)).clamp_min(0.0)
            ev = ll - 0.5 * alpha * float(u @ u) - 0.5 * float(torch.log1p(lam / alpha).sum())
            return ev, Hu

        if self.refit:
            grid = (self.alpha,) if self.alpha is not None else self.alpha_grid
            best: tuple[float, float, torch.Tensor] | None = None
            u = u0.clone()
            for a in grid:
                u = map_fit(float(a), u)
                ev, _ = evidence(float(a), u)
                if best is None or ev > best[0]:
                    best = (ev, float(a), u.clone())
            assert best is not None
            _, self.alpha, u = best
        else:
            u = u0
            if self.alpha is None:
                ll, p = loglik(L @ u)
                Hu = L.T @ ggn(p) @ L
                # the 1-D evidence search runs on the host over the D eigenvalues
                lam = torch.linalg.eigvalsh(0.5 * (Hu + Hu.T)).clamp_min(0.0).cpu().numpy()
                uu = float(u @ u)

                self.alpha, _ = maximise_evidence(
                    lambda la, _ls: (
                        ll
                        - 0.5 * np.exp(la) * uu
                        - 0.5 * np.log1p(lam / np.exp(la)[:, None]).sum(1)
                    ),
                    noise=1.0,
                )
        _, Hu = evidence(self.alpha, u)
        prec = Hu + self.alpha * torch.eye(D, dtype=torch.float64, device=dev)
        self.mean = L @ u
        self.cov = L @ torch.cholesky_inverse(torch.linalg.cholesky(prec)) @ L.T
        self.cov = 0.5 * (self.cov + self.cov.T)
        return self

    def predict_logits(self, phi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logit mean ``(N, C)`` and covariance ``(N, C, C)`` at features ``φ̃``."""
        phi = phi.double()
        C, d = self.n_classes, self._d
        mean = phi @ self.mean.reshape(C, d).T
        S = self.cov.reshape(C, d, C, d)
        cov = torch.einsum("nk,ckel,nl->nce", phi, S, phi)
        return mean, cov


@dataclass
class FullGGNLaplace:
    """Linearised Laplace over all parameters of a classifier, in weight space.

    Args:
        alpha: prior precision; ``None`` = maximise the Laplace evidence (one eigvalsh).
    """

    alpha: float | None = None

    def fit(
        self,
        jac_chunks: list[torch.Tensor],
        probs: torch.Tensor,
        loglik: float,
        sq_norm: float,
    ) -> FullGGNLaplace:
        """Fit from per-example Jacobian chunks ``(b, C, P)``, train probabilities ``(N, C)``,
        the training log-likelihood at θ* and ``‖θ*‖²``."""
        G: torch.Tensor | None = None
        start = 0
        for J in jac_chunks:
            J = J.double()
            p = probs[start : start + J.shape[0]].double()
            start += J.shape[0]
            Jp = (p.sqrt()[:, :, None] * J).reshape(-1, J.shape[2])
            g = torch.einsum("nc,ncp->np", p, J)
            contrib = Jp.T @ Jp - g.T @ g
            G = contrib if G is None else G + contrib
        if G is None or start != probs.shape[0]:
            raise ValueError("Jacobian chunks do not cover the training probabilities")
        G = 0.5 * (G + G.T)
        if self.alpha is None:
            lam = torch.linalg.eigvalsh(G).clamp_min(0.0).cpu().numpy()  # host evidence search

            self.alpha, _ = maximise_evidence(
                lambda la, _ls: (
                    loglik
                    - 0.5 * np.exp(la) * sq_norm
                    - 0.5 * np.log1p(lam / np.exp(la)[:, None]).sum(1)
                ),
                noise=1.0,
            )
        P = G.shape[0]
        eye = torch.eye(P, dtype=torch.float64, device=G.device)
        self._chol = torch.linalg.cholesky(G + self.alpha * eye)
        return self

    def logit_cov(self, J: torch.Tensor) -> torch.Tensor:
        """``J_x Λ⁻¹ J_xᵀ`` for Jacobians ``(m, C, P)`` → ``(m, C, C)``."""
        m, C, P = J.shape
        Z = torch.linalg.solve_triangular(
            self._chol, J.double().reshape(m * C, P).T, upper=False
        )  # (P, m·C)
        Z = Z.T.reshape(m, C, P)
        return Z @ Z.transpose(1, 2)
