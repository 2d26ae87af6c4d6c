"""incTNP: incremental transformer neural processes (causal masking, KV caching,
autoregressive training), with TNP-D and exact-GP baselines.

>>> from icml26.inctnp import ModelConfig, build_model
>>> model = build_model(ModelConfig(dim_x=1, width=32, layers=2, heads=4, causal=True))
>>> stream = model.stream().condition(xc, yc)      # [B, N, 1] tensors
>>> stream.update(x_new, y_new)                    # O(m N): cached keys/values
>>> mean, std = stream.predict(xt)
"""

from icml26.inctnp.checkpoint import load_model, save_model
from icml26.inctnp.data import (
    GPSource,
    TabularSource,
    TaskBatch,
    TemperatureSource,
    load_csv_table,
    make_source,
)
from icml26.inctnp.evaluation import (
    exchangeability_kl,
    implicit_bayes_gap,
    ordered_marginals,
    predictive_scores,
    scaling_exponent,
    update_latency_ms,
    update_memory,
)
from icml26.inctnp.gp import GPKernel, gp_log_marginal, gp_predict
from icml26.inctnp.likelihood import gaussian_nll
from icml26.inctnp.model import KVCache, ModelConfig, NeuralProcess, Stream, build_model
from icml26.inctnp.train import TrainConfig, autoregressive_loss, split_loss, train

__all__ = [
    "GPKernel",
    "GPSource",
    "KVCache",
    "ModelConfig",
    "NeuralProcess",
    "Stream",
    "TabularSource",
    "TaskBatch",
    "TemperatureSource",
    "TrainConfig",
    "autoregressive_loss",
    "build_model",
    "exchangeability_kl",
    "gaussian_nll",
    "gp_log_marginal",
    "gp_predict",
    "implicit_bayes_gap",
    "load_csv_table",
    "load_model",
    "make_source",
    "ordered_marginals",
    "predictive_scores",
    "save_model",
    "scaling_exponent",
    "split_loss",
    "train",
    "update_latency_ms",
    "update_memory",
]
