"""Velocity deficit in flow matching: diagnostics, MAFM and the Scale Schedule Corrector.

Public API (PyTorch)::

    from icml26.velocity_deficit import (
        VelocityMLP, TrainSettings, train_velocity_model,      # FM / MAFM training
        integrate, time_grid, steps_for_nfe,                    # Euler / Heun / midpoint
        ScaleSchedule, corrected,                               # SSC
        velocity_ratio, integration_lag,                        # diagnostics
        frechet_distance, FeatureClassifier, sliced_wasserstein,
        IsotropicGMM, random_gmm, load_dataset,
    )

Torch is imported on first use of a name, so ``import icml26.velocity_deficit`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "BenchConfig",
    "Dataset",
    "FeatureClassifier",
    "IsotropicGMM",
    "MAFMObjective",
    "ScaleSchedule",
    "TrainSettings",
    "VDConfig",
    "VelocityMLP",
    "corrected",
    "fm_loss",
    "frechet_distance",
    "frechet_distance_gaussians",
    "integrate",
    "integration_lag",
    "linear_path",
    "load_dataset",
    "mafm_loss",
    "mean_and_se",
    "merge_seeds",
    "nn_distance",
    "ot_coupling",
    "random_gmm",
    "sliced_wasserstein",
    "steps_for_nfe",
    "time_grid",
    "train_velocity_model",
    "velocity_ratio",
]

_WHERE = {
    "BenchConfig": "config",
    "VDConfig": "config",
    "Dataset": "data",
    "load_dataset": "data",
    "FeatureClassifier": "metrics",
    "frechet_distance": "metrics",
    "frechet_distance_gaussians": "metrics",
    "sliced_wasserstein": "metrics",
    "IsotropicGMM": "gmm",
    "random_gmm": "gmm",
    "MAFMObjective": "flow",
    "fm_loss": "flow",
    "linear_path": "flow",
    "mafm_loss": "flow",
    "ot_coupling": "flow",
    "ScaleSchedule": "ssc",
    "corrected": "ssc",
    "TrainSettings": "train",
    "train_velocity_model": "train",
    "VelocityMLP": "model",
    "integrate": "samplers",
    "steps_for_nfe": "samplers",
    "time_grid": "samplers",
    "integration_lag": "diagnostics",
    "nn_distance": "diagnostics",
    "velocity_ratio": "diagnostics",
    "mean_and_se": "seeds",
    "merge_seeds": "seeds",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module = importlib.import_module(f"icml26.velocity_deficit.{_WHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'icml26.velocity_deficit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
