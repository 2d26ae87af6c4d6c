"""ECO: an error-compensating optimizer that trains quantized weights without master weights.

Public API (torch is imported on first use of a name, never by ``icml26.eco.paper``)::

    from icml26.eco import ECOAdamW
    opt = ECOAdamW(model, lr=1e-3, fmt="fp8")   # the model's matrices become FP8 codes
    loss.backward(); opt.step(); opt.zero_grad()
    torch.save(model.state_dict(), "ckpt.pt")   # dense weights, as always

See the README for the baselines, memory accounting, DDP and checkpoints.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("icml26-eco")
except PackageNotFoundError:  # a source tree
    __version__ = "0+unknown"

_EXPORTS = {
    "ECOAdamW": "icml26.eco.optim",
    "ECOSGD": "icml26.eco.optim",
    "MasterWeightAdamW": "icml26.eco.optim",
    "MasterWeightSGD": "icml26.eco.optim",
    "NonFiniteGradientError": "icml26.eco.optim",
    "QuantizedWeight": "icml26.eco.qweight",
    "dense_state_dict": "icml26.eco.qweight",
    "QuantFormat": "icml26.eco.quantize",
    "parameter_roles": "icml26.eco.roles",
    "role_groups": "icml26.eco.roles",
    "static_memory": "icml26.eco.memory",
    "peak_memory": "icml26.eco.memory",
    "make_optimizer": "icml26.eco.schemes",
    "RunConfig": "icml26.eco.config",
    "BenchConfig": "icml26.eco.config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the public objects lazily (``icml26.eco`` imports without loading torch).

    Args:
        name: an exported name.

    Returns:
        The object.

    Raises:
        AttributeError: a name this package does not export.
    """
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'icml26.eco' has no attribute {name!r}")
