"""NPPR: non-parametric probabilistic robustness with learned Gaussian-mixture perturbations.

::

    from icml26.nppr import FitConfig, PerturbationGMM, estimate_nppr, fit_nppr

    gmm = PerturbationGMM((1, 28, 28), n_classes=10, eps=0.1, form="y", k=4, weight_floor=0.5)
    fit_nppr(model.eval(), fit_loader, gmm, FitConfig(steps=300))
    est = estimate_nppr(model, test_loader, gmm, m=100)  # est.value, est.lo, est.hi

The baselines (fixed-noise PR, ours and the official code's; universal perturbations; AR by
ART's PGD and an APGD + Square ensemble) are in :mod:`icml26.nppr.baselines`, the loaders in
:mod:`icml26.nppr.data`. Importing this package imports no torch until a name is used.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BenchConfig": ".config",
        "RunConfig": ".config",
        "Estimate": ".stats",
        "FitConfig": ".fit",
        "FitResult": ".fit",
        "estimate_nppr": ".fit",
        "fit_nppr": ".fit",
        "mixture_shape": ".fit",
        "PerturbationGMM": ".gmm",
        "effective_components": ".gmm",
        "estimate_pr_with": ".montecarlo",
        "ClassifierSpec": ".models",
        "build_classifier": ".models",
        "load_user_model": ".models",
    },
    submodules=["baselines", "data"],
)

if TYPE_CHECKING:
    from icml26.nppr import baselines as baselines
    from icml26.nppr import data as data
    from icml26.nppr.config import BenchConfig as BenchConfig
    from icml26.nppr.config import RunConfig as RunConfig
    from icml26.nppr.fit import FitConfig as FitConfig
    from icml26.nppr.fit import FitResult as FitResult
    from icml26.nppr.fit import estimate_nppr as estimate_nppr
    from icml26.nppr.fit import fit_nppr as fit_nppr
    from icml26.nppr.fit import mixture_shape as mixture_shape
    from icml26.nppr.gmm import PerturbationGMM as PerturbationGMM
    from icml26.nppr.gmm import effective_components as effective_components
    from icml26.nppr.models import ClassifierSpec as ClassifierSpec
    from icml26.nppr.models import build_classifier as build_classifier
    from icml26.nppr.models import load_user_model as load_user_model
    from icml26.nppr.montecarlo import estimate_pr_with as estimate_pr_with
    from icml26.nppr.stats import Estimate as Estimate
