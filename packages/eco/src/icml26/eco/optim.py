"""Optimizers whose only copy of the weights is quantized: ECO, naive removal, master weights.

All optimizers here are ``torch.optim.Optimizer`` subclasses. For every parameter in a group
with a weight format (``fmt="fp8"`` or ``"int4"``) the optimizer state holds the weights as
``qdata`` (``uint8`` codes) and ``qscale`` (``float32`` scales); see
:mod:`icml26.eco.quantize`. The parameter tensor the model computes with is only a *working
buffer*: with ``release_weights=True`` (default) its data is replaced by an empty tensor
after every step (same Parameter object, dtype and device) and re-filled with
``dequantize(qdata, qscale)`` by :meth:`QuantizedOptimizer.materialize`, which
:meth:`QuantizedOptimizer.attach` runs as a forward pre-hook. Between steps the process then
holds, per weight, 1 byte (FP8) or ½ byte (INT4) plus the optimizer's moments.

Three update rules share this storage (paper: Nikdan et al., ICML 2026, "ECO"):

* **ECO** (``ECOAdamW``, ``ECOSGD``): take the step from the quantized weights
  ``ŵ_t``, giving the high-precision iterate ``w̃ = ŵ_t - η u_t`` (never stored), quantize it,
  ``ŵ_{t+1} = q(w̃)``, and push the quantization error ``e = w̃ - ŵ_{t+1}`` into the momentum
  so that the following steps re-apply it. Requiring the ECO iterates to follow the
  master-weight iterates ``W* = ŵ + e`` and using the paper's approximation that consecutive
  errors are alike (``e_{t-1} ≈ e_t``, which is what spares the extra error buffer) gives

  - SGD with momentum (``b ← β b + g``, ``w ← w − η b``):
    ``b ← b + (1 − 1/β) e / η``;
  - AdamW (``m ← β1 m + (1−β1) g``, ``w ← (1−ηλ) w − η m̂ / (√v̂ + ε)``):
    ``m ← m + (1 − ηλ)(1 − 1/β1)(1 − β1^t)(√v̂_t + ε) ⊙ e / η``,

  i.e. the injected term re-applies ``e`` over the geometric tail of the momentum
  (``Σ_k β^k (1-β)/β = 1``). Momentum ``β = 0`` leaves nothing to inject into: refused.
* **naive removal** (``error_feedback=False``): the same, without the injection; updates
  smaller than half a grid step are lost, so the stationary error grows like ``1/η``.
* **master weights** (``MasterWeightAdamW``, ``MasterWeightSGD``): an FP32 ``master`` copy takes
  the standard update; the quantized working weights are ``q(master)`` (the baseline ECO
  removes; it costs 4 extra bytes per weight).

Stochastic rounding draws from a generator seeded by ``(seed, parameter index, step)``, so
data-parallel replicas round identically and a resumed run repeats the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

import torch
from torch import nn
from torch.optim import Optimizer

from icml26.eco.quantize import QTensor, QuantFormat

__all__ = [
    "ECOSGD",
    "ECOAdamW",
    "MasterWeightAdamW",
    "MasterWeightSGD",
    "NonFiniteGradientError",
    "QuantizedOptimizer",
]

Mode = Literal["eco", "naive", "master"]
ScaleOrder = Literal["current", "delayed", "inject_then_rescale"]
SCALE_ORDERS: tuple[str, ...] = ("current", "delayed", "inject_then_rescale")
SUPPORTED_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
_QUANT_KEYS = ("qdata", "qscale")


class NonFiniteGradientError(FloatingPointError):
    """A gradient holds NaN or infinity; the step is refused before any weight changes."""


def _fmt_of(group: dict[str, Any]) -> QuantFormat | None:
    if group["fmt"] is None:
        return None
    return QuantFormat(group["fmt"], group["group_size"], group["rounding"])


def _sr_seed(seed: int, index: int, step: int) -> int:
    """A 63-bit seed from ``(seed, parameter index, step)`` (splitmix-style mixing)."""
    z = (seed * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9 + step * 0x94D049BB133111EB) & (
        (1 << 64) - 1
    )
    z ^= z >> 31
    z = (z * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z ^= z >> 29
    return z & ((1 << 63) - 1)


class QuantizedOptimizer(Optimizer):
    """Base class: quantized weight storage, materialize/release, checks, state_dict round trip.

    Subclasses implement :meth:`_direction` (the optimizer's update) and :meth:`_inject` (ECO's
    momentum correction). Parameter groups take ``fmt`` (``"fp8"``, ``"int4"`` or ``None`` for a
    group kept in the parameter's own dtype, e.g. norms you do not want quantized),
    ``group_size`` and ``rounding`` (``"rtn"``/``"sr"``) besides the optimizer's own options.
    """

    def __init__(
        self,
        params: Iterable[Any],
        defaults: dict[str, Any],
        *,
        mode: Mode,
        release_weights: bool = True,
        seed: int = 0,
        check_finite: bool = True,
        scale_order: ScaleOrder = "current",
        error_buffer: bool = False,
    ) -> None:
        if mode not in ("eco", "naive", "master"):
            raise ValueError(f"mode must be 'eco', 'naive' or 'master', got {mode!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        if scale_order not in SCALE_ORDERS:
            raise ValueError(f"scale_order must be one of {SCALE_ORDERS}, got {scale_order!r}")
        if scale_order != "current" and mode == "master":
            raise ValueError("scale_order applies to ECO and naive removal, not master weights")
        if error_buffer and mode != "eco":
            raise ValueError("error_buffer is a form of ECO's error feedback: needs mode 'eco'")
        self.mode: Mode = mode
        self.scale_order: ScaleOrder = scale_order
        self.error_buffer = bool(error_buffer)
        self.release_weights = bool(release_weights)
        self.seed = seed
        self.check_finite = bool(check_finite)
        self._index: dict[int, int] = {}
        self._shapes: dict[int, torch.Size] = {}
        # one stochastic-rounding generator per device, re-seeded per (parameter, step): the
        # same random stream as a fresh generator each time, without allocating one per call
        self._generators: dict[torch.device, torch.Generator] = {}
        super().__init__(params, defaults)  # calls add_param_group for each group

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group, validate it and move its weights into quantized storage."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        fmt = _fmt_of(group)  # validates fmt/group_size/rounding
        self._check_group(group)
        for p in group["params"]:
            self._check_param(p, fmt)
        for p in group["params"]:
            self._index[id(p)] = len(self._index)
            self._shapes[id(p)] = torch.Size(p.shape)
            if fmt is not None:
                self._init_storage(p, fmt)
        if self.release_weights:
            self.release()

    # -- validation ---------------------------------------------------------------------------
    def _check_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        if isinstance(lr, torch.Tensor):
            raise TypeError("tensor learning rates are not supported; pass a float")
        if not (isinstance(lr, int | float) and math.isfinite(lr) and lr > 0):
            raise ValueError(f"learning rate must be a positive finite number, got {lr!r}")
        wd = group.get("weight_decay", 0.0)
        if not (math.isfinite(wd) and wd >= 0):
            raise ValueError(f"weight_decay must be >= 0, got {wd!r}")

    def _check_param(self, p: torch.Tensor, fmt: QuantFormat | None) -> None:
        if p.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"unsupported parameter dtype {p.dtype} (shape {tuple(p.shape)}); supported: "
                "float32, bfloat16, float16"
            )
        if fmt is None:
            return
        fmt.check(p.shape)

    def _all_params(self) -> Iterator[torch.Tensor]:
        for group in self.param_groups:
            yield from group["params"]

    # -- storage ------------------------------------------------------------------------------
    def _init_storage(self, p: torch.Tensor, fmt: QuantFormat) -> None:
        state = self.state[p]
        if "qdata" in state:
            return
        with torch.no_grad():
            w = p.detach().float()
            if self.mode == "master":
                state["master"] = w.clone()
            gen = self._generator(p, 0) if fmt.rounding == "sr" else None
            q = fmt.quantize(w, generator=gen)
        state["qdata"], state["qscale"] = q.data, q.scale
        if self.scale_order == "delayed":
            state["next_scale"] = q.scale.clone()
        if not self.release_weights:
            with torch.no_grad():
                p.copy_(fmt.dequantize(q, p.dtype))

    def _generator(self, p: torch.Tensor, step: int) -> torch.Generator:
        """The device's generator, seeded for ``(self.seed, p's index, step)``."""
        gen = self._generators.get(p.device)
        if gen is None:
            gen = self._generators[p.device] = torch.Generator(device=p.device)
        gen.manual_seed(_sr_seed(self.seed, self._index[id(p)], step))
        return gen

    def qtensor(self, p: torch.Tensor) -> QTensor:
        """The quantized storage of ``p``."""
        state = self.state[p]
        if "qdata" not in state:
            raise KeyError("this parameter is not stored quantized by this optimizer")
        return QTensor(state["qdata"], state["qscale"], self._shapes[id(p)])

    def dequantized(self, p: torch.Tensor) -> torch.Tensor:
        """``p``'s stored weights in float32 (for a full-precision group: ``p`` itself)."""
        group = self._group_of(p)
        fmt = _fmt_of(group)
        if fmt is None:
            return p.detach().float()
        return fmt.dequantize(self.qtensor(p))

    def _group_of(self, p: torch.Tensor) -> dict[str, Any]:
        for group in self.param_groups:
            if any(q is p for q in group["params"]):
                return group
        raise KeyError("parameter not managed by this optimizer")

    def _quantized_params(self) -> Iterator[tuple[torch.Tensor, QuantFormat]]:
        for group in self.param_groups:
            fmt = _fmt_of(group)
            if fmt is None:
                continue
            for p in group["params"]:
                yield p, fmt

    def param_shape(self, p: torch.Tensor) -> torch.Size:
        """``p``'s logical shape (also while released, when ``p`` itself is empty)."""
        return self._shapes[id(p)]

    def is_released(self, p: torch.Tensor) -> bool:
        """True when ``p`` holds no values (they live only in the quantized state)."""
        return p.numel() == 0 and math.prod(self._shapes[id(p)]) > 0

    @torch.no_grad()
    def materialize(self) -> None:
        """Fill every released parameter with its dequantized weights (idempotent)."""
        for p, fmt in self._quantized_params():
            if self.is_released(p):
                p.data = fmt.dequantize(self.qtensor(p), p.dtype).to(p.device)

    @torch.no_grad()
    def release(self) -> None:
        """Drop the values of every quantized parameter (the quantized state stays).

        The parameter object, its dtype, device and autograd identity are kept (so hooks,
        DDP and the optimizer still see the same tensor); its data becomes an empty tensor.
        """
        for p, _ in self._quantized_params():
            if not self.is_released(p):
                p.data = torch.empty(0, dtype=p.dtype, device=p.device)

    def attach(self, module: nn.Module) -> torch.utils.hooks.RemovableHandle:
        """Materialize the weights before each forward of ``module`` (a forward pre-hook)."""

        def hook(_module: nn.Module, _args: Any) -> None:
            self.materialize()

        return module.register_forward_pre_hook(hook)

    # -- the step -----------------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """One update of every parameter with a gradient; then re-quantize (and release)."""
        loss = None
        if closure is not None:
            self.materialize()
            with torch.enable_grad():
                loss = closure()
        if self.check_finite:
            self._check_finite_grads()
        for group in self.param_groups:
            fmt = _fmt_of(group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError("sparse gradients are not supported")
                self._step_param(p, p.grad.float(), group, fmt)
        if self.release_weights:
            self.release()
        return loss

    def _check_finite_grads(self) -> None:
        """Refuse the step if any gradient holds NaN/inf: one host sync for all parameters.

        The fast test reads one float per gradient, its sum, which any NaN or infinity
        reaches (``isfinite`` over every element costs ~20 elementwise passes on the CPU);
        only when a sum is not finite (a NaN/inf, or finite values overflowing) does the
        exact per-element search run, and a finite overflow then passes."""
        sums: dict[torch.device, list[torch.Tensor]] = {}
        for p in self._all_params():
            if p.grad is not None:
                sums.setdefault(p.grad.device, []).append(p.grad.sum(dtype=torch.float32))
        if not sums:
            return
        ok = [torch.isfinite(torch.stack(s)).all() for s in sums.values()]
        if bool(torch.stack([f.cpu() for f in ok]).all()):
            return
        for p in self._all_params():
            if p.grad is not None and not bool(torch.isfinite(p.grad).all()):
                raise NonFiniteGradientError(
                    f"non-finite gradient (NaN/inf) for the parameter of shape "
                    f"{tuple(self._shapes[id(p)])} at index {self._index[id(p)]}; step refused, "
                    "no weight changed"
                )

    def _step_param(
        self, p: torch.Tensor, grad: torch.Tensor, group: dict[str, Any], fmt: QuantFormat | None
    ) -> None:
        state = self.state[p]
        if fmt is None:  # full-precision group: the parameter is the storage
            w = p.detach().float().clone() if p.dtype == torch.float32 else p.detach().float()
            target = self._direction(p, grad, w, state, group)
            p.copy_(target)
            return
        # the master copy is updated in place by _direction; ECO/naive start from a fresh
        # dequantized copy of the stored weights
        w = state["master"] if self.mode == "master" else fmt.dequantize(self.qtensor(p))
        if self.error_buffer and "error" in state:  # exact error feedback: ŵ + e is W*
            w.add_(state["error"])
        target = self._direction(p, grad, w, state, group)
        gen = self._generator(p, _step_count(state)) if fmt.rounding == "sr" else None
        lost: torch.Tensor | None = None  # the error to inject when it is not w̃ − q(w̃)
        if self.scale_order == "current":  # scale from w̃, quantize, inject (the paper's order)
            q = fmt.quantize(target, generator=gen, check_finite=False)
        elif self.scale_order == "delayed":  # the scale of the previous iterate, clipping
            q = fmt.quantize(target, generator=gen, check_finite=False, scale=state["next_scale"])
            state["next_scale"] = fmt.scale_for(target)
        else:  # inject_then_rescale: quantize on the old scale, keep that error, then rescale
            q_old = fmt.quantize(target, generator=gen, check_finite=False, scale=state["qscale"])
            on_old = fmt.dequantize(q_old)
            lost = target - on_old
            q = fmt.quantize(on_old, generator=gen, check_finite=False, scale=fmt.scale_for(target))
        state["qdata"], state["qscale"] = q.data, q.scale
        if self.mode == "master" and target is not state["master"]:
            state["master"].copy_(target)
        deq = fmt.dequantize(q)
        if not self.is_released(p):
            p.copy_(deq)
        if self.mode != "eco":
            return
        error = target.sub_(deq) if lost is None else lost  # e = w̃ − q(w̃), in w̃'s buffer
        if self.error_buffer:
            state["error"] = error
        else:
            self._inject(error, state, group)

    def _direction(
        self,
        p: torch.Tensor,
        grad: torch.Tensor,
        w: torch.Tensor,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> torch.Tensor:
        """Update the optimizer state with ``grad`` and return the new float32 iterate ``w̃``.

        ``w`` is the step's own float32 copy of the weights (or the master copy, which takes
        the update anyway): implementations may update it in place and return it."""
        raise NotImplementedError(f"{type(self).__name__} must define _direction (abstract hook)")

    def _inject(self, error: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """ECO: fold the quantization error ``e = w̃ − q(w̃)`` into the momentum."""
        raise NotImplementedError(f"{type(self).__name__} must define _inject (abstract hook)")

    # -- checkpoints --------------------------------------------------------------------------
    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load, keeping the saved dtypes (``Optimizer`` would cast float state to the
        parameter's dtype), then refresh the working buffers from the loaded weights."""
        super().load_state_dict(state_dict)
        saved_groups = state_dict["param_groups"]
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            for pid, p in zip(saved["params"], group["params"], strict=True):
                for key, value in state_dict["state"].get(pid, {}).items():
                    if isinstance(value, torch.Tensor) and key != "step":
                        self.state[p][key] = value.detach().to(device=p.device).clone()
        with torch.no_grad():
            for p, fmt in self._quantized_params():
                if not self.is_released(p):
                    p.copy_(fmt.dequantize(self.qtensor(p), p.dtype))


def _step_count(state: dict[str, Any]) -> int:
    """The parameter's step count as a Python int, without reading a tensor back.

    ``state["step"]`` stays a CPU float tensor (what ``torch.optim`` stores, so checkpoints
    keep their format); ``_step`` mirrors it as an int and is rebuilt from it on load."""
    if "_step" not in state:
        state["_step"] = int(state["step"].item()) if "step" in state else 0
    return int(state["_step"])


def _advance_step(state: dict[str, Any]) -> int:
    """Count one more step of this parameter; return the new count."""
    t = _step_count(state) + 1
    state["_step"] = t
    if "step" not in state:
        state["step"] = torch.tensor(0.0)
    state["step"].fill_(float(t))
    return t


def _check_beta(name: str, beta: float, mode: Mode) -> None:
    if not (0.0 <= beta < 1.0):
        raise ValueError(f"{name} must be in [0, 1), got {beta!r}")
    if mode == "eco" and beta == 0.0:
        raise ValueError(
            f"ECO injects the quantization error into the momentum: {name} must be > 0"
        )


class _AdamWMixin(QuantizedOptimizer):
    """AdamW (decoupled weight decay, Loshchilov & Hutter) on top of the quantized storage."""

    def _direction(
        self,
        p: torch.Tensor,
        grad: torch.Tensor,
        w: torch.Tensor,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> torch.Tensor:
        beta1, beta2 = group["betas"]
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        if "exp_avg" not in state:
            state["exp_avg"] = torch.zeros_like(grad, dtype=torch.float32)
            state["exp_avg_sq"] = torch.zeros_like(grad, dtype=torch.float32)
        t = _advance_step(state)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.lerp_(grad, 1.0 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
        bc1 = 1.0 - beta1**t
        bc2 = 1.0 - beta2**t
        denom = v.sqrt().div_(math.sqrt(bc2)).add_(eps)  # as torch.optim.AdamW
        state["_denom"] = denom  # reused by _inject within this step, then dropped
        if wd:
            w.mul_(1.0 - lr * wd)
        return w.addcdiv_(m, denom, value=-lr / bc1)

    def _inject(self, error: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, _ = group["betas"]
        lr, wd = group["lr"], group["weight_decay"]
        bc1 = 1.0 - beta1 ** _step_count(state)
        coef = (1.0 - lr * wd) * (1.0 - 1.0 / beta1) * bc1 / lr
        state["exp_avg"].addcmul_(state["_denom"], error, value=coef)

    def _step_param(
        self, p: torch.Tensor, grad: torch.Tensor, group: dict[str, Any], fmt: QuantFormat | None
    ) -> None:
        try:
            super()._step_param(p, grad, group, fmt)
        finally:
            self.state[p].pop("_denom", None)


class _SGDMixin(QuantizedOptimizer):
    """SGD with heavy-ball momentum and L2 weight decay, as ``torch.optim.SGD``
    (``b ← β b + (1−τ) g``, first step ``b = g``; ``w ← w − η b``)."""

    def _direction(
        self,
        p: torch.Tensor,
        grad: torch.Tensor,
        w: torch.Tensor,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> torch.Tensor:
        lr, beta, damp, wd = (
            group["lr"],
            group["momentum"],
            group["dampening"],
            group["weight_decay"],
        )
        _advance_step(state)
        g = grad + wd * w if wd else grad
        if beta == 0.0:
            return w.add_(g, alpha=-lr)
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = g.clone()
        else:
            state["momentum_buffer"].mul_(beta).add_(g, alpha=1.0 - damp)
        return w.add_(state["momentum_buffer"], alpha=-lr)

    def _inject(self, error: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, beta = group["lr"], group["momentum"]
        state["momentum_buffer"].add_(error, alpha=(1.0 - 1.0 / beta) / lr)


def _adamw_defaults(
    lr: float,
    betas: tuple[float, float],
    eps: float,
    weight_decay: float,
    mode: Mode,
    fmt: str | None,
    group_size: int | None,
    rounding: str,
) -> dict[str, Any]:
    """Validated param-group defaults shared by the AdamW variants.

    Only ``betas[0]`` (the first moment) carries ECO's injected error, so only it must be > 0
    under ECO; ``betas[1]`` just has to lie in [0, 1).
    """
    _check_beta("betas[0]", betas[0], mode)
    _check_beta("betas[1]", betas[1], "naive")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps!r}")
    defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay}
    defaults.update(_group_defaults(fmt, group_size, rounding))
    return defaults


def _group_defaults(fmt: str | None, group_size: int | None, rounding: str) -> dict[str, Any]:
    _fmt_of({"fmt": fmt, "group_size": group_size, "rounding": rounding})  # validate early
    return {"fmt": fmt, "group_size": group_size, "rounding": rounding}


class ECOAdamW(_AdamWMixin):
    """AdamW whose weights exist only quantized, with ECO error feedback into ``exp_avg``.

    Args:
        params: parameters or parameter groups (groups may override ``fmt``, ``group_size``,
            ``rounding``, ``lr``, ``betas``, ``eps``, ``weight_decay``).
        lr, betas, eps, weight_decay: as ``torch.optim.AdamW``; ``betas[0]`` must be > 0.
        fmt: ``"fp8"`` (e4m3), ``"int4"``, or ``None`` (keep in the parameter's dtype).
        group_size: elements of the last dimension per scale (``None``: per tensor).
        rounding: ``"rtn"`` or ``"sr"``.
        error_feedback: ``False`` gives the naive master-weight-removal baseline.
        release_weights: free the parameters' storage between steps (call :meth:`attach`).
        seed: seeds stochastic rounding (identical on every data-parallel rank).
        check_finite: refuse a step whose gradients hold NaN/inf.
        scale_order: ablations of the order of scale update, quantization and injection.
            ``"current"`` (the paper's): scale from the new iterate ``w̃``, quantize, inject
            ``w̃ − q(w̃)``. ``"delayed"``: quantize on the scale taken from the previous
            iterate (delayed scaling; clipped values' error is injected too).
            ``"inject_then_rescale"``: quantize on the stored scale, inject that error, then
            re-quantize on ``w̃``'s scale (the second rounding's error is lost).
        error_buffer: ablation: instead of the momentum injection keep ``e`` in an FP32
            buffer and add it to the next iterate in full (exact error feedback; the
            buffer costs the 4 bytes per weight that ECO removes; it equals master weights
            started on the quantization grid, up to float rounding: it measures what the
            memory-free rule costs).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | None = None,
        rounding: str = "rtn",
        error_feedback: bool = True,
        release_weights: bool = True,
        seed: int = 0,
        check_finite: bool = True,
        scale_order: ScaleOrder = "current",
        error_buffer: bool = False,
    ) -> None:
        mode: Mode = "eco" if error_feedback else "naive"
        defaults = _adamw_defaults(lr, betas, eps, weight_decay, mode, fmt, group_size, rounding)
        super().__init__(
            params,
            defaults,
            mode=mode,
            release_weights=release_weights,
            seed=seed,
            check_finite=check_finite,
            scale_order=scale_order,
            error_buffer=error_buffer,
        )


class MasterWeightAdamW(_AdamWMixin):
    """The standard scheme ECO removes: AdamW on an FP32 master copy, quantized working weights.

    Same arguments as :class:`ECOAdamW` (without ``error_feedback``). The gradient is taken at
    the quantized weights ``q(master)``; the update goes to ``master`` (4 bytes per weight).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | None = None,
        rounding: str = "rtn",
        release_weights: bool = True,
        seed: int = 0,
        check_finite: bool = True,
    ) -> None:
        defaults = _adamw_defaults(
            lr, betas, eps, weight_decay, "master", fmt, group_size, rounding
        )
        super().__init__(
            params,
            defaults,
            mode="master",
            release_weights=release_weights,
            seed=seed,
            check_finite=check_finite,
        )


class ECOSGD(_SGDMixin):
    """SGD with momentum whose weights exist only quantized, with ECO error feedback.

    Args:
        lr, momentum, dampening, weight_decay: as ``torch.optim.SGD`` (no Nesterov);
            ``momentum`` must be > 0 with ``error_feedback=True``.
        Other arguments as :class:`ECOAdamW`.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        momentum: float = 0.9,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | None = None,
        rounding: str = "rtn",
        error_feedback: bool = True,
        release_weights: bool = True,
        seed: int = 0,
        check_finite: bool = True,
    ) -> None:
        mode: Mode = "eco" if error_feedback else "naive"
        _check_beta("momentum", momentum, mode)
        if not (0.0 <= dampening < 1.0):
            raise ValueError(f"dampening must be in [0, 1), got {dampening!r}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
        }
        defaults.update(_group_defaults(fmt, group_size, rounding))
        super().__init__(
            params,
            defaults,
            mode=mode,
            release_weights=release_weights,
            seed=seed,
            check_finite=check_finite,
        )


class MasterWeightSGD(_SGDMixin):
    """SGD with momentum on an FP32 master copy with quantized working weights (baseline)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        momentum: float = 0.9,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | None = None,
        rounding: str = "rtn",
        release_weights: bool = True,
        seed: int = 0,
        check_finite: bool = True,
    ) -> None:
        _check_beta("momentum", momentum, "master")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
        }
        defaults.update(_group_defaults(fmt, group_size, rounding))
        super().__init__(
            params,
            defaults,
            mode="master",
            release_weights=release_weights,
            seed=seed,
            check_finite=check_finite,
        )
