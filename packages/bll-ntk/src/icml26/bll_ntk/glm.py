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

__all__ = [
    "FullGGNLaplace",
    "KronLastLayerGLM",
    "LastLayerGLM",
    "check_labels",
    "last_layer_ggn",
    "predictive_probs",
]


def check_labels(y: torch.Tensor, n: int, n_classes: int) -> torch.Tensor:
    """Integer class labels ``(n,)`` in ``[0, n_classes)``, as ``torch.long``.

    Args:
        y: the labels.
        n: the number of examples they label.
        n_classes: C.

    Returns:
        ``y`` as a ``(n,)`` long tensor.

    Raises:
        TypeError: ``y`` is not a tensor of integers (float labels such as 0.72 or 1.0 are
            refused: convert class indices with ``y.long()``).
        ValueError: a shape other than ``(n,)``, or a label outside ``[0, n_classes)``.
    """
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"class labels must be a torch.Tensor, got {type(y).__name__}")
    if y.is_floating_point() or y.is_complex() or y.dtype == torch.bool:
        raise TypeError(
            f"class labels must be integer class indices (torch.long), got {y.dtype}; "
            "convert indices with y.long() (fractional labels have no class)"
        )
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"class labels must have shape ({n},), got {tuple(y.shape)}")
    y = y.long()
    if int(y.min()) < 0 or int(y.max()) >= n_classes:
        raise ValueError(
            f"class labels must lie in [0, {n_classes}) for a {n_classes}-output last layer, "
            f"got labels in [{int(y.min())}, {int(y.max())}]"
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


#: Default prior-precision grid of the validation search (laplace-torch's log-spaced grid,
#: widened to 10^8: on well-calibrated classifiers the validation NLL keeps falling up to
#: 10^4, the old top edge).
ALPHA_GRID = tuple(float(a) for a in np.logspace(-4, 8, 49))


def _nll_probit(mean: np.ndarray, var: np.ndarray, labels: np.ndarray) -> float:
    """Mean NLL of ``labels`` under the probit predictive ``softmax(μ / sqrt(1 + π/8 σ²))``."""
    z = mean / np.sqrt(1.0 + math.pi / 8.0 * np.maximum(var, 0.0))
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-np.mean(logp[np.arange(len(labels)), labels]))


def _whitening(K: torch.Tensor | None, D: int, dev: torch.device) -> torch.Tensor:
    """``L`` with ``K = L Lᵀ`` (identity for ``K=None``)."""
    if K is None:
        return torch.eye(D, dtype=torch.float64, device=dev)
    if K.shape != (D, D):
        raise ValueError(f"prior factor K is {tuple(K.shape)}, expected ({D}, {D})")
    try:
        return torch.linalg.cholesky(K.to(device=dev, dtype=torch.float64))
    except torch.linalg.LinAlgError as exc:
        raise ValueError("prior factor K is not positive definite") from exc


