"""Laplace baselines around the trained network: the last layer alone, or every parameter.

* :class:`LastLayerLaplace` (``ll_laplace``): Laplace of the last layer at the trained head.
* :class:`LinearisedLaplace` (``lla``): the linearised Laplace over *all* parameters, the
  NTK-GP of the trained network (Immer et al. 2021), the full-network method the paper
  compares its cost with.

Both take (α, σ²) from the Laplace evidence unless given, or, with ``fit(..., val=...)``,
from the validation NLL on the grid the BLLs use (laplace-torch's
``optimize_prior_precision(method="gridsearch")``), so every Bayesian baseline of a run is
tuned by the same rule.
"""

from __future__ import annotations

from typing import Any

import torch

from icml26.bll_ntk.batches import Data, iter_batches
from icml26.bll_ntk.gaussian import LaplaceLinReg
from icml26.bll_ntk.glm import FullGGNLaplace, LastLayerGLM
from icml26.bll_ntk.jacobians import jacobian
from icml26.bll_ntk.posterior import (
    ClassificationPredictive,
    Posterior,
    RegressionPredictive,
    head_rows,
    require_fitted,
)

__all__ = ["LastLayerLaplace", "LinearisedLaplace"]


def _val_inputs(val: Any) -> Any:
    return val[0] if isinstance(val, tuple | list) else val


def _collect_val(post: Posterior, val: Any) -> Any:
    """The validation data collected like the training data (``None`` without ``val``)."""
    if val is None:
        return None
    xv, yv = (val, None) if not isinstance(val, tuple | list) else (val[0], val[1])
    return post.collect(xv, yv, None, "fit(val=...)")


