"""Fit every method on one data split and score it (shared by the run and the tests)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.bll_ntk import metrics as M
from icml26.bll_ntk.baselines import DeepEnsemble, MCDropout
from icml26.bll_ntk.bll import (
    BLL,
    NTKBLL,
    ClassificationPredictive,
    LastLayerLaplace,
    LinearisedLaplace,
    RegressionPredictive,
)
from icml26.bll_ntk.data import ClassificationTask, RegressionSplit
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.train import TrainSpec, train_classifier, train_regressor

__all__ = ["MethodSettings", "evaluate_classification", "evaluate_regression", "fit_all"]


@dataclass(frozen=True)
class MethodSettings:
    hidden: tuple[int, ...]
    activation: str
    spec: TrainSpec
    ridge: float = 1.0
    hyperparameters: str = "bll"
    subsample: int = 64
    ensemble_size: int = 5
    dropout: float = 0.1
    mc_samples: int = 50
    predictive: str = "probit"
    lla_max_params: int = 30000
    seed: int = 0
    methods: tuple[str, ...] = (
        "bll",
        "ntk_bll",
        "ntk_bll_sub",
        "ll_laplace",
        "lla",
        "ensemble",
        "mc_dropout",
    )


@dataclass
class Fitted:
    """Fitted posteriors, their fit seconds, and the base network."""

    base: nn.Module
    train_seconds: float = 0.0
    models: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def alt_name(self) -> str:
        return next(k for k in self.models if k in ("ntk_bll_own", "ntk_bll_shared"))


def fit_all(
    x: torch.Tensor, y: torch.Tensor, d_out: int, likelihood: str, s: MethodSettings
) -> Fitted:
    """Train the MAP network and every baseline, then fit each posterior on ``(x, y)``.

    ``ll_laplace`` is fitted for regression only: there it differs from ``bll`` (mean = the
    trained head and the Laplace evidence, against the conjugate posterior mean and the exact
    evidence); for classification ``bll`` already is the Laplace approximation around the
    trained head, so ``ll_laplace`` would repeat it (``tests/test_bll.py`` shows they agree).

    Every network is built on ``x``'s device (CUDA data trains and fits on CUDA)."""
    d_in = x.shape[1]

    def make(dropout: float = 0.0) -> nn.Module:
        net = make_mlp(d_in, d_out, s.hidden, activation=s.activation, dropout=dropout)
        return net.to(x.device)

    trainer: Callable[..., nn.Module] = (
        train_regressor if likelihood == "regression" else train_classifier
    )
    torch.manual_seed(s.seed)
    t0 = time.perf_counter()
    base = trainer(make(), x, y, s.spec, seed=s.seed)
    train_seconds = time.perf_counter() - t0
    out = Fitted(base, train_seconds=train_seconds)
    n_params = sum(p.numel() for p in base.parameters())
    alt = "ntk_bll_own" if s.hyperparameters == "bll" else "ntk_bll_shared"
    kw = {"predictive": s.predictive}
    builders: dict[str, Callable[[], Any]] = {
        "bll": lambda: BLL(base, "head", likelihood, **kw),
        "ntk_bll": lambda: NTKBLL(
            base, "head", likelihood, ridge=s.ridge, hyperparameters=s.hyperparameters, **kw
        ),
        alt: lambda: NTKBLL(
            base,
            "head",
            likelihood,
            ridge=s.ridge,
            hyperparameters="own" if s.hyperparameters == "bll" else "bll",
            **kw,
        ),
        "ntk_bll_sub": lambda: NTKBLL(
            base,
            "head",
            likelihood,
            ridge=s.ridge,
            subsample=s.subsample,
            posterior_subsample=s.subsample,
            hyperparameters=s.hyperparameters,
            seed=s.seed,
            **kw,
        ),
        "ll_laplace": lambda: LastLayerLaplace(base, "head", likelihood, **kw),
        "lla": lambda: LinearisedLaplace(base, "head", likelihood, **kw),
    }
    for name in [*s.methods, alt]:
        if name in builders:
            if name == "lla" and n_params > s.lla_max_params:
                continue
            if name == "ll_laplace" and likelihood == "classification":
                continue  # at the trained head it is BLL's softmax Laplace: the same numbers
            t0 = time.perf_counter()
            out.models[name] = builders[name]().fit(x, y)
            out.seconds[name] = time.perf_counter() - t0
    if "ensemble" in s.methods:
        t0 = time.perf_counter()
        ens = DeepEnsemble(make, likelihood, s.spec, s.ensemble_size, seed=s.seed + 1)
        out.models["ensemble"] = ens.fit(x, y)
        out.seconds["ensemble"] = time.perf_counter() - t0  # trains all its members
    if "mc_dropout" in s.methods:
        torch.manual_seed(s.seed + 2)
        t0 = time.perf_counter()
        out.models["mc_dropout"] = MCDropout(
            make(s.dropout), likelihood, s.spec, s.mc_samples, seed=s.seed + 2
        ).fit(x, y)
        out.seconds["mc_dropout"] = time.perf_counter() - t0
    return out


