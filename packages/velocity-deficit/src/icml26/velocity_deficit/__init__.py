"""Velocity deficit in flow matching, measured against the exact field; SSC and MAFM sized
from what a model lacks.

::

    from icml26.velocity_deficit import SSCSettings, calibrate, corrected, integrate, mafm_loss

    cal = calibrate(model, held_out, SSCSettings(nfe=50))       # SSC, sized and chosen on held-out data
    x = integrate(corrected(model, cal.schedule), noise, steps=50)
    loss = mafm_loss(model(xt, t), x1 - x0, t, lam=0.3, target=exact_ratio(held_out, ..., bank=train))

Importing this package imports no torch: names load on first use.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DeficitSchedule": ".ssc",
        "FeatureClassifier": ".metrics",
        "IDENTITY": ".ssc",
        "RatioProfile": ".diagnostics",
        "RunConfig": ".config",
        "SSCSettings": ".ssc",
        "ScaleSchedule": ".ssc",
        "TrainSettings": ".train",
        "VelocityMLP": ".model",
        "calibrate": ".ssc",
        "corrected": ".ssc",
        "exact_ratio": ".diagnostics",
        "integrate": ".samplers",
        "load_dataset": ".data",
        "mafm_loss": ".flow",
        "train_velocity_model": ".train",
        "velocity_ratio": ".diagnostics",
    },
)

if TYPE_CHECKING:
    from icml26.velocity_deficit.config import RunConfig as RunConfig
    from icml26.velocity_deficit.data import load_dataset as load_dataset
    from icml26.velocity_deficit.diagnostics import RatioProfile as RatioProfile
    from icml26.velocity_deficit.diagnostics import exact_ratio as exact_ratio
    from icml26.velocity_deficit.diagnostics import velocity_ratio as velocity_ratio
    from icml26.velocity_deficit.flow import mafm_loss as mafm_loss
    from icml26.velocity_deficit.metrics import FeatureClassifier as FeatureClassifier
    from icml26.velocity_deficit.model import VelocityMLP as VelocityMLP
    from icml26.velocity_deficit.samplers import integrate as integrate
    from icml26.velocity_deficit.ssc import IDENTITY as IDENTITY
    from icml26.velocity_deficit.ssc import DeficitSchedule as DeficitSchedule
    from icml26.velocity_deficit.ssc import ScaleSchedule as ScaleSchedule
    from icml26.velocity_deficit.ssc import SSCSettings as SSCSettings
    from icml26.velocity_deficit.ssc import calibrate as calibrate
    from icml26.velocity_deficit.ssc import corrected as corrected
    from icml26.velocity_deficit.train import TrainSettings as TrainSettings
    from icml26.velocity_deficit.train import train_velocity_model as train_velocity_model