class LastLayerLaplace(Posterior):
    """Laplace approximation of the last layer around the trained head (mean = the network).

    Args:
        model: as for :class:`BLL`.
        last_layer: as for :class:`BLL`.
        likelihood: as for :class:`BLL`.
        alpha: fixed prior precision (else it maximises the Laplace evidence).
        noise: fixed noise variance (likewise).
        predictive: as for :class:`BLL`.
        batch_size: as for :class:`BLL`.

    Raises:
        ValueError: as :class:`BLL`.
    """

    def fit(
        self,
        data: Data,
        y: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        val: Any = None,
    ) -> LastLayerLaplace:
        """Fit around the trained head.

        Args:
            data: inputs or a loader of ``(x, y)`` batches.
            y: targets for tensor inputs.
            mask: observed entries (regression).
            val: validation data ``(x_val, y_val)``: (α, σ²) then minimise the validation
                NLL on a grid instead of maximising the evidence.

        Returns:
            ``self``, fitted.

        Raises:
            TypeError, ValueError: bad inputs or targets (as :meth:`BLL.fit`).
        """
        c = self.collect(data, y, mask, "fit")
        vc = _collect_val(self, val)
        C = self.n_outputs
        v0 = self.net.head_vector().double()
        if self.likelihood == "regression":
            assert c.y is not None
            resid = c.y - c.out
            resid = resid[c.mask] if c.mask is not None else resid.reshape(-1)
            Z = head_rows(c.phi, C, c.mask)
            self.posterior_ = LaplaceLinReg(alpha=self.alpha, noise=self.noise).fit(
                Z, resid, float(v0 @ v0)
            )
            if vc is not None:
                assert vc.y is not None
                self.posterior_.select_on_validation(
                    head_rows(vc.phi, C), (vc.y - vc.out).reshape(-1)
                )
            self.alpha_, self.noise_ = self.posterior_.alpha, self.posterior_.noise
        else:
            assert c.y is not None
            self.posterior_ = LastLayerGLM(C, alpha=self.alpha, refit=False).fit(c.phi, c.y, v0)
            if vc is not None:
                assert vc.y is not None
                self.posterior_.select_on_validation(vc.phi, vc.y)
            self.alpha_, self.noise_ = self.posterior_.alpha, None
        self._fitted = True
        return self

    def _predict_batch(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        phi, out = self.net.features(x)
        phi, out = phi.double(), out.double()
        N, C = phi.shape[0], self.n_outputs
        if self.likelihood == "regression":
            var = self.posterior_.predict_var(head_rows(phi, C)).reshape(N, C)
            return RegressionPredictive(out, var, float(self.noise_))
        mean, cov = self.posterior_.predict_logits(phi)
        return self._probs(mean, cov)

    def output_cov(self, x: torch.Tensor) -> torch.Tensor:
        """Joint covariance of the C outputs at each input (regression).

        Args:
            x: inputs ``(N, ...)``.

        Returns:
            ``(N, C, C)``.
        """
        require_fitted(self)
        phi, _ = self.net.features(x)
        C = self.n_outputs
        return torch.stack(
            [self.posterior_.predict_cov(head_rows(p[None].double(), C)) for p in phi]
        )


class LinearisedLaplace(Posterior):
    """Linearised Laplace over *all* parameters (NTK-GP, the full-network baseline ``lla``).

    Exact on small networks; costs Jacobians of every training and test point and a
    ``P``- or ``N``-sized factorisation.

    Args:
        *args: the positional arguments of :class:`LastLayerLaplace` (``model``,
            ``last_layer``, ``likelihood``, ...).
        chunk: examples per Jacobian call.
        **kwargs: the keywords of :class:`LastLayerLaplace` (``alpha``, ``noise``,
            ``predictive``, ``batch_size``; (α, σ²) maximise the Laplace evidence unless
            given).

    Raises:
        ValueError: as :class:`BLL`.
    """

    def __init__(self, *args: Any, chunk: int = 128, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chunk = chunk

    def _sq_norm(self) -> float:
        return float(sum((p.detach().double() ** 2).sum() for p in self.net.model.parameters()))

    def _n_params(self) -> int:
        return sum(p.numel() for p in self.net.model.parameters())

    def _jacobians(self, data: Data) -> list[torch.Tensor]:
        return [
            jacobian(self.net, xb[s : s + self.chunk], chunk=self.chunk).double()
            for xb, _, _ in iter_batches(data, batch_size=self.batch_size, where="fit")
            for s in range(0, xb.shape[0], self.chunk)
        ]

    def fit(
        self,
        data: Data,
        y: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        val: Any = None,
    ) -> LinearisedLaplace:
        """Fit around the trained network.

        Args:
            data: inputs or a loader of ``(x, y)`` batches (read twice: outputs, Jacobians).
            y: targets for tensor inputs.
            mask: observed entries (regression).
            val: validation data ``(x_val, y_val)``: (α, σ²) then minimise the validation
                NLL on a grid instead of maximising the evidence.

        Returns:
            ``self``, fitted.

        Raises:
            TypeError, ValueError: bad inputs or targets (as :meth:`BLL.fit`).
        """
        c = self.collect(data, y, mask, "fit")
        vc = _collect_val(self, val)
        assert c.y is not None
        N, C = c.out.shape
        chunks = self._jacobians(data)
        v_chunks = self._jacobians(_val_inputs(val)) if vc is not None else []
        if self.likelihood == "regression":
            J = torch.cat(chunks).reshape(N * C, -1)
            sel = c.mask.reshape(-1) if c.mask is not None else slice(None)
            resid = (c.y - c.out).reshape(-1)[sel]
            self.posterior_ = LaplaceLinReg(alpha=self.alpha, noise=self.noise).fit(
                J[sel], resid, self._sq_norm()
            )
            if vc is not None:
                assert vc.y is not None
                Jv = torch.cat(v_chunks).reshape(-1, J.shape[1])
                self.posterior_.select_on_validation(Jv, (vc.y - vc.out).reshape(-1))
            self.alpha_, self.noise_ = self.posterior_.alpha, self.posterior_.noise
        else:
            probs = torch.softmax(c.out, dim=1)
            loglik = float(
                torch.log_softmax(c.out, 1)[torch.arange(N, device=c.out.device), c.y].sum()
            )
            self.posterior_ = FullGGNLaplace(alpha=self.alpha).fit(
                chunks, probs, loglik, self._sq_norm()
            )
            if vc is not None and self.alpha is None:
                assert vc.y is not None
                self.posterior_.select_on_validation(v_chunks, vc.out, vc.y)
            self.alpha_, self.noise_ = self.posterior_.alpha, None
        self._fitted = True
        return self

    def _predict_batch(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        x = self.net.check_inputs(x)
        with torch.no_grad():
            out = self.net.model(x).double().reshape(x.shape[0], -1)
        N, C = out.shape
        J = [
            jacobian(self.net, x[s : s + self.chunk], chunk=self.chunk)
            for s in range(0, N, self.chunk)
        ]
        if self.likelihood == "regression":
            var = torch.cat(
                [self.posterior_.predict_var(j.reshape(-1, self._n_params())) for j in J]
            )
            return RegressionPredictive(out, var.reshape(N, C), float(self.noise_))
        cov = torch.cat([self.posterior_.logit_cov(j) for j in J])
        return self._probs(out, cov)

    def output_cov(self, x: torch.Tensor) -> torch.Tensor:
        """Joint covariance of the C outputs at each input (regression).

        Args:
            x: inputs ``(N, ...)``.

        Returns:
            ``(N, C, C)``.
        """
        require_fitted(self)
        J = jacobian(self.net, x).double()
        return torch.stack([self.posterior_.predict_cov(Jn) for Jn in J])
