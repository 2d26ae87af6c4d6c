"""ECO: an error-compensating optimizer that trains quantized weights without master weights.

Public API (torch is imported on first use of this package, never by ``icml26.eco.paper``)::

    from icml26.eco import ECOAdamW
    opt = ECOAdamW(model.parameters(), lr=1e-3, fmt="fp8", rounding="rtn")
    opt.attach(model)          # weights are dequantized into the model before each forward
    ...loss.backward(); opt.step(); opt.zero_grad()

See the README for baselines, memory accounting, DDP and checkpoints.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "ECOAdamW": "icml26.eco.optim",
    "ECOSGD": "icml26.eco.optim",
    "MasterWeightAdamW": "icml26.eco.optim",
    "MasterWeightSGD": "icml26.eco.optim",
    "NonFiniteGradientError": "icml26.eco.optim",
    "QuantizedOptimizer": "icml26.eco.optim",
    "QuantFormat": "icml26.eco.quantize",
    "QTensor": "icml26.eco.quantize",
    "StaticMemory": "icml26.eco.memory",
    "static_memory": "icml26.eco.memory",
    "make_optimizer": "icml26.eco.schemes",
    "parse_scheme": "icml26.eco.schemes",
    "SCHEMES": "icml26.eco.schemes",
    "TinyLM": "icml26.eco.models",
    "LMConfig": "icml26.eco.models",
    "MLP": "icml26.eco.models",
    "ECOConfig": "icml26.eco.config",
    "BenchConfig": "icml26.eco.config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the public objects lazily (``icml26.eco`` imports without loading torch)."""
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'icml26.eco' has no attribute {name!r}")
