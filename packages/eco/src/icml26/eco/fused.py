"""An opt-in compiled ECO step for FP8 round-to-nearest weights: one ``torch.compile`` call
per bucket (``ECOAdamW(..., fused=True)``).

The batched eager step (:mod:`icml26.eco.foreach`) makes about fifteen elementwise passes per
weight, each a separate kernel (the moments, the denominator, decoding the e4m3 bytes, the
update, the scale, the float8 cast, decoding the new bytes, the error, the injection), against
the seven of ``torch.optim.AdamW``: on the CPU that is about twice AdamW's step time whatever
the batching. Compiled, the whole bucket (every parameter with the same format, dtype, device
and step count) is one graph with static shapes: per weight, inductor fuses the passes before
the scale (moments, denominator, decode, update, the maximum) into one loop and those after it
(cast, decode, error, injection, the stores) into another, with one Python call for the
bucket.

The graph spells out the reference's operations in the reference's order (``lerp`` with its
small-weight formula, ``(value · t1) / t2`` for ``addcdiv``, ``(value · t1) · t2`` for
``addcmul``, decoding by torch's own float8 cast, whose values are the e4m3 table's), and the
C++ code inductor emits keeps IEEE float semantics (no contraction into fused multiply-adds),
so on the CPU the step is meant to give the reference's bits; the tests compare the two over
several steps. Only the lerp of the first moment is left to the eager ``torch._foreach_lerp_``:
ATen's vectorised lerp is a fused multiply-add, which inductor's C++ backend does not emit.

The first step of a bucket compiles (tens of seconds on a CPU; inductor caches the kernels on
disk for later runs); a C++ compiler (CPU) or Triton (CUDA) must be installed. A bucket of new
shapes compiles again (dynamo's recompile limit then falls back to running the same graph
eagerly).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from icml26.eco.foreach import AdamWSettings, QuantizedBucket
from icml26.eco.quantize import FP8_MAX, QuantFormat

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


def _fma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """``a · b + c`` as the fused multiply-add of ATen's vectorised ``addcmul`` on the CPU:
    the float64 product of two float32 numbers is exact; the float64 sum is then rounded to
    float32 (a second rounding that differs from a single one only when the float64 sum lands
    exactly on a float32 midpoint it did not start on, about once in 2^29)."""
    return (a.double() * b.double() + c.double()).float()


def _bucket(
    roots: list[torch.Tensor],
    exp_avg: list[torch.Tensor],
    codes: list[torch.Tensor],
    scales: list[torch.Tensor],
    k: torch.Tensor,
    decay: bool,
    inject: bool,
) -> None:
    """Update, re-quantize and inject for every weight of a bucket, in place (``roots``: the
    eager ``√v`` of the updated second moments; ``exp_avg``: the updated first moments;
    ``k``: float32 ``[ε√(1-β2^t), 1-ηλ, step size, injection value]``)."""
    for r, m_, c, s in zip(roots, exp_avg, codes, scales, strict=True):
        n = s.numel()
        m = m_.view(-1)
        denom = r.view(-1) + k[0]  # adamw_denominators
        w = (c.view(torch.float8_e4m3fn).to(torch.float32).view(n, -1) * s.view(n, 1)).view(-1)
        if decay:
            w = w * k[1]
        w = w + k[2] * m / denom  # w.addcdiv_(m, denom, value=step size): (k·m)/d
        groups = w.view(n, -1)
        if n == 1:
            lo, hi = (t.reshape(1, 1) for t in torch.aminmax(groups))
        else:
            lo, hi = torch.aminmax(groups, dim=1, keepdim=True)
        amax = torch.maximum(hi, lo.neg())
        new = torch.where(amax > 0, amax / torch.full_like(amax, FP8_MAX), torch.ones_like(amax))
        c8 = (groups / new).to(torch.float8_e4m3fn)
        if inject:  # m.addcmul_(denom, w̃ - q(w̃), value=k): fma(k·d, e, m)
            deq = (c8.to(torch.float32) * new).view(-1)
            m.copy_(_fma(k[3] * denom, w - deq, m))
        c.copy_(c8.view(torch.uint8).view(-1))
        s.copy_(new.view(-1))


def _kernel() -> Callable[..., Any]:
    kernel = _KERNELS.get("bucket")
    if kernel is None:
        kernel = _KERNELS["bucket"] = torch.compile(_bucket, dynamic=False, fullgraph=True)
    return kernel


def adamw_fp8_fused_step(b: QuantizedBucket, fmt: QuantFormat, s: AdamWSettings) -> None:
    """The AdamW step of :func:`~icml26.eco.foreach.adamw_quantized_step` for FP8
    round-to-nearest weights, through one compiled call per bucket.

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
    k = torch.tensor(
        [s.eps * s.root_bc2, 1.0 - s.lr * s.weight_decay, s.step_size, s.inject_value],
        dtype=torch.float32,
        device=device,
    )
    torch._foreach_lerp_(b.exp_avg, b.grads, 1.0 - s.beta1)
    torch._foreach_mul_(b.exp_avg_sq, s.beta2)
    torch._foreach_addcmul_(b.exp_avg_sq, b.grads, b.grads, value=1.0 - s.beta2)
    roots = torch._foreach_sqrt(b.exp_avg_sq)
    _kernel()(roots, b.exp_avg, b.codes, b.scales, k, bool(s.weight_decay), bool(s.inject))
