"""Sampling baselines: deep ensembles and MC dropout (both train their own networks).

Regression members are homoscedastic: each member's noise variance is its training mean
squared error, and the predictive is moment-matched to a Gaussian (mean of member means;
variance = variance of member means + mean noise). Classification averages the softmax.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from icml26.bll_ntk.bll import ClassificationPredictive, RegressionPredictive
from icml26.bll_ntk.train import TrainSpec, train_classifier, train_regressor

__all__ = ["DeepEnsemble", "MCDropout"]


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


class DeepEnsemble:
    """``n_members`` networks from independent initialisations (Lakshminarayanan et al. 2017).

    Args:
        make_model: returns a fresh network (called once per member, after reseeding).
        likelihood: ``"regression"`` or ``"classification"``.
        spec: training settings shared by the members.
    """

    def __init__(
        self,
        make_model: Callable[[], nn.Module],
        likelihood: str,
        spec: TrainSpec,
        n_members: int = 5,
        seed: int = 0,
    ) -> None:
        if n_members < 2:
            raise ValueError(f"an ensemble needs at least 2 members, got {n_members}")
        self.make_model, self.likelihood, self.spec = make_model, likelihood, spec
        self.n_members, self.seed = n_members, seed
        self.members: list[nn.Module] = []

    def fit(
        self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None
    ) -> DeepEnsemble:
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
        self.noise_ = sum(noises) / len(noises) if noises else None
        return self

    @torch.no_grad()
    def outputs(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([m(x) for m in self.members])

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        if not self.members:
            raise RuntimeError("DeepEnsemble is not fitted: call fit(x, y) first")
        return _summarise(self.outputs(x), self.likelihood, self.noise_ or 0.0)


class MCDropout:
    """A dropout network evaluated with dropout on (Gal & Ghahramani 2016).

    Args:
        model: a fresh network containing ``nn.Dropout`` layers.
        n_samples: stochastic forward passes at prediction time.
    """

    def __init__(
        self, model: nn.Module, likelihood: str, spec: TrainSpec, n_samples: int = 50, seed: int = 0
    ) -> None:
        if not any(isinstance(m, nn.Dropout) for m in model.modules()):
            raise ValueError("MC dropout needs a model with nn.Dropout layers")
        if n_samples < 2:
            raise ValueError(f"n_samples must be >= 2, got {n_samples}")
        self.model, self.likelihood, self.spec = model, likelihood, spec
        self.n_samples, self.seed = n_samples, seed
        self._fitted = False

    def fit(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None) -> MCDropout:
        if self.likelihood == "regression":
            train_regressor(self.model, x, y, self.spec, mask=mask, seed=self.seed)
            outs = self.outputs(x)
            yy = (y if y.ndim == 2 else y[:, None]).to(outs.device)
            m = torch.ones_like(yy) if mask is None else mask.to(yy.device, yy.dtype)
            self.noise_ = float((((outs.mean(0) - yy) ** 2) * m).sum() / m.sum())
        else:
            train_classifier(self.model, x, y, self.spec, seed=self.seed)
            self.noise_ = 0.0
        self._fitted = True
        return self

    @torch.no_grad()
    def outputs(self, x: torch.Tensor, n_samples: int | None = None) -> torch.Tensor:
        self.model.train()  # dropout on
        try:
            return torch.stack([self.model(x) for _ in range(n_samples or self.n_samples)])
        finally:
            self.model.eval()

    def predict(self, x: torch.Tensor) -> RegressionPredictive | ClassificationPredictive:
        if not self._fitted:
            raise RuntimeError("MCDropout is not fitted: call fit(x, y) first")
        return _summarise(self.outputs(x), self.likelihood, self.noise_)