@dataclass
class LastLayerGLM:
    """Laplace posterior over the last layer of a classifier (see the module docstring).

    Args:
        n_classes: C.
        K: ``(C·d, C·d)`` prior factor; ``None`` = identity.
        alpha: prior precision; ``None`` = maximise the Laplace evidence (or, after
            :meth:`select_on_validation`, the grid point with the lowest validation NLL).
        refit: re-estimate the mean as the MAP under this prior (BLL) or keep ``v0`` (LL-Laplace).
        alpha_grid: candidate α values for ``refit=True`` (each needs a MAP fit).
        newton_steps: Newton iterations of each MAP fit.
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

        Args:
            phi: features.
            y: integer labels.
            v0: the trained head, output-major.
            weights: ``(N,)`` scales of each point's log-likelihood (``N/m`` for a uniform
                subsample).

        Returns:
            ``self``, fitted.

        Raises:
            TypeError: labels that are not integers.
            ValueError: labels out of range, mismatched shapes, bad weights or ``K``.
        """
        phi = phi.double()
        N, d = phi.shape
        C = self.n_classes
        dev = phi.device
        y = check_labels(y, N, C).to(dev)
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
        L = _whitening(self.K, D, dev)
        self._L, self._d, self._given_alpha = L, d, self.alpha
        self._phi, self._w = phi, w
        self._onehot = torch.nn.functional.one_hot(y, C).double() * w[:, None]
        self._u0 = torch.linalg.solve_triangular(L, v0.to(dev).double()[:, None], upper=False)[:, 0]
        if self.refit:
            grid = (self.alpha,) if self.alpha is not None else self.alpha_grid
            best: tuple[float, float, torch.Tensor] | None = None
            u = self._u0.clone()
            for a in grid:
                u = self._map_fit(float(a), u)
                ev = self._evidence(float(a), u)
                if best is None or ev > best[0]:
                    best = (ev, float(a), u.clone())
            assert best is not None
            _, alpha, u = best
        else:
            u = self._u0
            alpha = self.alpha
            if alpha is None:
                ll, p = self._loglik(L @ u)
                Hu = L.T @ last_layer_ggn(phi * w.sqrt()[:, None], p) @ L
                # the 1-D evidence search runs on the host over the D eigenvalues
                lam = torch.linalg.eigvalsh(0.5 * (Hu + Hu.T)).clamp_min(0.0).cpu().numpy()
                uu = float(u @ u)
                alpha, _ = maximise_evidence(
                    lambda la, _ls: (
                        ll
                        - 0.5 * np.exp(la) * uu
                        - 0.5 * np.log1p(lam / np.exp(la)[:, None]).sum(1)
                    ),
                    noise=1.0,
                )
        self._set(float(alpha), u)
        return self

    # -- pieces -------------------------------------------------------------------------
    def _loglik(self, v: torch.Tensor) -> tuple[float, torch.Tensor]:
        logits = self._phi @ v.reshape(self.n_classes, self._d).T
        logp = torch.log_softmax(logits, dim=1)
        return float((self._onehot * logp).sum()), logp.exp()

    def _hessian_u(self, p: torch.Tensor) -> torch.Tensor:
        H = last_layer_ggn(self._phi * self._w.sqrt()[:, None], p)  # GGN rows carry the weights
        return self._L.T @ H @ self._L

    def _map_fit(self, alpha: float, u: torch.Tensor) -> torch.Tensor:
        L, phi, w, C, d = self._L, self._phi, self._w, self.n_classes, self._d
        N, D = phi.shape[0], C * d
        eye = torch.eye(D, dtype=torch.float64, device=phi.device)
        for _ in range(self.newton_steps):
            ll, p = self._loglik(L @ u)
            g_v = ((self._onehot - w[:, None] * p)[:, :, None] * phi[:, None, :]).reshape(N, D)
            grad = L.T @ g_v.sum(0) - alpha * u
            step = torch.linalg.solve(self._hessian_u(p) + alpha * eye, grad)
            obj = ll - 0.5 * alpha * float(u @ u)
            t = 1.0
            while t > 1e-6:
                un = u + t * step
                if self._loglik(L @ un)[0] - 0.5 * alpha * float(un @ un) >= obj:
                    break
                t *= 0.5
            u = u + t * step
            if float(step.abs().max()) * t < 1e-8:
                break
        return u

    def _evidence(self, alpha: float, u: torch.Tensor) -> float:
        ll, p = self._loglik(self._L @ u)
        Hu = self._hessian_u(p)
        lam = torch.linalg.eigvalsh(0.5 * (Hu + Hu.T)).clamp_min(0.0)
        return ll - 0.5 * alpha * float(u @ u) - 0.5 * float(torch.log1p(lam / alpha).sum())

    def _set(self, alpha: float, u: torch.Tensor) -> None:
        """Store the posterior at ``alpha`` around ``u``: eigenvectors of the whitened GGN
        make the covariance for any α a diagonal rescaling."""
        _, p = self._loglik(self._L @ u)
        Hu = self._hessian_u(p)
        lam, Q = torch.linalg.eigh(0.5 * (Hu + Hu.T))
        self._lam, self._B, self._u = lam.clamp_min(0.0), self._L @ Q, u
        self.alpha = alpha
        self.mean = self._L @ u
        B = self._B / torch.sqrt(alpha + self._lam)
        self.cov = B @ B.T

    def select_on_validation(
        self, phi_val: torch.Tensor, y_val: torch.Tensor, alpha_grid: tuple[float, ...] = ALPHA_GRID
    ) -> float:
        """Set α to the grid point with the lowest probit NLL on validation data.

        The laplace-torch recipe (``optimize_prior_precision(method="gridsearch")``). With
        ``refit=False`` the mean is fixed, so the whole grid costs one eigendecomposition;
        with ``refit=True`` each α has its own MAP fit. An α given to the constructor stays.

        Args:
            phi_val: validation features ``(M, d)``.
            y_val: validation labels ``(M,)``.
            alpha_grid: candidate prior precisions.

        Returns:
            The chosen α.
        """
        if self._given_alpha is not None:
            return float(self._given_alpha)
        phi_val = phi_val.double().to(self._phi.device)
        labels = check_labels(y_val, phi_val.shape[0], self.n_classes).cpu().numpy()
        grid = np.asarray(alpha_grid, dtype=float)
        C, d = self.n_classes, self._d
        if self.refit:
            scores = []
            u = self._u.clone()
            for a in grid:
                u = self._map_fit(float(a), u)
                self._set(float(a), u)
                mean, cov = self.predict_logits(phi_val)
                var = torch.diagonal(cov, dim1=1, dim2=2)
                scores.append((_nll_probit(mean.cpu().numpy(), var.cpu().numpy(), labels), u))
            k = int(np.argmin([s for s, _ in scores]))
            self._set(float(grid[k]), scores[k][1])
            return float(grid[k])
        mean = (phi_val @ self.mean.reshape(C, d).T).cpu().numpy()
        B = self._B.reshape(C, d, -1)
        R2 = (torch.einsum("nk,ckj->ncj", phi_val, B) ** 2).cpu().numpy()  # (M, C, D)
        lam = self._lam.cpu().numpy()
        nlls = [_nll_probit(mean, R2 @ (1.0 / (a + lam)), labels) for a in grid]
        k = int(np.argmin(nlls))
        self._set(float(grid[k]), self._u)
        return float(grid[k])

    def predict_logits(self, phi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logit mean ``(N, C)`` and covariance ``(N, C, C)`` at features ``φ̃``.

        Args:
            phi: ``(N, d)`` features.

        Returns:
            ``(mean, cov)``.
        """
        phi = phi.double()
        C, d = self.n_classes, self._d
        mean = phi @ self.mean.reshape(C, d).T
        S = self.cov.reshape(C, d, C, d)
        cov = torch.einsum("nk,ckel,nl->nce", phi, S, phi)
        return mean, cov


@dataclass
class KronLastLayerGLM:
    """Kronecker-factored (KFAC) Laplace over a large classification head, at the trained head.

    The last-layer GGN ``Σ_n Γ_n ⊗ φ̃_n φ̃_nᵀ`` (``Γ_n = diag p_n − p_n p_nᵀ``) is approximated
    by ``Ā ⊗ B`` with ``Ā = (1/N) Σ_n Γ_n`` (C × C) and ``B = Σ_n φ̃_n φ̃_nᵀ`` (d × d), exact
    when every ``Γ_n`` is the same (Ritter et al. 2018). The prior is ``N(0, α⁻¹ (I_C ⊗ K̄))``
    with a shared ``d × d`` factor ``K̄`` (``I + M̄`` for the NTK-projected BLL, ``M̄`` the mean of
    the per-output blocks ``A_c A_cᵀ``). In whitened coordinates the posterior precision is
    ``Ā ⊗ (L̄ᵀ B L̄) + α I`` and both factors' eigendecompositions give every predictive in
    ``O(C d + C²)`` per input: memory ``C² + d²`` instead of ``(C d)²``.

    Args:
        n_classes: C.
        K: ``(d, d)`` shared prior factor ``K̄``; ``None`` = identity.
        alpha: prior precision; ``None`` = Laplace evidence (or :meth:`select_on_validation`).
    """

    n_classes: int
    K: torch.Tensor | None = None
    alpha: float | None = None

    def fit_stats(
        self,
        gamma_sum: torch.Tensor,
        phi_gram: torch.Tensor,
        n: float,
        loglik: float,
        v0: torch.Tensor,
    ) -> KronLastLayerGLM:
        """Fit from statistics accumulated over mini-batches.

        Args:
            gamma_sum: ``Σ_n (diag p_n − p_n p_nᵀ)`` (C × C) at the trained head.
            phi_gram: ``Σ_n φ̃_n φ̃_nᵀ`` (d × d).
            n: number of training points.
            loglik: training log-likelihood at the trained head (for the evidence).
            v0: the trained head ``vec(W̃)`` (C·d,), output-major.

        Returns:
            ``self``, fitted.

        Raises:
            ValueError: shapes that do not fit ``n_classes``, or a bad ``K``.
        """
        C = self.n_classes
        d = phi_gram.shape[0]
        if gamma_sum.shape != (C, C) or phi_gram.shape != (d, d) or v0.shape != (C * d,):
            raise ValueError(
                f"Kronecker factors {tuple(gamma_sum.shape)} and {tuple(phi_gram.shape)} with a "
                f"head of {tuple(v0.shape)} do not fit {C} classes"
            )
        dev = phi_gram.device
        Lb = _whitening(self.K, d, dev)
        self._Lb, self._d, self._given_alpha = Lb, d, self.alpha
        A = gamma_sum.double() / float(n)
        Bw = Lb.T @ phi_gram.double() @ Lb
        la, Qa = torch.linalg.eigh(0.5 * (A + A.T))
        lb, Qb = torch.linalg.eigh(0.5 * (Bw + Bw.T))
        self._la, self._Qa = la.clamp_min(0.0), Qa
        self._lb, self._Qb = lb.clamp_min(0.0), Qb
        self.W = v0.double().to(dev).reshape(C, d)
        if self.alpha is None:
            U = torch.linalg.solve_triangular(Lb, self.W.T, upper=False)  # (d, C) whitened
            uu = float((U**2).sum())
            prod = (self._la[:, None] * self._lb[None, :]).reshape(-1).cpu().numpy()
            self.alpha, _ = maximise_evidence(
                lambda la_, _ls: (
                    loglik
                    - 0.5 * np.exp(la_) * uu
                    - 0.5 * np.log1p(prod / np.exp(la_)[:, None]).sum(1)
                ),
                noise=1.0,
            )
        return self

    def _scales(self, phi: torch.Tensor, alpha: float) -> torch.Tensor:
        """``s[n, i] = Σ_j h_nj² / (λa_i λb_j + α)`` with ``h = Q_bᵀ L̄ᵀ φ̃``: (N, C)."""
        h2 = (phi.double() @ self._Lb @ self._Qb) ** 2  # (N, d)
        denom = self._la[:, None] * self._lb[None, :] + alpha  # (C, d)
        return h2 @ (1.0 / denom).T

    def predict_logit_var(self, phi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logit mean ``(N, C)`` and the diagonal of the logit covariance ``(N, C)``.

        Args:
            phi: ``(N, d)`` features.

        Returns:
            ``(mean, var)``.
        """
        assert self.alpha is not None
        s = self._scales(phi, self.alpha)
        return phi.double() @ self.W.T, s @ (self._Qa**2).T

    def predict_logits(self, phi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logit mean ``(N, C)`` and full covariance ``(N, C, C)`` (``N C²`` memory).

        Args:
            phi: ``(N, d)`` features.

        Returns:
            ``(mean, cov)``.
        """
        assert self.alpha is not None
        s = self._scales(phi, self.alpha)
        cov = torch.einsum("ci,ni,ei->nce", self._Qa, s, self._Qa)
        return phi.double() @ self.W.T, cov

    def select_on_validation(
        self, phi_val: torch.Tensor, y_val: torch.Tensor, alpha_grid: tuple[float, ...] = ALPHA_GRID
    ) -> float:
        """Set α to the grid point with the lowest probit NLL on validation data.

        Args:
            phi_val: validation features ``(M, d)``.
            y_val: validation labels ``(M,)``.
            alpha_grid: candidate prior precisions.

        Returns:
            The chosen α.
        """
        if self._given_alpha is not None:
            return float(self._given_alpha)
        labels = check_labels(y_val, phi_val.shape[0], self.n_classes).cpu().numpy()
        mean = (phi_val.double() @ self.W.T).cpu().numpy()
        qa2 = (self._Qa**2).T
        nlls = [
            _nll_probit(mean, (self._scales(phi_val, float(a)) @ qa2).cpu().numpy(), labels)
            for a in alpha_grid
        ]
        self.alpha = float(alpha_grid[int(np.argmin(nlls))])
        return self.alpha


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
        self._G = G
        self._factorise()
        return self

    def _factorise(self) -> None:
        assert self.alpha is not None
        eye = torch.eye(self._G.shape[0], dtype=torch.float64, device=self._G.device)
        self._chol = torch.linalg.cholesky(self._G + self.alpha * eye)

    def select_on_validation(
        self,
        jac_val: list[torch.Tensor],
        logits_val: torch.Tensor,
        y_val: torch.Tensor,
        alpha_grid: tuple[float, ...] = ALPHA_GRID,
    ) -> float:
        """Set α to the grid point with the lowest probit NLL on validation data (the
        recipe of :meth:`LastLayerGLM.select_on_validation`; one eigendecomposition of the
        GGN serves the whole grid).

        Args:
            jac_val: validation Jacobian chunks ``(b, C, P)``.
            logits_val: the network's validation logits ``(M, C)``.
            y_val: validation labels ``(M,)``.
            alpha_grid: candidate prior precisions.

        Returns:
            The chosen α.
        """
        C = logits_val.shape[1]
        labels = check_labels(y_val, logits_val.shape[0], C).cpu().numpy()
        lam, V = torch.linalg.eigh(self._G)
        lam_host = lam.clamp_min(0.0).cpu().numpy()
        R2 = torch.cat([(J.double() @ V) ** 2 for J in jac_val]).cpu().numpy()  # (M, C, P)
        mean = logits_val.double().cpu().numpy()
        grid = np.asarray(alpha_grid, dtype=float)
        nlls = [_nll_probit(mean, R2 @ (1.0 / (a + lam_host)), labels) for a in grid]
        self.alpha = float(grid[int(np.argmin(nlls))])
        self._factorise()
        return self.alpha

    def logit_cov(self, J: torch.Tensor) -> torch.Tensor:
        """``J_x Λ⁻¹ J_xᵀ`` for Jacobians ``(m, C, P)`` → ``(m, C, C)``."""
        m, C, P = J.shape
        Z = torch.linalg.solve_triangular(
            self._chol, J.double().reshape(m * C, P).T, upper=False
        )  # (P, m·C)
        Z = Z.T.reshape(m, C, P)
        return Z @ Z.transpose(1, 2)