def _timed_predict(model: Any, x: torch.Tensor) -> tuple[Any, float]:
    t0 = time.perf_counter()
    pred = model.predict(x)
    return pred, time.perf_counter() - t0


def evaluate_regression(
    split: RegressionSplit, s: MethodSettings
) -> tuple[dict[str, dict[str, float]], Fitted, dict[str, RegressionPredictive]]:
    """Per-method metrics in **standardised** target units (NLL, RMSE, ECE, 90% coverage).

    The target is standardised with the training split's mean and standard deviation, so an
    NLL here is the original-unit NLL minus ``log y_std`` (the same shift for every method of
    a split: paired differences are unit-free) and an RMSE is in training standard deviations.
    """
    fitted = fit_all(split.x_train, split.y_train, 1, "regression", s)
    y = split.y_test.double().cpu().numpy().reshape(-1)
    res: dict[str, dict[str, float]] = {}
    preds: dict[str, RegressionPredictive] = {}
    for name, model in fitted.models.items():
        pred, secs = _timed_predict(model, split.x_test)
        preds[name] = pred
        mean = pred.mean[:, 0].double().cpu().numpy()
        var = pred.total_var[:, 0].double().cpu().numpy()
        res[name] = {
            "nll": M.gaussian_nll(y, mean, var),
            "rmse": float(np.sqrt(np.mean((y - mean) ** 2))),
            "ece": M.regression_ece(y, mean, var),
            "coverage90": M.interval_coverage(y, mean, var, 0.9),
            "fit_seconds": fitted.seconds[name] + secs,
        }
    return res, fitted, preds


def _entropy(p: torch.Tensor) -> np.ndarray:
    p = p.double().clamp_min(1e-12)
    return (-(p * p.log()).sum(1)).cpu().numpy()


def evaluate_classification(
    task: ClassificationTask, s: MethodSettings
) -> tuple[dict[str, dict[str, Any]], Fitted, dict[str, dict[str, ClassificationPredictive]]]:
    """Per-method NLL, accuracy, ECE, 90% set coverage, Brier, and OOD AUROCs (entropy and
    epistemic logit variance as scores)."""
    fitted = fit_all(task.x_train, task.y_train, task.n_classes, "classification", s)
    labels = task.y_test.cpu().numpy()
    res: dict[str, dict[str, Any]] = {}
    preds: dict[str, dict[str, ClassificationPredictive]] = {}
    for name, model in fitted.models.items():
        pred, secs = _timed_predict(model, task.x_test)
        probs = pred.probs.double().cpu().numpy()
        onehot = np.eye(task.n_classes)[labels]
        r: dict[str, Any] = {
            "nll": float(
                -np.mean(np.log(np.clip(probs[np.arange(len(labels)), labels], 1e-12, None)))
            ),
            "accuracy": float(np.mean(probs.argmax(1) == labels)),
            "ece": M.classification_ece(probs, labels),
            "coverage90": M.prediction_set_coverage(probs, labels, 0.9),
            "brier": float(np.mean(np.sum((probs - onehot) ** 2, axis=1))),
            "fit_seconds": fitted.seconds[name] + secs,
        }
        preds[name] = {"test": pred}
        for ood_name, x_ood in task.ood.items():
            p_ood = model.predict(x_ood)
            preds[name][ood_name] = p_ood
            r[f"ood_auroc.{ood_name}"] = M.auroc(_entropy(pred.probs), _entropy(p_ood.probs))
            v_in, v_out = (
                pred.logit_var.double().cpu().numpy(),
                p_ood.logit_var.double().cpu().numpy(),
            )
            r[f"ood_auroc_var.{ood_name}"] = (
                M.auroc(v_in, v_out) if np.ptp(np.r_[v_in, v_out]) > 0 else math.nan
            )
        res[name] = r
    return res, fitted, preds
