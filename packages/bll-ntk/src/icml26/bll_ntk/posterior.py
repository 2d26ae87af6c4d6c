"""What every last-layer posterior shares: predictive types, the data pass, batched prediction.

:class:`Posterior` checks the constructor's arguments, pushes training data through the
network batch by batch (:meth:`Posterior.collect`: features, outputs, checked targets and
mask) and turns ``predict`` on a tensor or a loader into one predictive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

from icml26.bll_ntk.batches import Data, iter_batches
from icml26.bll_ntk.glm import check_labels, predictive_probs
from icml26.bll_ntk.network import LastLayerModel

__all__ = [
    "ClassificationPredictive",
    "Collected",
    "Likelihood",
    "Posterior",
    "RegressionPredictive",
    "gaussian_nll",
    "head_rows",
    "regression_targets",
    "require_fitted",
]

Likelihood = Literal["regression", "classification"]


@dataclass(frozen=True)
class RegressionPredictive:
    """Gaussian predictive of a regression posterior.

    Attributes:
        mean: ``(N, C)`` predictive means.
        var: ``(N, C)`` epistemic (function-space) variances.
        noise: the homoscedastic noise variance σ².
    """

    mean: torch.Tensor
    var: torch.Tensor
    noise: float

    @property
    def total_var(self) -> torch.Tensor:
        """``var + noise``: the predictive variance of a new observation."""
        return self.var + self.noise


@dataclass(frozen=True)
class ClassificationPredictive:
    """Class probabilities and the epistemic spread of the logits.

    Attributes:
        probs: ``(N, C)`` predictive class probabilities.
        logit_var: ``(N,)`` trace of the logit covariance ``tr Σ_f(x)``.
    """

    probs: torch.Tensor
    logit_var: torch.Tensor


def head_rows(phi: torch.Tensor, n_outputs: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Design rows ``e_c ⊗ φ̃(x_n)`` for every (observed) pair (n, c), n-major.

    Args:
        phi: ``(N, d)`` features.
        n_outputs: C.
        mask: ``(N, C)`` observed entries (all by default).

    Returns:
        ``(rows, C·d)``.
    """
    N, d = phi.shape
    Z = torch.zeros(N, n_outputs, n_outputs * d, dtype=phi.dtype, device=phi.device)
    for c in range(n_outputs):
        Z[:, c, c * d : (c + 1) * d] = phi
    Z = Z.reshape(N * n_outputs, n_outputs * d)
    return Z if mask is None else Z[mask.reshape(-1).bool()]


def gaussian_nll(y: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """Per-point Gaussian negative log-likelihood.

    Args:
        y: targets.
        mean: predictive means.
        var: predictive variances.

    Returns:
        ``½ log(2πσ²) + (y − μ)² / (2σ²)`` elementwise.
    """
    return 0.5 * (torch.log(2 * math.pi * var) + (y - mean) ** 2 / var)


@dataclass
class Collected:
    """One pass of the data through the network.

    Attributes:
        phi: ``(N, d)`` float64 last-layer features.
        out: ``(N, C)`` float64 network outputs.
        y: checked targets (``(N, C)`` float64 or ``(N,)`` labels), or ``None``.
        mask: ``(N, C)`` observed entries, or ``None``.
    """

    phi: torch.Tensor  # (N, d) float64
    out: torch.Tensor  # (N, C) float64
    y: torch.Tensor | None
    mask: torch.Tensor | None

    @property
    def n(self) -> int:
        """N, the number of examples."""
        return int(self.phi.shape[0])


def regression_targets(y: torch.Tensor, n: int, C: int, where: str) -> torch.Tensor:
    """Regression targets as ``(n, C)`` float64.

    Args:
        y: ``(n,)`` (one output) or ``(n, C)`` targets.
        n: the number of examples.
        C: the number of outputs.
        where: the calling method, for messages.

    Returns:
        The targets.

    Raises:
        TypeError: not a tensor.
        ValueError: another shape (the message names the expected one).
    """
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"{where}: regression targets must be a tensor, got {type(y).__name__}")
    if y.ndim == 1 and C == 1:
        y = y[:, None]
    if y.shape != (n, C):
        want = f"({n},) or ({n}, 1)" if C == 1 else f"({n}, {C})"
        raise ValueError(
            f"{where}: regression targets have shape {tuple(y.shape)}, expected {want} for a "
            f"{C}-output last layer"
        )
    return y.double()


def require_fitted(obj: Any) -> None:
    """Raise ``RuntimeError`` unless ``obj`` has been fitted.

    Args:
        obj: a posterior.

    Raises:
        RuntimeError: ``fit`` was not called.
    """
    if not getattr(obj, "_fitted", False):
        raise RuntimeError(f"{type(obj).__name__} is not fitted: call fit(x, y) first")


