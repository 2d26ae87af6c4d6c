"""incTNP: incremental transformer neural processes (causal masking, KV caching,
autoregressive training), with TNP-D and exact-GP baselines.

>>> from icml26.inctnp import ModelConfig, build_model
>>> model = build_model(ModelConfig(dim_x=1, width=32, layers=2, heads=4, causal=True))
>>> stream = model.stream().condition(xc, yc)      # [B, N, 1] tensors
>>> stream.update(x_new, y_new)                    # O(m N): cached keys/values
>>> mean, std = stream.predict(xt)

Importing this package imports neither torch nor a submodule: each name is loaded on first
use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:  # what type checkers see; nothing is imported at run time
    from . import data as data
    from .checkpoint import load_model as load_model
    from .checkpoint import save_model as save_model
    from .config import RunConfig as RunConfig
    from .evaluation import exchangeability_kl as exchangeability_kl
    from .evaluation import update_latency as update_latency
    from .gp import GPKernel as GPKernel
    from .gp import gp_predict as gp_predict
    from .model import KVCache as KVCache
    from .model import ModelConfig as ModelConfig
    from .model import NeuralProcess as NeuralProcess
    from .model import Stream as Stream
    from .model import build_model as build_model
    from .training import TrainConfig as TrainConfig
    from .training import train as train

_EXPORTS = {
    "load_model": ".checkpoint",
    "save_model": ".checkpoint",
    "RunConfig": ".config",
    "exchangeability_kl": ".evaluation",
    "update_latency": ".evaluation",
    "GPKernel": ".gp",
    "gp_predict": ".gp",
    "KVCache": ".model",
    "ModelConfig": ".model",
    "NeuralProcess": ".model",
    "Stream": ".model",
    "build_model": ".model",
    "TrainConfig": ".training",
    "train": ".training",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, submodules=["data"])
