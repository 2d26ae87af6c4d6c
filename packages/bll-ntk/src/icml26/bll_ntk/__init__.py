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

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

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

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, submodules=["baselines", "data"])
