"""Bayesian last layers with projected NTK features (ICML 2026), in PyTorch.

Wrap any trained ``nn.Module`` whose final operation is a named ``nn.Linear``::

    from icml26.bll_ntk import NTKBLL
    post = NTKBLL(model, last_layer="head", likelihood="regression").fit(x, y)
    pred = post.predict(x_test)   # mean, epistemic var, noise

See :mod:`icml26.bll_ntk.bll` for the method and the baselines.
"""

from icml26.bll_ntk.baselines import DeepEnsemble, MCDropout
from icml26.bll_ntk.bll import (
    BLL,
    NTKBLL,
    ClassificationPredictive,
    LastLayerLaplace,
    LinearisedLaplace,
    RegressionPredictive,
)
from icml26.bll_ntk.gaussian import BayesLinReg
from icml26.bll_ntk.glm import LastLayerGLM, predictive_probs
from icml26.bll_ntk.jacobians import NTKProjection, jacobian, ntk_projection
from icml26.bll_ntk.network import LastLayerError, LastLayerModel, make_mlp
from icml26.bll_ntk.train import TrainSpec, train_classifier, train_regressor

__all__ = [
    "BLL",
    "NTKBLL",
    "BayesLinReg",
    "ClassificationPredictive",
    "DeepEnsemble",
    "LastLayerError",
    "LastLayerGLM",
    "LastLayerLaplace",
    "LastLayerModel",
    "LinearisedLaplace",
    "MCDropout",
    "NTKProjection",
    "RegressionPredictive",
    "TrainSpec",
    "jacobian",
    "make_mlp",
    "ntk_projection",
    "predictive_probs",
    "train_classifier",
    "train_regressor",
]
