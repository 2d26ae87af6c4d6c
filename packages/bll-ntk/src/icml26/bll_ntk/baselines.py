"""Baselines that are not last-layer posteriors: the MAP network, deep ensembles, MC dropout.

Regression members are homoscedastic: the noise variance σ² is chosen by the Gaussian NLL on
validation data when ``fit`` gets ``val`` (the same grid search the BLLs use), else it is the
training mean squared error. The predictive is moment-matched to a Gaussian (mean of member
means; variance = variance of member means + σ²). Classification averages the softmax.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from icml26.bll_ntk.glm import check_labels
from icml26.bll_ntk.posterior import ClassificationPredictive, RegressionPredictive
from icml26.bll_ntk.train import TrainSpec, train_classifier, train_regressor

__all__ = ["MAP", "DeepEnsemble", "MCDropout", "select_noise"]

Val = tuple[torch.Tensor, torch.Tensor] | None


def _summarise(
    outs: torch.Tensor, likelihood: str, noise: float
) -> RegressionPredictive | ClassificationPredictive:
    """``outs (S, N, C)`` sampled network outputs → predictive."""
    outs = outs.double()
    if likelihood == "regression":
        return RegressionPredictive(outs.mean(0), outs.var(0, unbiased=False), noise)
    probs = torch.softmax(outs, dim=2).mean(0)
    logit_var = outs.var(0, unbiased=False).sum(1)
    return ClassificationPredictive(probs, logit_var)


def select_noise(mean: torch.Tensor, var: torch.Tensor, y: torch.Tensor, start: float) -> float:
    """The noise variance σ² with the lowest Gaussian NLL of ``y`` on a grid around ``start``.

    Args:
        mean: ``(N, C)`` predictive means on validation inputs.
        var: ``(N, C)`` epistemic variances there.
        y: ``(N, C)`` validation targets.
        start: the centre of the grid (``start × 10^-1.5 .. 10^1.5``, 25 points).

    Returns:
        The chosen σ².
    """
    grid = max(start, 1e-12) * np.logspace(-1.5, 1.5, 25)
    m, v, t = (a.double().cpu().numpy().reshape(-1, 1) for a in (mean, var, y))
    total = v + grid[None]
    nll = 0.5 * np.mean(np.log(2 * math.pi * total) + (t - m) ** 2 / total, axis=0)
    return float(grid[int(np.argmin(nll))])


def _check_likelihood(likelihood: str) -> None:
    if likelihood not in ("regression", "classification"):
        raise ValueError(f"likelihood must be 'regression' or 'classification', got {likelihood!r}")


def _targets(y: torch.Tensor, x: torch.Tensor, n_out: int, likelihood: str) -> torch.Tensor:
    if likelihood == "classification":
        return check_labels(y, x.shape[0], n_out)
    return (y if y.ndim == 2 else y[:, None]).to(x.device)


class MAP:
    """The trained network alone: its outputs, no epistemic variance (the floor of every
    uncertainty comparison).

    Args:
        model: a trained network.
        likelihood: ``"regression"`` or ``"classification"``.

    Raises:
        ValueError: an unknown likelihood.
    """

    def __init__(self, model: nn.Module, likelihood: str) -> None:
        _check_likelihood(likelihood)
        self.model, self.likelihood = model, likelihood
        self.noise_: float | None = None

    def fit(self, x: torch.Tensor, y: torch.Tensor, *, val: Val = None) -> MAP:
        """Set the regression noise: validation NLL when ``val`` is given, else training MSE.

        Args:
            x: training inputs.
            y: training targets.
            val: ``(x_val, y_val)``.

        Returns:
            ``self``.
        """
        with torch.no_grad():
            out = self.model(x).double()
        if self.likelihood == "regression":
            t = _targets(y, x, out.shape[1], self.likelihood).double()
            self.noise_ = float(((out - t) ** 2).mean())
            if val is not None:
                with torch.no_grad():
                    mv = self.model(val[0]).double()
                yv = _targets(val[1], val[0], mv.shape[1], self.likelihood)
                self.noise_ = select_noise(mv, torch.zeros_like(mv), yv, self.noise_)
        else:
            _targets(y, x, out.shape[1], self.likelihood)
            self.noise_ = 0.0
        return self

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        """The network's predictive.

        Args:
            x: inputs.

        Returns:
            Mean with zero epistemic variance (regression) or the softmax (classification).

        Raises:
            RuntimeError: called before ``fit``.
        """
        if self.noise_ is None:
            raise RuntimeError("MAP is not fitted: call fit(x, y) first")
        with torch.no_grad():
            return _summarise(self.model(x)[None], self.likelihood, self.noise_)


class DeepEnsemble:
    """``n_members`` networks from independent initialisations (Lakshminarayanan et al. 2017).

    Args:
        make_model: returns a fresh network (called once per member, after reseeding).
        likelihood: ``"regression"`` or ``"classification"``.
        spec: training settings shared by the members.
        n_members: ensemble size (at least 2).
        seed: member ``k`` is initialised and trained with seed ``seed * 1000 + k``.

    Raises:
        ValueError: fewer than 2 members or an unknown likelihood.
    """

    def __init__(
        self,
        make_model: Callable[[], nn.Module],
        likelihood: str,
        spec: TrainSpec,
        n_members: int = 5,
        seed: int = 0,
    ) -> None:
        _check_likelihood(likelihood)
        if n_members < 2:
            raise ValueError(f"an ensemble needs at least 2 members, got {n_members}")
        self.make_model, self.likelihood, self.spec = make_model, likelihood, spec
        self.n_members, self.seed = n_members, seed
        self.members: list[nn.Module] = []

    def fit(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        val: Val = None,
    ) -> DeepEnsemble:
        """Train every member; set the regression noise (validation NLL when ``val`` is given).

        Args:
            x: training inputs.
            y: targets (floats, or integer labels for classification).
            mask: observed entries (regression).
            val: ``(x_val, y_val)``.

        Returns:
            ``self``.
        """
        self.members, noises = [], []
        for k in range(self.n_members):
            torch.manual_seed(self.seed * 1000 + k)
            model = self.make_model()
            if self.likelihood == "regression":
                train_regressor(model, x, y, self.spec, mask=mask, seed=self.seed * 1000 + k)
                with torch.no_grad():
                    out = model(x)
                    yy = (y if y.ndim == 2 else y[:, None]).to(out.device)
                    m = torch.ones_like(yy) if mask is None else mask.to(yy.device, yy.dtype)
                    noises.append(float((((out - yy) ** 2) * m).sum() / m.sum()))
            else:
                train_classifier(model, x, y, self.spec, seed=self.seed * 1000 + k)
            self.members.append(model)
        self.noise_ = sum(noises) / len(noises) if noises else 0.0
        if val is not None and self.likelihood == "regression":
            outs = self.outputs(val[0]).double()
            yv = _targets(val[1], val[0], outs.shape[2], self.likelihood)
            self.noise_ = select_noise(outs.mean(0), outs.var(0, unbiased=False), yv, self.noise_)
        return self

    @torch.no_grad()
    def outputs(self, x: torch.Tensor) -> torch.Tensor:
        """Every member's outputs ``(S, N, C)``.

        Args:
            x: inputs.

        Returns:
            The stacked outputs.
        """
        return torch.stack([m(x) for m in self.members])

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        """The ensemble's predictive.

        Args:
            x: inputs.

        Returns:
            The moment-matched Gaussian (regression) or the mean softmax (classification).

        Raises:
            RuntimeError: called before ``fit``.
        """
        if not self.members:
            raise RuntimeError("DeepEnsemble is not fitted: call fit(x, y) first")
        return _summarise(self.outputs(x), self.likelihood, self.noise_)


class MCDropout:
    """A dropout network evaluated with dropout on (Gal & Ghahramani 2016).

    Args:
        model: a fresh network containing ``nn.Dropout`` layers.
        likelihood: ``"regression"`` or ``"classification"``.
        spec: training settings.
        n_samples: stochastic forward passes at prediction time.
        seed: the training seed.

    Raises:
        ValueError: a model without dropout, fewer than 2 samples, or an unknown likelihood.
    """

    def __init__(
        self, model: nn.Module, likelihood: str, spec: TrainSpec, n_samples: int = 50, seed: int = 0
    ) -> None:
        _check_likelihood(likelihood)
        if not any(isinstance(m, nn.Dropout) for m in model.modules()):
            raise ValueError("MC dropout needs a model with nn.Dropout layers")
        if n_samples < 2:
            raise ValueError(f"n_samples must be >= 2, got {n_samples}")
        self.model, self.likelihood, self.spec = model, likelihood, spec
        self.n_samples, self.seed = n_samples, seed
        self._fitted = False

    def fit(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        val: Val = None,
    ) -> MCDropout:
        """Train with dropout; set the regression noise (validation NLL when ``val`` is given).

        Args:
            x: training inputs.
            y: targets.
            mask: observed entries (regression).
            val: ``(x_val, y_val)``.

        Returns:
            ``self``.
        """
        if self.likelihood == "regression":
            train_regressor(self.model, x, y, self.spec, mask=mask, seed=self.seed)
            outs = self.outputs(x)
            yy = (y if y.ndim == 2 else y[:, None]).to(outs.device)
            m = torch.ones_like(yy) if mask is None else mask.to(yy.device, yy.dtype)
            self.noise_ = float((((outs.mean(0) - yy) ** 2) * m).sum() / m.sum())
            if val is not None:
                ov = self.outputs(val[0]).double()
                yv = _targets(val[1], val[0], ov.shape[2], self.likelihood)
                self.noise_ = select_noise(ov.mean(0), ov.var(0, unbiased=False), yv, self.noise_)
        else:
            train_classifier(self.model, x, y, self.spec, seed=self.seed)
            self.noise_ = 0.0
        self._fitted = True
        return self

    @torch.no_grad()
    def outputs(self, x: torch.Tensor, n_samples: int | None = None) -> torch.Tensor:
        """Stochastic forward passes ``(S, N, C)`` with dropout on.

        Args:
            x: inputs.
            n_samples: S (``n_samples`` of the constructor by default).

        Returns:
            The stacked outputs.
        """
        self.model.train()  # dropout on
        try:
            return torch.stack([self.model(x) for _ in range(n_samples or self.n_samples)])
        finally:
            self.model.eval()

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        """The MC-dropout predictive.

        Args:
            x: inputs.

        Returns:
            The moment-matched Gaussian (regression) or the mean softmax (classification).

        Raises:
            RuntimeError: called before ``fit``.
        """
        if not self._fitted:
            raise RuntimeError("MCDropout is not fitted: call fit(x, y) first")
        return _summarise(self.outputs(x), self.likelihood, self.noise_)
