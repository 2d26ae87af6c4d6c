"""Static memory accounting, measured from the tensors a training setup actually holds.

"Static" memory is what persists between steps: weights (in whatever form they are stored),
master copies and optimizer states. It is measured by walking the model's parameters and the
optimizer's state and summing the bytes of their storages (each storage counted once), never
from a bytes-per-parameter formula. A :class:`~icml26.eco.qweight.QuantizedWeight` parameter
counts its codes and scales (the same tensors as the optimizer state's ``qdata``/``qscale``,
counted once); a dense parameter counts its own bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch.optim import Optimizer

from icml26.eco.qweight import QuantizedWeight

__all__ = ["PeakMemory", "StaticMemory", "peak_memory", "static_memory"]

WEIGHT_KEYS = frozenset({"qdata", "qscale"})
MASTER_KEYS = frozenset({"master"})


@dataclass(frozen=True)
class StaticMemory:
    """Bytes held between steps, by role, and the number of model parameters.

    Attributes:
        weights: the stored weights (codes and scales, or dense tensors; dense working copies
            of quantized parameters included).
        master: FP32 master copies (master-weight baselines), else 0.
        optimizer_states: moments and other tensors of the optimizer state (codes held in
            the state are counted once, under ``weights``).
        n_params: the model's parameters (elements).
    """

    weights: int
    master: int
    optimizer_states: int
    n_params: int

    @property
    def total(self) -> int:
        """All bytes held between steps: weights, master copies and optimizer state."""
        return self.weights + self.master + self.optimizer_states

    @property
    def bytes_per_param(self) -> float:
        """``total / n_params`` (``nan`` for a model without parameters)."""
        return self.total / self.n_params if self.n_params else float("nan")

    def as_dict(self) -> dict[str, float]:
        """The fields with ``total`` and ``bytes_per_param``, as floats.

        Returns:
            ``{"weights", "master", "optimizer_states", "n_params", "total",
            "bytes_per_param"}`` -> value.
        """
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

    Returns:
        The bytes by role and the number of parameters (logical sizes).
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


@dataclass(frozen=True)
class PeakMemory:
    """Memory over one training step (forward, backward, optimizer step).

    Attributes:
        static: bytes held before the step (weights, master copies, optimizer state), as
            :func:`static_memory` measures them.
        transient: the largest number of bytes allocated during the step and not yet freed
            (activations, dequantized weight copies, gradients, the step's temporaries).
        source: how ``transient`` was measured (``"cuda allocator"`` or ``"cpu profiler"``).
    """

    static: int
    transient: int
    source: str

    @property
    def peak(self) -> int:
        """``static + transient``: the step's peak memory."""
        return self.static + self.transient


def _cpu_transient_peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """Run ``fn`` under the profiler's memory tracking: the largest sum of the allocations made
    during ``fn`` that were not yet freed (every CPU allocation, temporaries of kernels
    included)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = fn()
    events = [
        e
        for e in prof.profiler.kineto_results.events()  # type: ignore[union-attr]
        if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU
    ]
    live = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        live += e.nbytes()
        peak = max(peak, live)
    return out, peak


def peak_memory(
    fn: Callable[[], Any],
    params: Iterable[torch.Tensor],
    optimizer: Optimizer | None,
    *,
    device: torch.device | str = "cpu",
) -> tuple[Any, PeakMemory]:
    """Run ``fn`` (one training step) and measure its peak memory.

    On CUDA the transient part is ``torch.cuda.max_memory_allocated`` above the memory
    allocated before the step; on the CPU it comes from the profiler's record of every
    allocation and free during the step (memory tracked by the profiler only; a tensor freed
    during the step that existed before it is not subtracted, so the figure errs high).

    Args:
        fn: the step (called once).
        params: the model's parameters.
        optimizer: its optimizer.
        device: where the step runs.

    Returns:
        ``fn``'s result and the :class:`PeakMemory`.
    """
    params = list(params)
    static = static_memory(params, optimizer).total
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        out = fn()
        torch.cuda.synchronize(device)
        transient = torch.cuda.max_memory_allocated(device) - before
        return out, PeakMemory(static, int(transient), "cuda allocator")
    out, transient = _cpu_transient_peak(fn)
    return out, PeakMemory(static, int(transient), "cpu profiler")