class Posterior:
    """Base of the last-layer posteriors: constructor checks, the data pass, batched prediction.

    Args:
        model: the trained network.
        last_layer: the dotted name of its final ``nn.Linear``.
        likelihood: ``"regression"`` or ``"classification"``.
        alpha: fixed prior precision.
        noise: fixed regression noise variance.
        predictive: ``"probit"`` or ``"mc"`` class probabilities.
        batch_size: examples per forward pass.

    Raises:
        ValueError: an unknown likelihood or predictive, or a non-positive number.
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
        batch_size: int = 1024,
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
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.net = LastLayerModel(model, last_layer)
        self.likelihood = likelihood
        self.alpha, self.noise, self.predictive = alpha, noise, predictive
        self.batch_size = batch_size
        self._given = (alpha, noise)
        self._fitted = False

    @property
    def n_outputs(self) -> int:
        """``C``, the number of outputs of the last layer."""
        return self.net.n_outputs

    def collect(
        self,
        data: Data,
        y: torch.Tensor | None,
        mask: torch.Tensor | None,
        where: str,
        need_targets: bool = True,
    ) -> Collected:
        """Features, outputs, checked targets and mask of every example, batch by batch.

        Args:
            data: inputs or a loader.
            y: targets for tensor inputs.
            mask: observed entries for tensor inputs.
            where: the calling method, for messages.
            need_targets: raise when targets are missing.

        Returns:
            The collected pass.

        Raises:
            TypeError, ValueError: bad inputs, targets or mask.
        """
        self.net.model.eval()
        phis, outs, ys, masks = [], [], [], []
        for xb, yb, mb in iter_batches(data, y, mask, batch_size=self.batch_size, where=where):
            phi, out = self.net.features(xb)
            phis.append(phi.double())
            outs.append(out.double())
            if yb is not None:
                ys.append(yb)
            if mb is not None:
                masks.append(mb)
        if not phis:
            raise ValueError(f"{where}: no data (an empty loader?)")
        phi, out = torch.cat(phis), torch.cat(outs)
        n, C, dev = phi.shape[0], self.n_outputs, phi.device
        if need_targets and len(ys) != len(phis):
            raise ValueError(f"{where}: targets are missing (pass y, or (x, y) batches)")
        yy: torch.Tensor | None = None
        if ys:
            yy = torch.cat([t.to(dev) for t in ys])
            if self.likelihood == "regression":
                yy = regression_targets(yy, n, C, where)
            else:
                yy = check_labels(yy, n, C)
        mm: torch.Tensor | None = None
        if masks:
            if self.likelihood != "regression":
                raise ValueError(f"{where}: a mask is only meaningful for regression targets")
            mm = torch.cat([t.to(dev) for t in masks]).bool()
            if mm.shape != (n, C):
                raise ValueError(f"{where}: mask has shape {tuple(mm.shape)}, expected ({n}, {C})")
        if yy is not None and self.likelihood == "regression":
            obs = yy[mm] if mm is not None else yy
            if not torch.isfinite(obs).all():
                raise ValueError(f"{where}: regression targets contain NaN or inf")
        return Collected(phi, out, yy, mm)

    def predict(self, data: Data) -> RegressionPredictive | ClassificationPredictive:
        """The predictive at inputs ``(N, ...)`` or at every batch of a loader.

        Args:
            data: a tensor of inputs, or a loader of ``x`` / ``(x, ...)`` batches.

        Returns:
            A :class:`RegressionPredictive` or :class:`ClassificationPredictive`.

        Raises:
            RuntimeError: called before ``fit``.
            ValueError: inputs of another shape than the training inputs, or NaN.
        """
        require_fitted(self)
        self.net.model.eval()
        parts = [
            self._predict_batch(xb)
            for xb, _, _ in iter_batches(data, batch_size=self.batch_size, where="predict")
        ]
        if not parts:
            raise ValueError("predict: no data (an empty loader?)")
        if isinstance(parts[0], RegressionPredictive):
            return RegressionPredictive(
                torch.cat([p.mean for p in parts]),
                torch.cat([p.var for p in parts]),
                parts[0].noise,
            )
        return ClassificationPredictive(
            torch.cat([p.probs for p in parts]), torch.cat([p.logit_var for p in parts])
        )

    def _predict_batch(self, x: torch.Tensor) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _probs(self, mean: torch.Tensor, cov: torch.Tensor) -> ClassificationPredictive:
        probs = predictive_probs(mean, cov, method=self.predictive)
        return ClassificationPredictive(probs, torch.diagonal(cov, dim1=1, dim2=2).sum(1))
