"""Bayesian last layers with projected NTK features (ICML 2026), in PyTorch.

Wrap any trained ``nn.Module`` whose final operation is a named ``nn.Linear``::

    from icml26.bll_ntk import NTKBLL
    post = NTKBLL(model, last_layer="head", likelihood="regression")
    post.fit(x, y, val=(x_val, y_val))   # or a DataLoader
    pred = post.predict(x_test)          # mean, epistemic var, noise

Importing this package imports neither torch nor any submodule: each name below is loaded on
first use (so ``icml26 list`` stays fast).
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; nothing is imported at run time
    from . import baselines as baselines
    from . import data as data
    from .bll import BLL as BLL
    from .bll import NTKBLL as NTKBLL
    from .config import RunConfig as RunConfig
    from .jacobians import ntk_projection as ntk_projection
    from .laplace import LastLayerLaplace as LastLayerLaplace
    from .laplace import LinearisedLaplace as LinearisedLaplace
    from .network import LastLayerError as LastLayerError
    from .network import make_mlp as make_mlp
    from .posterior import ClassificationPredictive as ClassificationPredictive
    from .posterior import RegressionPredictive as RegressionPredictive
    from .train import TrainSpec as TrainSpec
    from .train import train_classifier as train_classifier
    from .train import train_regressor as train_regressor

_EXPORTS = {
    "BLL": ".bll",
    "NTKBLL": ".bll",
    "ClassificationPredictive": ".posterior",
    "LastLayerLaplace": ".laplace",
    "LinearisedLaplace": ".laplace",
    "RegressionPredictive": ".posterior",
    "RunConfig": ".config",
    "ntk_projection": ".jacobians",
    "LastLayerError": ".network",
    "make_mlp": ".network",
    "TrainSpec": ".train",
    "train_classifier": ".train",
    "train_regressor": ".train",
}
_SUBMODULES = ("baselines", "data")

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def __getattr__(name: str) -> Any:
    if name == "__version__":
        try:
            return metadata.version("icml26-bll-ntk")
        except metadata.PackageNotFoundError:  # a source tree without an install
            return "0+unknown"
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
