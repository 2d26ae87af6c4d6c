"""Fit every method on one split (or seed) and score it: one JSON-able record per split.

Every posterior's hyperparameters are chosen the same way: the validation NLL on a grid
(``MethodSettings.select="validation"``, the laplace-torch recipe) for BLL, the NTK-BLLs and
the Laplace baselines (``ll_laplace``, ``lla``), and the noise of the MAP network, the ensemble
and MC dropout. With ``select="evidence"`` the Bayesian ones use type-II maximum likelihood
(the Laplace evidence for the Laplace baselines, Immer et al. 2021) instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.bll_ntk import metrics as M
from icml26.bll_ntk.baselines import MAP, DeepEnsemble, MCDropout
from icml26.bll_ntk.bll import BLL, NTKBLL
from icml26.bll_ntk.data import ClassificationTask, RegressionSplit
from icml26.bll_ntk.laplace import LastLayerLaplace, LinearisedLaplace
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.posterior import ClassificationPredictive, RegressionPredictive
from icml26.bll_ntk.train import TrainSpec, train_classifier, train_regressor
from icml26.shared.stats import best_of

__all__ = [
    "RUN_METHODS",
    "Fitted",
    "MethodSettings",
    "cost_seconds",
    "evaluate_classification",
    "evaluate_regression",
    "fit_all",
    "subsample_errors",
]

#: Every method the run compares (``ll_laplace`` is regression only: in classification it is
#: ``bll`` itself, the Laplace at the trained head).
RUN_METHODS = (
    "map",
    "bll",
    "ntk_bll",
    "ntk_bll_shared",
    "ntk_bll_sub",
    "ll_laplace",
    "lla",
    "ensemble",
    "mc_dropout",
)


@dataclass(frozen=True)
class MethodSettings:
    """How every method of one split is built and fitted.

    Attributes:
        hidden, activation: the MLP (last layer ``head``).
        spec: MAP training of every network.
        ridge: λ of the NTK projection.
        subsample: points for ``ntk_bll_sub`` (projection and posterior).
        ensemble_size, dropout, mc_samples: the sampling baselines.
        predictive: ``"probit"`` or ``"mc"`` class probabilities.
        lla_max_params: skip ``lla`` above this many parameters.
        select: ``"validation"`` (grid search on the split's validation rows) or
            ``"evidence"`` (type-II ML) for the BLLs' hyperparameters.
        seed: seeds the network (``seed``), the ensemble (``seed + 1``), dropout (``seed + 2``)
            and the subsamples.
        methods: the methods to fit (a subset of :data:`RUN_METHODS`).
    """

    hidden: tuple[int, ...]
    activation: str
    spec: TrainSpec
    ridge: float = 1.0
    subsample: int = 64
    ensemble_size: int = 5
    dropout: float = 0.1
    mc_samples: int = 50
    predictive: str = "probit"
    lla_max_params: int = 30000
    select: str = "validation"
    seed: int = 0
    methods: tuple[str, ...] = RUN_METHODS


@dataclass
class Fitted:
    """Fitted methods, their fit seconds, and the base network."""

    base: nn.Module
    models: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def fit_all(
    x: torch.Tensor,
    y: torch.Tensor,
    d_out: int,
    likelihood: str,
    s: MethodSettings,
    val: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> Fitted:
    """Train the MAP network and every baseline, then fit each method on ``(x, y)``.

    Args:
        x: training inputs (their device is every network's device).
        y: training targets.
        d_out: outputs of the network (1 for regression, C for classification).
        likelihood: ``"regression"`` or ``"classification"``.
        s: the settings.
        val: ``(x_val, y_val)`` for the hyperparameter grid searches.

    Returns:
        The fitted methods.
    """

    def make(dropout: float = 0.0) -> nn.Module:
        net = make_mlp(x.shape[1], d_out, s.hidden, activation=s.activation, dropout=dropout)
        return net.to(x.device)

    trainer: Callable[..., nn.Module] = (
        train_regressor if likelihood == "regression" else train_classifier
    )
    torch.manual_seed(s.seed)
    base = trainer(make(), x, y, s.spec, seed=s.seed)
    out = Fitted(base)
    use_val = val if s.select == "validation" else None
    n_params = sum(p.numel() for p in base.parameters())
    kw: dict[str, Any] = {"predictive": s.predictive}
    builders: dict[str, Callable[[], Any]] = {
        "map": lambda: MAP(base, likelihood).fit(x, y, val=val),
        "bll": lambda: BLL(base, "head", likelihood, **kw).fit(x, y, val=use_val),
        "ntk_bll": lambda: NTKBLL(base, "head", likelihood, ridge=s.ridge, **kw).fit(
            x, y, val=use_val
        ),
        "ntk_bll_shared": lambda: NTKBLL(
            base, "head", likelihood, ridge=s.ridge, hyperparameters="bll", **kw
        ).fit(x, y, val=use_val),
        "ntk_bll_sub": lambda: NTKBLL(
            base,
            "head",
            likelihood,
            ridge=s.ridge,
            subsample=s.subsample,
            posterior_subsample=s.subsample,
            seed=s.seed,
            **kw,
        ).fit(x, y, val=use_val),
        "ll_laplace": lambda: LastLayerLaplace(base, "head", likelihood, **kw).fit(
            x, y, val=use_val
        ),
        "lla": lambda: LinearisedLaplace(base, "head", likelihood, **kw).fit(x, y, val=use_val),
        "ensemble": lambda: DeepEnsemble(
            make, likelihood, s.spec, s.ensemble_size, seed=s.seed + 1
        ).fit(x, y, val=val),
        "mc_dropout": lambda: _dropout(make, likelihood, s, x, y, val),
    }
    for name in s.methods:
        if name == "lla" and n_params > s.lla_max_params:
            continue
        if name == "ll_laplace" and likelihood == "classification":
            continue  # at the trained head it is BLL's softmax Laplace: the same numbers
        t0 = time.perf_counter()
        out.models[name] = builders[name]()
        out.seconds[name] = time.perf_counter() - t0
    return out


def _dropout(
    make: Callable[[float], nn.Module],
    likelihood: str,
    s: MethodSettings,
    x: torch.Tensor,
    y: torch.Tensor,
    val: tuple[torch.Tensor, torch.Tensor] | None,
) -> MCDropout:
    torch.manual_seed(s.seed + 2)
    model = MCDropout(make(s.dropout), likelihood, s.spec, s.mc_samples, seed=s.seed + 2)
    return model.fit(x, y, val=val)


def _timed_predict(model: Any, x: torch.Tensor) -> tuple[Any, float]:
    t0 = time.perf_counter()
    pred = model.predict(x)
    return pred, time.perf_counter() - t0


def _var_ge(ntk: torch.Tensor, bll: torch.Tensor) -> float:
    """Fraction of entries with ntk >= bll (relative tolerance 1e-7 for round-off)."""
    return float((ntk >= bll * (1 - 1e-7) - 1e-12).double().mean())


def _median_ratio(ntk: torch.Tensor, bll: torch.Tensor) -> float:
    return float(torch.median(ntk.double() / bll.double().clamp_min(1e-300)))


def _shared_record(fitted: Fitted, preds: dict[str, Any], var: Callable[[Any], torch.Tensor]):  # type: ignore[no-untyped-def]
    """The diagnostics of the projection: ``tr M / D`` and ntk_bll_shared against bll."""
    rec: dict[str, Any] = {"alpha": {}}
    for name, model in fitted.models.items():
        if hasattr(model, "alpha_"):
            rec["alpha"][name] = float(model.alpha_)
    if "ntk_bll" in fitted.models:
        rec["trace_ratio"] = fitted.models["ntk_bll"].projection_.trace_ratio
    if "ntk_bll_shared" in preds and "bll" in preds:
        rec["var_ge_bll"] = _var_ge(var(preds["ntk_bll_shared"]), var(preds["bll"]))
    return rec


def evaluate_regression(split: RegressionSplit, s: MethodSettings) -> dict[str, Any]:
    """Per-method metrics in **standardised** target units (NLL, RMSE, ECE, 90% coverage).

    The target is standardised with the training rows' mean and standard deviation, so an
    NLL here is the original-unit NLL minus ``log y_std`` (the same shift for every method of
    a split: paired differences are unit-free) and an RMSE is in training standard deviations.

    Args:
        split: the standardised split (validation rows choose hyperparameters).
        s: the settings.

    Returns:
        ``{"metrics": {method: {metric: value}}, "alpha": {...}, "trace_ratio", "var_ge_bll",
        "var_ratio": {"test": median ntk_bll_shared / bll variance}}``; the fitted methods
        are kept under the private key ``"_fitted"``.
    """
    val = (split.x_val, split.y_val) if split.x_val.numel() else None
    fitted = fit_all(split.x_train, split.y_train, 1, "regression", s, val)
    y = split.y_test.double().cpu().numpy().reshape(-1)
    res: dict[str, dict[str, float]] = {}
    preds: dict[str, RegressionPredictive] = {}
    for name, model in fitted.models.items():
        pred, secs = _timed_predict(model, split.x_test)
        preds[name] = pred
        mean = pred.mean[:, 0].double().cpu().numpy()
        total = pred.total_var[:, 0].double().cpu().numpy()
        res[name] = {
            "nll": M.gaussian_nll(y, mean, total),
            "rmse": float(np.sqrt(np.mean((y - mean) ** 2))),
            "ece": M.regression_ece(y, mean, total),
            "coverage90": M.interval_coverage(y, mean, total, 0.9),
            "fit_seconds": fitted.seconds[name] + secs,
        }
    rec = _shared_record(fitted, preds, lambda p: p.var)
    if "ntk_bll_shared" in preds and "bll" in preds:
        rec["var_ratio"] = {"test": _median_ratio(preds["ntk_bll_shared"].var, preds["bll"].var)}
    return {"metrics": res, **rec, "_fitted": fitted}


def _entropy(p: torch.Tensor) -> np.ndarray:
    p = p.double().clamp_min(1e-12)
    return (-(p * p.log()).sum(1)).cpu().numpy()


def _scores(
    labels: np.ndarray, n_classes: int, pred: ClassificationPredictive, secs: float
) -> dict[str, float]:
    probs = pred.probs.double().cpu().numpy()
    onehot = np.eye(n_classes)[labels]
    return {
        "nll": float(-np.mean(np.log(np.clip(probs[np.arange(len(labels)), labels], 1e-12, None)))),
        "accuracy": float(np.mean(probs.argmax(1) == labels)),
        "ece": M.classification_ece(probs, labels),
        "coverage90": M.prediction_set_coverage(probs, labels, 0.9),
        "brier": float(np.mean(np.sum((probs - onehot) ** 2, axis=1))),
        "fit_seconds": secs,
    }


def evaluate_classification(task: ClassificationTask, s: MethodSettings) -> dict[str, Any]:
    """Per-method NLL, accuracy, ECE, 90% set coverage, Brier, and OOD AUROCs with the
    predictive entropy (``ood_auroc.<set>``) and the epistemic logit variance
    (``ood_auroc_var.<set>``) as scores.

    Args:
        task: the task (validation rows choose hyperparameters).
        s: the settings.

    Returns:
        As :func:`evaluate_regression`, with ``"var_ratio"`` per OOD set and the test
        probabilities of every method under ``"probs"`` (for reliability diagrams).
    """
    val = (task.x_val, task.y_val) if task.x_val.numel() else None
    fitted = fit_all(task.x_train, task.y_train, task.n_classes, "classification", s, val)
    labels = task.y_test.cpu().numpy()
    res: dict[str, dict[str, float]] = {}
    preds: dict[str, dict[str, ClassificationPredictive]] = {}
    for name, model in fitted.models.items():
        pred, secs = _timed_predict(model, task.x_test)
        r = _scores(labels, task.n_classes, pred, fitted.seconds[name] + secs)
        preds[name] = {"test": pred}
        for ood_name, x_ood in task.ood.items():
            p_ood = model.predict(x_ood)
            preds[name][ood_name] = p_ood
            r[f"ood_auroc.{ood_name}"] = M.auroc(_entropy(pred.probs), _entropy(p_ood.probs))
            v_in = pred.logit_var.double().cpu().numpy()
            v_out = p_ood.logit_var.double().cpu().numpy()
            if np.ptp(np.r_[v_in, v_out]) > 0:  # the MAP network has no variance to rank by
                r[f"ood_auroc_var.{ood_name}"] = M.auroc(v_in, v_out)
        res[name] = r

    def all_var(p: dict[str, ClassificationPredictive]) -> torch.Tensor:
        return torch.cat([q.logit_var for q in p.values()])

    rec = _shared_record(fitted, preds, all_var)
    if "ntk_bll_shared" in preds and "bll" in preds:
        rec["var_ratio"] = {
            k: _median_ratio(preds["ntk_bll_shared"][k].logit_var, preds["bll"][k].logit_var)
            for k in preds["bll"]
        }
    rec["probs"] = {m: p["test"].probs.double().cpu().numpy().tolist() for m, p in preds.items()}
    return {"metrics": res, **rec, "_fitted": fitted}


def subsample_errors(
    fitted: Fitted,
    x_train: torch.Tensor,
    y_train: torch.Tensor,
    x_test: torch.Tensor,
    sizes: tuple[int, ...],
    repeats: int,
    seed: int,
) -> dict[str, dict[str, float]]:
    """Relative error of subsampled NTK-BLL predictive variances against the exact one, at
    the exact model's hyperparameters.

    ``proj.s<m>``: the projection from ``m`` points (posterior on all); ``proj.s0``: no
    projection at all (``M = 0``: BLL's prior), the error the correction removes; ``both.s<m>``:
    projection and posterior from ``m`` points.

    Args:
        fitted: the split's fitted methods (needs ``ntk_bll``).
        x_train, y_train: the training data.
        x_test: where the variances are compared.
        sizes: subsample sizes.
        repeats: subsamples per size (errors averaged).
        seed: seed of the first subsample.

    Returns:
        ``{"both": {"s<m>": error}, "proj": {"s0": error, "s<m>": error}}``.
    """
    exact = fitted.models["ntk_bll"]
    ref = exact.predict(x_test)
    ref_var = ref.var if hasattr(ref, "var") else ref.logit_var

    def error(model: Any) -> float:
        p = model.predict(x_test)
        v = p.var if hasattr(p, "var") else p.logit_var
        return float(((v - ref_var).abs() / ref_var.abs().clamp_min(1e-12)).mean())

    common = {"alpha": exact.alpha_, "noise": exact.noise_, "predictive": exact.predictive}
    base = BLL(fitted.base, "head", exact.likelihood, **common).fit(x_train, y_train)
    out: dict[str, dict[str, float]] = {"both": {}, "proj": {"s0": error(base)}}
    for k in sizes:
        errs: dict[str, list[float]] = {"both": [], "proj": []}
        for r in range(repeats):
            for kind in ("both", "proj"):
                sub = NTKBLL(
                    fitted.base,
                    "head",
                    exact.likelihood,
                    ridge=exact.ridge,
                    subsample=k,
                    posterior_subsample=k if kind == "both" else None,
                    seed=seed + 97 * r,
                    **common,
                ).fit(x_train, y_train)
                errs[kind].append(error(sub))
        for kind in errs:
            out[kind][f"s{k}"] = float(np.mean(errs[kind]))
    return out


def cost_seconds(
    fitted: Fitted,
    x: torch.Tensor,
    y: torch.Tensor,
    x_test: torch.Tensor,
    val: tuple[torch.Tensor, torch.Tensor] | None,
    s: MethodSettings,
    repeats: int = 3,
) -> dict[str, float]:
    """Fit + predict seconds of ``ntk_bll`` and ``lla`` on the same trained network, by the
    same rule: the median of ``repeats`` timed repeats after one warm-up
    (:func:`icml26.shared.stats.best_of`), each method tuned as in the run (validation grid
    or evidence).

    Args:
        fitted: the split's fitted methods (its base network is reused).
        x, y: the training data.
        x_test: the inputs predicted after fitting.
        val: the validation data (``None``: the evidence).
        s: the settings.
        repeats: timed repeats per method.

    Returns:
        ``{"ntk_bll": median seconds, "lla": median seconds}`` (``lla`` absent above
        ``lla_max_params``).
    """
    likelihood = fitted.models["ntk_bll"].likelihood
    use_val = val if s.select == "validation" else None
    kw: dict[str, Any] = {"predictive": s.predictive}
    make = {
        "ntk_bll": lambda: NTKBLL(fitted.base, "head", likelihood, ridge=s.ridge, **kw),
        "lla": lambda: LinearisedLaplace(fitted.base, "head", likelihood, **kw),
    }
    if "lla" not in fitted.models:
        make.pop("lla")
    out = {}
    for name, build in make.items():
        timing = best_of(
            lambda build=build: build().fit(x, y, val=use_val).predict(x_test),
            repeats=repeats,
            warmup=1,
        )
        out[name] = timing.median
    return out
