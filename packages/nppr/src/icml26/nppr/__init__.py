"""NPPR: non-parametric probabilistic robustness with learned Gaussian-mixture perturbations.

>>> from icml26.nppr import PerturbationGMM, FitConfig, fit_nppr, estimate_nppr
>>> gmm = PerturbationGMM((1, 28, 28), n_classes=10, eps=0.1, form="x", k=4, latent_size=14)
>>> fit_nppr(model.eval(), x_fit, y_fit, gmm, FitConfig(steps=300))
>>> est = estimate_nppr(model, x_test, y_test, gmm, m=100)      # est.value, est.lo, est.hi
>>> estimate_fixed_pr(model, x_test, y_test, "gaussian", eps=0.1)  # the PR baselines
>>> pgd_ar(model, x_test, y_test, eps=0.1); autoattack_ar(...)     # AR via ART
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Public name -> defining module. Imported on first use (PEP 562), so that importing
# ``icml26.nppr.paper`` (what ``icml26 list`` does) never loads torch.
_EXPORTS = {
    "ClassifierSpec": "models",
    "DISTRIBUTIONS": "noise",
    "Estimate": "stats",
    "FORMS": "gmm",
    "FitConfig": "nppr",
    "FitResult": "nppr",
    "FixedNoise": "noise",
    "ImageData": "data",
    "MixtureParams": "gmm",
    "PerturbationGMM": "gmm",
    "TrainConfig": "train",
    "art_classifier": "attacks",
    "autoattack_ar": "attacks",
    "bootstrap_interval": "stats",
    "build_classifier": "models",
    "check_eval_inputs": "validation",
    "clean_accuracy": "attacks",
    "clip_to_ball": "montecarlo",
    "clopper_pearson_interval": "stats",
    "dataset_to_arrays": "data",
    "estimate_fixed_pr": "noise",
    "estimate_from_rates": "stats",
    "estimate_nppr": "nppr",
    "estimate_pr_with": "montecarlo",
    "fit_nppr": "nppr",
    "from_arrays": "data",
    "gumbel_softmax_weights": "gmm",
    "inputs_for_halfwidth": "stats",
    "kept_rates": "montecarlo",
    "load_classifier": "models",
    "load_dataset": "data",
    "load_npz": "data",
    "margin_loss": "nppr",
    "pgd_ar": "attacks",
    "samples_for_halfwidth": "stats",
    "save_classifier": "models",
    "train_classifier": "train",
    "tuned_fixed_pr": "noise",
    "wilson_interval": "stats",
}

__all__ = [
    "DISTRIBUTIONS",
    "FORMS",
    "ClassifierSpec",
    "Estimate",
    "FitConfig",
    "FitResult",
    "FixedNoise",
    "ImageData",
    "MixtureParams",
    "PerturbationGMM",
    "TrainConfig",
    "art_classifier",
    "autoattack_ar",
    "bootstrap_interval",
    "build_classifier",
    "check_eval_inputs",
    "clean_accuracy",
    "clip_to_ball",
    "clopper_pearson_interval",
    "dataset_to_arrays",
    "estimate_fixed_pr",
    "estimate_from_rates",
    "estimate_nppr",
    "estimate_pr_with",
    "fit_nppr",
    "from_arrays",
    "gumbel_softmax_weights",
    "inputs_for_halfwidth",
    "kept_rates",
    "load_classifier",
    "load_dataset",
    "load_npz",
    "margin_loss",
    "pgd_ar",
    "samples_for_halfwidth",
    "save_classifier",
    "train_classifier",
    "tuned_fixed_pr",
    "wilson_interval",
]

if TYPE_CHECKING:
    from icml26.nppr.attacks import art_classifier, autoattack_ar, clean_accuracy, pgd_ar
    from icml26.nppr.data import ImageData, dataset_to_arrays, from_arrays, load_dataset, load_npz
    from icml26.nppr.gmm import FORMS, MixtureParams, PerturbationGMM, gumbel_softmax_weights
    from icml26.nppr.models import (
        ClassifierSpec,
        build_classifier,
        load_classifier,
        save_classifier,
    )
    from icml26.nppr.montecarlo import clip_to_ball, estimate_pr_with, kept_rates
    from icml26.nppr.noise import DISTRIBUTIONS, FixedNoise, estimate_fixed_pr, tuned_fixed_pr
    from icml26.nppr.nppr import FitConfig, FitResult, estimate_nppr, fit_nppr, margin_loss
    from icml26.nppr.stats import (
        Estimate,
        bootstrap_interval,
        clopper_pearson_interval,
        estimate_from_rates,
        inputs_for_halfwidth,
        samples_for_halfwidth,
        wilson_interval,
    )
    from icml26.nppr.train import TrainConfig, train_classifier
    from icml26.nppr.validation import check_eval_inputs


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"icml26.nppr.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *_EXPORTS]
