"""The baselines NPPR is set beside: fixed-distribution PR (ours and the official code's
noise), universal (and per-class) adversarial perturbations, and AR by ART's attacks.

::

    from icml26.nppr.baselines import estimate_fixed_pr, UniversalPerturbation, pgd_ar

    pr = estimate_fixed_pr(model, loader, "gaussian_official", eps=8 / 255, m=100)
    uap = UniversalPerturbation((3, 32, 32), 8 / 255, n_classes=10)
    uap.fit(model, fit_loader, UAPConfig(steps=300))
    acc_under_uap = estimate_uap(model, loader, uap)
    ar = apgd_square_ar(model, (x[:500], y[:500]), eps=8 / 255)
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DISTRIBUTIONS": ".noise",
        "OFFICIAL_DISTRIBUTIONS": ".noise",
        "OUR_DISTRIBUTIONS": ".noise",
        "FixedNoise": ".noise",
        "estimate_fixed_pr": ".noise",
        "tuned_fixed_pr": ".noise",
        "UAPConfig": ".uap",
        "UniversalPerturbation": ".uap",
        "estimate_uap": ".uap",
        "apgd_square_ar": ".attacks",
        "apgd_square_parts": ".attacks",
        "clean_accuracy": ".attacks",
        "pgd_ar": ".attacks",
    },
    distribution="icml26-nppr",
)

if TYPE_CHECKING:
    from icml26.nppr.baselines.attacks import apgd_square_ar as apgd_square_ar
    from icml26.nppr.baselines.attacks import apgd_square_parts as apgd_square_parts
    from icml26.nppr.baselines.attacks import clean_accuracy as clean_accuracy
    from icml26.nppr.baselines.attacks import pgd_ar as pgd_ar
    from icml26.nppr.baselines.noise import DISTRIBUTIONS as DISTRIBUTIONS
    from icml26.nppr.baselines.noise import OFFICIAL_DISTRIBUTIONS as OFFICIAL_DISTRIBUTIONS
    from icml26.nppr.baselines.noise import OUR_DISTRIBUTIONS as OUR_DISTRIBUTIONS
    from icml26.nppr.baselines.noise import FixedNoise as FixedNoise
    from icml26.nppr.baselines.noise import estimate_fixed_pr as estimate_fixed_pr
    from icml26.nppr.baselines.noise import tuned_fixed_pr as tuned_fixed_pr
    from icml26.nppr.baselines.uap import UAPConfig as UAPConfig
    from icml26.nppr.baselines.uap import UniversalPerturbation as UniversalPerturbation
    from icml26.nppr.baselines.uap import estimate_uap as estimate_uap
