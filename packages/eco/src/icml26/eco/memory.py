"""Static memory accounting, measured from the tensors a training setup actually holds.

"Static" memory is what persists between steps: weights (in whatever form they are stored),
master copies and optimizer states. It is measured by walking the model's parameters and the
optimizer's state and summing the bytes of their storages (each storage counted once), never
from a bytes-per-parameter formula. A :class:`~icml26.eco.qweight.QuantizedWeight` parameter
counts its codes and scales (the same tensors as the optimizer state's ``qdata``/``qscale``,
counted once); a dense parameter counts its own bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import torch
from torch.optim import Optimizer

from icml26.eco.qweight import QuantizedWeight

__all__ = ["StaticMemory", "static_memory"]

WEIGHT_KEYS = frozenset({"qdata", "qscale"})
MASTER_KEYS = frozenset({"master"})


@dataclass(frozen=True)
class StaticMemory:
    """Bytes held between steps, by role, and the number of model parameters."""

    weights: int
    master: int
    optimizer_states: int
    n_params: int

    @property
    def total(self) -> int:
        return self.weights + self.master + self.optimizer_states

    @property
    def bytes_per_param(self) -> float:
        return self.total / self.n_params if self.n_params else float("nan")

    def as_dict(self) -> dict[str, float]:
        out: dict[str, float] = {k: float(v) for k, v in asdict(self).items()}
        out["total"] = float(self.total)
        out["bytes_per_param"] = self.bytes_per_param
        return out


def _storage_key(t: torch.Tensor) -> tuple[str, int, int]:
    s = t.untyped_storage()
    return (str(t.device), s.data_ptr(), s.nbytes())


def static_memory(params: Iterable[torch.Tensor], optimizer: Optimizer | None) -> StaticMemory:
    """Measure weights + master + optimizer-state bytes of ``params`` and ``optimizer``.

    Args:
        params: the model's parameters (their storages count as weights; a quantized one
            its codes and scales).
        optimizer: its state tensors count as weights (``qdata``/``qscale``), master
            (``master``) or optimizer states (everything else: moments, step counters).
    """
    seen: set[tuple[str, int, int]] = set()
    totals = {"weights": 0, "master": 0, "optimizer_states": 0}

    def add(role: str, t: torch.Tensor) -> None:
        key = _storage_key(t)
        if key[2] == 0 or key in seen:
            return
        seen.add(key)
        totals[role] += key[2]

    params = list(params)
    n_params = sum(p.numel() for p in params)  # logical sizes, quantized or not
    for p in params:
        if isinstance(p, QuantizedWeight):  # its codes and scales are all it holds
            add("weights", p.codes)
            add("weights", p.scale)
        else:
            add("weights", p)
    if optimizer is not None:
        for state in optimizer.state.values():
            for key, value in state.items():
                if not isinstance(value, torch.Tensor):
                    continue
                role = (
                    "weights"
                    if key in WEIGHT_KEYS
                    else "master"
                    if key in MASTER_KEYS
                    else "optimizer_states"
                )
                add(role, value)
    return StaticMemory(n_params=n_params, **totals)
