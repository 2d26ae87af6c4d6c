"""Transport-geometry analogs of the KL divergence and well-posed KL-regularised control.

Public API (JAX, float64 inside every function)::

    from icml26.transport_kl import kl, wkl, kwkl, w2          # Gaussian closed forms
    from icml26.transport_kl import elliptic, flow, control, cartpole, kalman

The re-exports are lazy (PEP 562) so that ``icml26.transport_kl.paper``, which the CLI loads
for ``icml26 list``, never imports JAX. See the package README for the formulas.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "cartpole",
    "control",
    "elliptic",
    "flow",
    "gaussian",
    "kalman",
    "kl",
    "kwkl",
    "w2",
    "wkl",
]
__version__ = "0.1.0"

_FUNCTIONS = {"kl", "kwkl", "w2", "wkl"}
_MODULES = {"cartpole", "control", "elliptic", "flow", "gaussian", "kalman"}


def __getattr__(name: str) -> Any:
    if name in _FUNCTIONS:
        return getattr(importlib.import_module("icml26.transport_kl.gaussian"), name)
    if name in _MODULES:
        return importlib.import_module(f"icml26.transport_kl.{name}")
    raise AttributeError(f"module 'icml26.transport_kl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
