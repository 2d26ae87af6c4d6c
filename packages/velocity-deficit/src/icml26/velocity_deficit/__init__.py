"""Velocity deficit in flow matching, measured against the exact field; SSC and MAFM sized
from what a model lacks.

Public API (PyTorch; torch is imported on first use of a name)::

    from icml26.velocity_deficit import (
        calibrate, SSCSettings, ScaleSchedule, corrected,   # SSC at sampling time
        mafm_loss,                                          # MAFM as a training loss
        velocity_ratio, exact_ratio,                        # the deficit and its exact share
        integrate,                                          # Euler / Heun / midpoint
        VelocityMLP, TrainSettings, train_velocity_model,   # the experiment's models
        FeatureClassifier, load_dataset, RunConfig,         # FD features, data, the job's config
    )
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

__all__ = [
    "FeatureClassifier",
    "RunConfig",
    "SSCSettings",
    "ScaleSchedule",
    "TrainSettings",
    "VelocityMLP",
    "__version__",
    "calibrate",
    "corrected",
    "exact_ratio",
    "integrate",
    "load_dataset",
    "mafm_loss",
    "train_velocity_model",
    "velocity_ratio",
]

_WHERE = {
    "FeatureClassifier": "metrics",
    "RunConfig": "config",
    "SSCSettings": "ssc",
    "ScaleSchedule": "ssc",
    "TrainSettings": "train",
    "VelocityMLP": "model",
    "calibrate": "ssc",
    "corrected": "ssc",
    "exact_ratio": "diagnostics",
    "integrate": "samplers",
    "load_dataset": "data",
    "mafm_loss": "flow",
    "train_velocity_model": "train",
    "velocity_ratio": "diagnostics",
}

try:
    __version__ = version("icml26-velocity-deficit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"icml26.velocity_deficit.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'icml26.velocity_deficit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
