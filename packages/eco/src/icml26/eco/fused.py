"""An opt-in compiled ECO step for FP8 round-to-nearest weights: one ``torch.compile`` call
per bucket (``ECOAdamW(..., fused=True)``).

The batched eager step (:mod:`icml26.eco.foreach`) makes about fifteen elementwise passes per
weight, each a separate kernel (the moments, the denominator, decoding the e4m3 bytes, the
update, the scale, the float8 cast, decoding the new bytes, the error, the injection), against
the seven of ``torch.optim.AdamW``; run over cache-sized slices it costs about 1.3-1.6x
AdamW's step on the CPU (the reference's bits). Here the whole bucket (every parameter with the same format, dtype, device and
step count) is one compiled graph with static shapes: per weight, inductor fuses the moments,
denominator, decode, update and maximum into one loop and the scale, float8 cast, decode,
error and injection into another, and the bucket costs one Python call.

Equality with the reference (tested): the graph spells out the reference's operations in its
order (``lerp``'s small-weight formula, ``(value · t1) / t2`` for ``addcdiv``, decoding by
torch's own float8 cast, whose values are the e4m3 table's), and inductor's C++ keeps IEEE
float semantics; but ATen's vectorised ``lerp`` and ``addcmul`` are fused multiply-adds, which
inductor's C++ backend does not emit, and ATen's CPU ``sqrt`` is not correctly rounded where
compiled code's is. So moments differ from the reference's by an ulp in some elements, a
weight on a rounding boundary can take the neighbouring code, and trajectories agree to float32
rounding, not to the bit. Two bit-exact variants were measured and dropped (quick bench,
RESULTS.md): the moments, ``√v`` and the injection left eager (2.13x AdamW's step: the errors
are a bucket-sized temporary), and the moments and ``√v`` eager with the injection compiled
(1.50x; also not bit-exact).

The first step of a bucket compiles (tens of seconds on a CPU; inductor caches the kernels on
disk for later runs); a C++ compiler (CPU) or Triton (CUDA) must be installed, else the same
graph runs eagerly (a warning). A bucket of new shapes compiles again.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch._dynamo.exc import BackendCompilerFailed, FailOnRecompileLimitHit

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


def _bucket(
    grads: list[torch.Tensor],
    exp_avg: list[torch.Tensor],
    exp_avg_sq: list[torch.Tensor],
    codes: list[torch.Tensor],
    scales: list[torch.Tensor],
    k: torch.Tensor,
    decay: bool,
    inject: bool,
) -> None:
    """The step of every weight of a bucket, in place (``k``: float32 ``[1-β1, β2, 1-β2,
    ε√(1-β2^t), 1-ηλ, step size, injection value]``)."""
    for g_, m_, v_, c, s in zip(grads, exp_avg, exp_avg_sq, codes, scales, strict=True):
        n = s.numel()
        g, m, v = g_.reshape(-1), m_.view(-1), v_.view(-1)
        m_new = m + k[0] * (g - m)  # m.lerp_(g, 1-β1) (ATen: an FMA)
        v_new = v * k[1] + k[2] * g * g  # v.mul_(β2).addcmul_(g, g, value=1-β2) (ATen: an FMA)
        denom = torch.sqrt(v_new) + k[3]  # adamw_denominators (ATen's sqrt: not correctly rounded)
        w = (c.view(torch.float8_e4m3fn).to(torch.float32).view(n, -1) * s.view(n, 1)).view(-1)
        if decay:
            w = w * k[4]
        w = w + k[5] * m_new / denom  # w.addcdiv_(m, denom, value=step size): (k·m)/d
        groups = w.view(n, -1)
        if n == 1:
            lo, hi = (t.reshape(1, 1) for t in torch.aminmax(groups))
        else:
            lo, hi = torch.aminmax(groups, dim=1, keepdim=True)
        amax = torch.maximum(hi, lo.neg())
        new = torch.where(amax > 0, amax / torch.full_like(amax, FP8_MAX), torch.ones_like(amax))
        c8 = (groups / new).to(torch.float8_e4m3fn)
        if inject:  # m.addcmul_(denom, w̃ - q(w̃), value=k) (ATen: an FMA)
            m_new = m_new + k[6] * denom * (w - (c8.to(torch.float32) * new).view(-1))
        m.copy_(m_new)
        v.copy_(v_new)
        c.copy_(c8.view(torch.uint8).view(-1))
        s.copy_(new.view(-1))


def _kernel() -> Callable[..., Any]:
    kernel = _KERNELS.get("bucket")
    if kernel is None:
        kernel = _KERNELS["bucket"] = torch.compile(_bucket, dynamic=False, fullgraph=True)
    return kernel


#: distinct buckets (shapes, weight decay on or off, injection on or off) compiled before the
#: rest run eagerly: a model has a few (one per parameter group and step count)
RECOMPILE_LIMIT = 64


def _run_bucket(*args: Any) -> None:
    """The compiled bucket step. Where compiling fails (no C++ compiler, no Triton) the same
    graph runs eagerly from then on (the same bits, at the eager step's speed), with a
    warning; past :data:`RECOMPILE_LIMIT` distinct buckets, a new one runs eagerly. Both
    failures happen before the graph runs, so no state has changed then."""
    try:
        with torch._dynamo.config.patch(recompile_limit=RECOMPILE_LIMIT):
            _kernel()(*args)
    except FailOnRecompileLimitHit:
        _bucket(*args)
    except BackendCompilerFailed as err:  # InductorError (a C++ compile error) included
        warnings.warn(
            f"fused=True could not compile its kernel ({type(err).__name__}: "
            f"{str(err).splitlines()[0] if str(err) else ''}); running the same step eagerly",
            RuntimeWarning,
            stacklevel=4,
        )
        _KERNELS["bucket"] = _bucket
        _bucket(*args)


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
        [
            1.0 - s.beta1,
            s.beta2,
            1.0 - s.beta2,
            s.eps * s.root_bc2,
            1.0 - s.lr * s.weight_decay,
            s.step_size,
            s.inject_value,
        ],
        dtype=torch.float32,
        device=device,
    )
    _run_bucket(
        b.grads, b.exp_avg, b.exp_avg_sq, b.codes, b.scales, k, bool(s.weight_decay), bool(s.inject)
    )
