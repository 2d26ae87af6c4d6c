"""The paper's posteriors for a trained network: the standard BLL and the NTK-projected BLL.

Every class wraps a trained ``nn.Module`` with a named final ``nn.Linear`` and follows one
shape, as scikit-learn estimators and laplace-torch's ``Laplace`` do::

    post = NTKBLL(model, last_layer="head", likelihood="regression")
    post.fit(x_train, y_train, val=(x_val, y_val))   # or fit(train_loader, val=val_loader)
    pred = post.predict(x_test)                      # RegressionPredictive(mean, var, noise)

* :class:`BLL`: standard Bayesian last layer (conjugate regression / Laplace-GLM softmax).
* :class:`NTKBLL`: BLL whose prior covariance carries the projected NTK features of the
  earlier layers, ``α⁻¹(I + M)`` (:func:`icml26.bll_ntk.jacobians.ntk_projection`); optional
  uniform subsampling for the projection (``subsample``) and the posterior
  (``posterior_subsample``). With the same (α, σ²) its posterior variance is never below
  BLL's, because ``I + M ⪰ I``.

(The Laplace baselines are in :mod:`icml26.bll_ntk.laplace`, the shared pieces in
:mod:`icml26.bll_ntk.posterior`.)

Hyperparameters: the prior precision α (and, for regression, the noise σ²) are fixed when
given, else chosen by the **validation NLL on a grid** when ``fit(..., val=...)`` gets
validation data (laplace-torch's ``optimize_prior_precision(method="gridsearch")``), else by
type-II maximum likelihood (the evidence).

Data: ``fit`` and ``predict`` take tensors or a ``DataLoader`` (:mod:`icml26.bll_ntk.batches`);
the network runs on mini-batches of ``batch_size``. Regression targets are ``(N,)`` or
``(N, C)`` floats, with an optional boolean ``mask (N, C)`` of observed entries (a bandit sees
one arm per context); classification targets are integer labels ``(N,)`` in ``[0, C)``.
Floating inputs are cast to the network's dtype (float64 data for a float32 network works).

Large heads: ``structure="kron"`` (classification) keeps a Kronecker-factored posterior
(:class:`icml26.bll_ntk.glm.KronLastLayerGLM`), ``C² + d²`` memory instead of ``(C d)²``;
NTKBLL then uses a shared ``d × d`` projection block estimated from ``output_subsample``
outputs.

Devices: everything runs on the device of the network (CUDA in, CUDA out). The posterior
algebra is float64 torch on that device. Random subsamples and samples are drawn from CPU
generators and moved, so a seed gives the same draws on every device.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
from torch import nn

from icml26.bll_ntk.batches import Data
from icml26.bll_ntk.gaussian import BayesLinReg
from icml26.bll_ntk.glm import KronLastLayerGLM, LastLayerGLM
from icml26.bll_ntk.jacobians import NTKProjection, ntk_projection
from icml26.bll_ntk.posterior import (
    ClassificationPredictive,
    Collected,
    Likelihood,
    Posterior,
    RegressionPredictive,
    head_rows,
    require_fitted,
)

__all__ = ["BLL", "NTKBLL"]


class BLL(Posterior):
    """Standard Bayesian last layer: prior ``N(0, α⁻¹ I)`` on ``vec([W, b])``.

    Regression is exact conjugate inference on the last-layer features. Classification is
    the Laplace/GLM approximation, taken at the trained head (``refit=False``, the default
    and laplace-torch's last-layer Laplace) or at the MAP under the prior (``refit=True``).

    Args:
        model: the trained network.
        last_layer: the dotted name of its final ``nn.Linear``.
        likelihood: ``"regression"`` or ``"classification"``.
        alpha: fixed prior precision (else chosen on validation data or by the evidence).
        noise: fixed regression noise variance (likewise).
        predictive: ``"probit"`` or ``"mc"`` class probabilities.
        refit: re-estimate the head as the MAP (classification).
        structure: ``"full"`` (dense ``(C d)²`` covariance) or ``"kron"`` (Kronecker-factored,
            classification with ``refit=False``: for large heads).
        batch_size: examples per forward pass.

    Raises:
        ValueError: an unknown likelihood, predictive or structure; a non-positive α or σ²;
            ``structure="kron"`` with regression or ``refit=True``.
        LastLayerError: no such last layer, or it is not an ``nn.Linear``.
    """

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
        structure: Literal["full", "kron"] = "full",
        batch_size: int = 1024,
    ) -> None:
        super().__init__(
            model,
            last_layer,
            likelihood,
            alpha=alpha,
            noise=noise,
            predictive=predictive,
            batch_size=batch_size,
        )
        if structure not in ("full", "kron"):
            raise ValueError(f"structure must be 'full' or 'kron', got {structure!r}")
        if structure == "kron" and (likelihood != "classification" or refit):
            raise ValueError(
                "structure='kron' is for classification heads at the trained weights "
                "(likelihood='classification', refit=False)"
            )
        self.refit, self.structure = refit, structure

    # -- hooks for NTKBLL ------------------------------------------------------------------
    def _prior_factor(self, data: Data, c: Collected) -> torch.Tensor | None:
        return None

    def _posterior_weights(self, n: int) -> tuple[torch.Tensor | None, float | None]:
        """(indices, weight) of the points used for posterior inference (all by default)."""
        return None, None

    # -- fit -------------------------------------------------------------------------------
    def fit(
        self,
        data: Data,
        y: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        val: Any = None,
    ) -> BLL:
        """Condition the last layer on training data.

        Args:
            data: inputs ``(N, ...)`` (with ``y``) or a loader of ``(x, y)`` / ``(x, y, mask)``
                batches.
            y: targets for tensor inputs: floats ``(N,)`` / ``(N, C)`` (regression) or
                integer labels ``(N,)`` (classification).
            mask: ``(N, C)`` observed entries (regression only).
            val: validation data, ``(x_val, y_val)`` or a loader: α (and σ²) are then chosen
                by the validation NLL on a grid instead of the evidence.

        Returns:
            ``self``, fitted (``alpha_``, ``noise_``, ``posterior_``).

        Raises:
            TypeError: inputs that are not tensors, or float class labels.
            ValueError: shapes that do not fit the network (the message names the expected
                shape), labels out of range, NaN/inf, or an empty loader.
        """
        c = self.collect(data, y, mask, "fit")
        K = self._prior_factor(data, c)
        idx, w = self._posterior_weights(c.n)
        vc = None
        if val is not None:
            xv, yv = (val, None) if not isinstance(val, tuple | list) else (val[0], val[1])
            vc = self.collect(xv, yv, None, "fit(val=...)")
        if self.likelihood == "regression":
            self._fit_regression(c, K, idx, w, vc)
        elif self.structure == "kron":
            self._fit_kron(c, K, vc)
        else:
            self._fit_classification(c, K, idx, w, vc)
        self._fitted = True
        return self

    def _fit_regression(
        self,
        c: Collected,
        K: torch.Tensor | None,
        idx: torch.Tensor | None,
        w: float | None,
        vc: Collected | None,
    ) -> None:
        assert c.y is not None
        N, d = c.phi.shape
        C, dev = self.n_outputs, c.phi.device
        observed = c.mask if c.mask is not None else torch.ones(N, C, dtype=torch.bool, device=dev)
        if idx is not None:
            keep = torch.zeros(N, dtype=torch.bool, device=dev)
            keep[idx.to(dev)] = True
            observed = observed & keep[:, None]
        scale = 1.0 if w is None else float(w)
        G = torch.zeros(C * d, C * d, dtype=torch.float64, device=dev)
        b = torch.zeros(C * d, dtype=torch.float64, device=dev)
        for k in range(C):
            rows = observed[:, k]
            P, t = c.phi[rows], c.y[rows, k]
            G[k * d : (k + 1) * d, k * d : (k + 1) * d] = scale * P.T @ P
            b[k * d : (k + 1) * d] = scale * P.T @ t
        yobs = c.y[observed]
        post = BayesLinReg(K=K, alpha=self.alpha, noise=self.noise)
        post.fit_gram(G, b, scale * float(yobs @ yobs), scale * float(observed.sum()))
        if vc is not None:
            assert vc.y is not None
            post.select_on_validation(head_rows(vc.phi, C), vc.y.reshape(-1))
        self.posterior_ = post
        self.alpha_, self.noise_ = post.alpha, post.noise

    def _fit_classification(
        self,
        c: Collected,
        K: torch.Tensor | None,
        idx: torch.Tensor | None,
        w: float | None,
        vc: Collected | None,
    ) -> None:
        assert c.y is not None
        if idx is not None:
            idx = idx.to(c.phi.device)
        phi, y = (c.phi, c.y) if idx is None else (c.phi[idx], c.y[idx])
        ws = None if w is None else torch.full((phi.shape[0],), float(w), dtype=torch.float64)
        post = LastLayerGLM(self.n_outputs, K=K, alpha=self.alpha, refit=self.refit)
        post.fit(phi, y, self.net.head_vector(), ws)
        if vc is not None:
            assert vc.y is not None
            post.select_on_validation(vc.phi, vc.y)
        self.posterior_ = post
        self.alpha_, self.noise_ = post.alpha, None

    def _fit_kron(self, c: Collected, K: torch.Tensor | None, vc: Collected | None) -> None:
        assert c.y is not None
        p = torch.softmax(c.out, dim=1)
        gamma_sum = torch.diag(p.sum(0)) - p.T @ p
        loglik = float(
            torch.log_softmax(c.out, 1)[torch.arange(c.n, device=c.out.device), c.y].sum()
        )
        post = KronLastLayerGLM(self.n_outputs, K=K, alpha=self.alpha)
        post.fit_stats(gamma_sum, c.phi.T @ c.phi, c.n, loglik, self.net.head_vector())
        if vc is not None:
            assert vc.y is not None
            post.select_on_validation(vc.phi, vc.y)
        self.posterior_ = post
        self.alpha_, self.noise_ = post.alpha, None

    # -- predict ---------------------------------------------------------------------------
    def _predict_batch(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        phi, _ = self.net.features(x)
        phi = phi.double()
        N, C = phi.shape[0], self.n_outputs
        if self.likelihood == "regression":
            mean, var = self.posterior_.predict(head_rows(phi, C))
            return RegressionPredictive(mean.reshape(N, C), var.reshape(N, C), float(self.noise_))
        if self.structure == "kron" and self.predictive == "probit":
            mean, var = self.posterior_.predict_logit_var(phi)
            probs = torch.softmax(mean / torch.sqrt(1.0 + math.pi / 8.0 * var), dim=1)
            return ClassificationPredictive(probs, var.sum(1))
        mean, cov = self.posterior_.predict_logits(phi)
        return self._probs(mean, cov)

    def sample_functions(
        self, x: torch.Tensor, n_samples: int = 1, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Posterior function samples ``(S, N, C)`` (weights drawn jointly).

        The standard normals come from ``generator`` on its own device (the CPU by default)
        and are moved to the posterior's device, so one seed gives the same samples everywhere.

        Args:
            x: inputs ``(N, ...)``.
            n_samples: S.
            generator: the random stream.

        Returns:
            ``(S, N, C)`` outputs (logits for classification).

        Raises:
            RuntimeError: called before ``fit``.
            ValueError: a Kronecker-factored posterior (not implemented for it).
        """
        require_fitted(self)
        if self.structure == "kron":
            raise ValueError("sample_functions needs structure='full'")
        phi, _ = self.net.features(x)
        phi = phi.double()
        C = self.n_outputs
        if self.likelihood == "regression":
            mean, B = self.posterior_.mean, self.posterior_.cov_factor()
        else:
            mean = self.posterior_.mean
            eye = torch.eye(mean.shape[0], dtype=torch.float64, device=mean.device)
            B = torch.linalg.cholesky(self.posterior_.cov + 1e-10 * eye)
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

    The prior on the last layer is ``N(0, α⁻¹(I + M))``, ``M`` the projection of the earlier
    layers' Jacobians onto the span of the last-layer features
    (:func:`icml26.bll_ntk.jacobians.ntk_projection`); inference is BLL's.

    Args:
        model: the trained network.
        last_layer: the dotted name of its final ``nn.Linear``.
        likelihood: ``"regression"`` or ``"classification"``.
        ridge: ``λ`` of the least-squares projection of body Jacobians onto the features.
        subsample: points drawn uniformly to estimate the projection (``None`` = all).
        posterior_subsample: points drawn uniformly for posterior inference, each weighted
            ``N/m`` (``None`` = all).
        hyperparameters: ``"own"`` (default) chooses this model's own (α, σ²) (on validation
            data when given, else by its evidence); ``"bll"`` reuses the standard BLL's, the
            setting of the variance guarantee (every predictive variance >= BLL's).
        alpha: fixed prior precision (else chosen as ``hyperparameters`` says).
        noise: fixed regression noise variance (likewise).
        predictive: as for :class:`BLL`.
        refit: as for :class:`BLL`.
        structure: as for :class:`BLL`.
        batch_size: as for :class:`BLL`.
        output_subsample: with ``structure="kron"``, the number of outputs whose Jacobians
            estimate the shared projection block (``None`` = all).
        seed: seed of the subsamples.
        chunk: examples per Jacobian call (memory ``chunk × C × P``).

    Raises:
        ValueError: a negative ridge, a subsample below 1, an unknown ``hyperparameters``,
            or any of :class:`BLL`'s.
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
        hyperparameters: Literal["own", "bll"] = "own",
        alpha: float | None = None,
        noise: float | None = None,
        predictive: str = "probit",
        refit: bool = False,
        structure: Literal["full", "kron"] = "full",
        batch_size: int = 1024,
        output_subsample: int | None = None,
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
            structure=structure,
            batch_size=batch_size,
        )
        if ridge < 0:
            raise ValueError(f"ridge must be >= 0, got {ridge}")
        for name, val in (
            ("subsample", subsample),
            ("posterior_subsample", posterior_subsample),
            ("output_subsample", output_subsample),
        ):
            if val is not None and val < 1:
                raise ValueError(f"{name} must be a positive number, got {val}")
        if hyperparameters not in ("own", "bll"):
            raise ValueError(f"hyperparameters must be 'own' or 'bll', got {hyperparameters!r}")
        self.ridge, self.subsample, self.posterior_subsample = ridge, subsample, posterior_subsample
        self.hyperparameters, self.output_subsample = hyperparameters, output_subsample
        self.seed, self.chunk = seed, chunk
        self._reuse = False

    def _prior_factor(self, data: Data, c: Collected) -> torch.Tensor:
        if not (self._reuse and hasattr(self, "projection_")):
            gen = torch.Generator().manual_seed(self.seed)
            outputs = None
            C = self.n_outputs
            if self.structure == "kron" and self.output_subsample and self.output_subsample < C:
                outputs = torch.sort(torch.randperm(C, generator=gen)[: self.output_subsample])[0]
            self.projection_: NTKProjection = ntk_projection(
                self.net,
                data,
                ridge=self.ridge,
                subsample=self.subsample,
                n_total=c.n,
                generator=gen,
                chunk=self.chunk,
                outputs=outputs,
            )
        if self.structure == "kron":
            d = c.phi.shape[1]
            block = self.projection_.shared_block(d)
            return torch.eye(d, dtype=block.dtype, device=block.device) + block
        return self.projection_.prior_factor()

    def _posterior_weights(self, n: int) -> tuple[torch.Tensor | None, float | None]:
        m = self.posterior_subsample
        if m is None or m >= n:
            return None, None
        gen = torch.Generator().manual_seed(self.seed + 1)
        return torch.randperm(n, generator=gen)[:m], n / m

    def fit(
        self,
        data: Data,
        y: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        val: Any = None,
        reuse_projection: bool = False,
    ) -> NTKBLL:
        """Fit as :meth:`BLL.fit`.

        Args:
            data: inputs or a loader (as :meth:`BLL.fit`; a loader is read twice: features,
                then Jacobians).
            y: targets for tensor inputs.
            mask: observed entries (regression).
            val: validation data for the grid search of (α, σ²).
            reuse_projection: keep the projection of an earlier fit (same network, more data).

        Returns:
            ``self``, fitted (also ``projection_``).

        Raises:
            TypeError: inputs that are not tensors, or float class labels.
            ValueError: as :meth:`BLL.fit`.
        """
        self._reuse = reuse_projection
        self.alpha, self.noise = self._given
        try:
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
                    structure=self.structure,
                    batch_size=self.batch_size,
                ).fit(data, y, mask=mask, val=val)
                self.alpha, self.noise = ref.alpha_, ref.noise_
                val = None  # chosen: the grid search is BLL's
            super().fit(data, y, mask=mask, val=val)
        finally:
            self.alpha, self.noise = self._given
        return self
