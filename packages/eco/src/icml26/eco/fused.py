"""An opt-in fused ECO step for FP8 round-to-nearest weights: two ``torch.compile`` kernels
per parameter (``ECOAdamW(..., fused=True)``).

The batched eager step (:mod:`icml26.eco.foreach`) makes about fifteen elementwise passes per
weight, each a separate kernel (decoding the e4m3 bytes, the update, the scale, the float8
cast, decoding the new bytes, the error, the injection), against AdamW's eight: on the CPU
that is about twice AdamW's step time whatever the batching. Compiled, the passes before the
scale (moments, decode, update) fuse into one loop and those after it (scale, cast, decode,
error, injection) into another, which brings the step to about AdamW's time.

The arithmetic is the reference's, but the compiler orders and fuses the float operations
its own way, so the result agrees with the reference to float32 rounding, not to the bit: a
value sitting on a rounding boundary may land on the neighbouring e4m3 code. The first step
compiles (tens of seconds on a CPU; inductor caches the kernels on disk for later runs), and
a C++ compiler (CPU) or Triton (CUDA) must be installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from icml26.eco.foreach import AdamWSettings, QuantizedBucket
from icml26.eco.quantize import FP8_MAX, QuantFormat, fp8_table

__all__ = ["adamw_fp8_fused_step", "supports"]

_KERNELS: dict[str, Callable[..., Any]] = {}


def supports(fmt: QuantFormat, bucket: QuantizedBucket) -> bool:
    """Whether the fused step applies: FP8 round-to-nearest, ECO or naive removal, weights
    stored as quantized parameters (no master copy, no dense working copy).

    Args:
        fmt: the bucket's format.
        bucket: the bucket.

    Returns:
        True when :func:`adamw_fp8_fused_step` can run it.
    """
    return (
        fmt.kind == "fp8"
        and fmt.rounding == "rtn"
        and bucket.masters is None
        and bucket.dense is None
    )


def _update(
    g: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    codes: torch.Tensor,
    table: torch.Tensor,
    scale: torch.Tensor,
    k: dict[str, torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Moments in place; returns ``w̃`` (flat) and the denominators."""
    m.copy_(torch.lerp(m, g, k["one_minus_b1"]))
    v.copy_(v * k["b2"] + g * g * k["one_minus_b2"])
    denom = torch.sqrt(v) + k["eps_r"]
    w = (table[codes.to(torch.int32)].view(scale.shape[0], -1) * scale).view(-1)
    return w * k["decay"] + k["step_size"] * m / denom, denom


def _requantize(
    w: torch.Tensor,
    denom: torch.Tensor,
    m: torch.Tensor,
    codes: torch.Tensor,
    scale: torch.Tensor,
    inject: torch.Tensor,
) -> None:
    """Codes of ``w̃`` on ``scale`` (in place); ``m += inject · denom · (w̃ - q(w̃))``."""
    groups = w.view(scale.shape[0], -1)
    c8 = (groups / scale).to(torch.float8_e4m3fn)
    deq = (c8.to(torch.float32) * scale).view(-1)
    m.copy_(m + inject * denom * (w - deq))
    codes.copy_(c8.view(torch.uint8).view(-1))


def _kernel(name: str) -> Callable[..., Any]:
    kernel = _KERNELS.get(name)
    if kernel is None:
        fn = {"update": _update, "requantize": _requantize}[name]
        kernel = _KERNELS[name] = torch.compile(fn, dynamic=True, fullgraph=True)
    return kernel


def adamw_fp8_fused_step(b: QuantizedBucket, fmt: QuantFormat, s: AdamWSettings) -> None:
    """The AdamW step of :func:`~icml26.eco.foreach.adamw_quantized_step` for FP8
    round-to-nearest weights, through two compiled kernels per parameter.

    Args:
        b: the bucket (written in place).
        fmt: its format (see :func:`supports`).
        s: the step's settings.

    Raises:
        ValueError: a bucket :func:`supports` refuses.
    """
    if not supports(fmt, b):
        raise ValueError("the fused step takes FP8 round-to-nearest quantized parameters only")
    device = b.grads[0].device

    def scalar(x: float) -> torch.Tensor:
        return torch.tensor(x, dtype=torch.float32, device=device)

    k = {
        "one_minus_b1": scalar(1.0 - s.beta1),
        "b2": scalar(s.beta2),
        "one_minus_b2": scalar(1.0 - s.beta2),
        "eps_r": scalar(s.eps * s.root_bc2),
        "decay": scalar(1.0 - s.lr * s.weight_decay),
        "step_size": scalar(s.step_size),
    }
    inject = scalar(s.inject_value)
    table = fp8_table(device)
    for i in range(len(b.shapes)):
        scale = b.scales[i].view(-1, 1)
        w, denom = _kernel("update")(
            b.grads[i].reshape(-1),
            b.exp_avg[i].view(-1),
            b.exp_avg_sq[i].view(-1),
            b.codes[i],
            table,
            scale,
            k,
        )
        groups = w.view(scale.shape[0], -1)
        if fmt.group_size is None:
            lo, hi = (t.reshape(1, 1) for t in torch.aminmax(groups))
        else:
            lo, hi = torch.aminmax(groups, dim=1, keepdim=True)
        new = torch.maximum(hi, lo.neg())
        new = torch.where(new > 0, new / FP8_MAX, torch.ones_like(new))
        _kernel("requantize")(w, denom, b.exp_avg[i].view(-1), b.codes[i], new, inject)
        b.scales[i].copy_(new.view(-1))
