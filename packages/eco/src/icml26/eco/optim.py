"""Optimizers whose only copy of the weights is quantized: ECO, naive removal, master weights.

All optimizers here are ``torch.optim.Optimizer`` subclasses. Give them the model,
``ECOAdamW(model, lr=...)``, and they

* split its parameters by role (:mod:`icml26.eco.roles`): matrices and stacked experts are
  stored in ``fmt`` (FP8 e4m3 or INT4); norms, biases, embeddings and MoE routers keep their
  own dtype unless ``quantize_all=True``;
* replace each quantized parameter by a :class:`~icml26.eco.qweight.QuantizedWeight`, a tensor
  holding only codes and scales that computes as its dequantized values. The model stays
  whole: ``model(x)``, ``model.state_dict()``, ``torch.save(model)``, ``save_pretrained`` and
  ``torch.compile`` see real weights; between steps a weight costs 1 byte (FP8) or ½ byte
  (INT4) plus its scales.

Given parameters instead (``ECOAdamW(model.parameters())``, the ``torch.optim`` way, or under
DDP/FSDP, which own the parameter objects), the optimizer cannot swap them: each parameter then
keeps the dequantized weights as a dense working copy (written after every step; the
quantized codes live in the optimizer state), which costs the parameter's own bytes again.

Three update rules share the storage (paper: Nikdan et al., ICML 2026, "ECO"):

* **ECO** (``ECOAdamW``, ``ECOSGD``): take the step from the stored weights ``ŵ_t``, giving
  the high-precision iterate ``w̃ = ŵ_t - η_t u_t`` (a temporary), store
  ``ŵ_{t+1} = q(w̃)`` and push the error ``e_t = w̃ - ŵ_{t+1}`` into the momentum so that the
  next step re-applies it. Asking the ECO iterate to equal the master-weight iterate
  ``W*_t = ŵ_t + e_t`` at every step, the momentum must hold ``D_{t+1} = (1 - η_{t+1} λ)
  c_{t+1} d e_t / η_{t+1}`` more than master weights' at step ``t+1`` (``c`` the bias correction
  ``1 - β1^t``, ``d = √v̂ + ε``); with the paper's approximation ``e_{t-1} ≈ e_t`` (which
  spares the buffer of the previous error) this gives the injection

  ``m ← m + d ⊙ e_t · [(1 - η_t λ) c_t / η_t - (1 - η_{t+1} λ) c_{t+1} / (β1 η_{t+1})]``

  (the first term takes out the earlier injection, which the momentum still holds; at the
  first step there is none, so it is 0, and the optimizer records the factor it actually
  injected, so a rate that differed from the one assumed is taken out exactly), scaled at
  the rate and bias correction of the step that *replays* the error
  (``injection_scale="replay"``, default). With a constant rate and ``t → ∞`` it is the
  paper's ``m ← m + (1 - ηλ)(1 - 1/β1)(1 - β1^t) d ⊙ e / η``, which
  ``injection_scale="injection"`` uses at every step (the current rate and bias correction
  only: it over-replays during warm-up and under-replays while the rate decays). For SGD
  with momentum (``b ← β b + g``, ``w ← w − η b``): ``b ← b + e (1/η_t − 1/(β η_{t+1}))``.
  The rate of the next step is ``group["next_lr"]`` when the training loop sets it before
  ``step()`` (it is consumed by the step; :meth:`QuantizedOptimizer.follow` sets it from a
  ``torch.optim.lr_scheduler``), else the current rate (a warning, once, when the rate
  changes). A rate of 0 (warm-up from 0) moves no weight and injects nothing. Momentum
  ``β = 0`` leaves nothing to inject into: refused.
* **naive removal** (``error_feedback=False``): the same, without the injection; updates
  smaller than half a grid step are lost, so the stationary error grows like ``1/η``.
* **master weights** (``MasterWeightAdamW``, ``MasterWeightSGD``): an FP32 ``master`` copy
  takes the standard update; the stored weights are ``q(master)`` (the baseline ECO removes;
  4 extra bytes per weight).

The AdamW step runs batched (``foreach=True``, default: :mod:`icml26.eco.foreach`) over each
group's parameters with the same format, dtype, device and step count, and falls back to the
per-parameter reference step (``foreach=False``) for the ablation switches; both give the
same bits on the CPU. ``fused=True`` runs FP8 round-to-nearest weights through one compiled
call per bucket instead (:mod:`icml26.eco.fused`: equal to the reference to float32 rounding,
not to the bit; tested). Stochastic rounding draws from a generator seeded by ``(seed, parameter
index, step)``, so data-parallel replicas round identically and a resumed run repeats the same
bits.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

import torch
from torch import nn
from torch.optim import Optimizer

from icml26.eco.foreach import (
    AdamWSettings,
    QuantizedBucket,
    adamw_denominators,
    adamw_dense_step,
    adamw_quantized_step,
)
from icml26.eco.fused import adamw_fp8_fused_step, supports
from icml26.eco.quantize import QTensor, QuantFormat
from icml26.eco.qweight import QuantizedWeight, quantize_parameters
from icml26.eco.roles import role_groups

__all__ = [
    "ECOSGD",
    "INJECTION_SCALES",
    "ECOAdamW",
    "MasterWeightAdamW",
    "MasterWeightSGD",
    "NonFiniteGradientError",
    "QuantizedOptimizer",
    "injection_coefficient",
    "sr_seed",
]

Mode = Literal["eco", "naive", "master"]
ScaleOrder = Literal["current", "delayed", "inject_then_rescale"]
InjectionScale = Literal["replay", "injection"]
SCALE_ORDERS: tuple[str, ...] = ("current", "delayed", "inject_then_rescale")
INJECTION_SCALES: tuple[str, ...] = ("replay", "injection")
SUPPORTED_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
Params = nn.Module | Iterable[Any]


class NonFiniteGradientError(FloatingPointError):
    """A gradient holds NaN or infinity; the step is refused before any weight changes."""


def injection_coefficient(
    *,
    lr: float,
    next_lr: float,
    beta1: float,
    step: int,
    weight_decay: float = 0.0,
    bias_correction: bool = True,
    scale: InjectionScale = "replay",
    held: float | None = None,
) -> float:
    """The factor ``k`` of ECO's injection ``m ← m + k · d ⊙ e`` at step ``step``.

    Args:
        lr: this step's learning rate ``η_t`` (>= 0; 0 injects nothing: the weights did not
            move).
        next_lr: the rate ``η_{t+1}`` of the step that replays the error (>= 0; 0 leaves
            nothing to replay it, so no new error is injected).
        beta1: the momentum coefficient (> 0).
        step: ``t`` (1 for the first step).
        weight_decay: decoupled weight decay ``λ`` (AdamW; 0 for SGD).
        bias_correction: divide the momentum by ``1 - β1^t`` (Adam) or not (SGD).
        scale: ``"replay"`` (the rate and bias correction of the replaying step: the paper's
            derivation) or ``"injection"`` (this step's for both: the paper's formula).
        held: ``"replay"`` only: the factor ``h`` of the earlier injection the momentum still
            holds at this step, ``-h · d ⊙ e_{t-1}``, which this injection takes out again
            (with ``e_{t-1} ≈ e_t``). ``None``: ``0`` at the first step (the momentum holds no
            earlier injection) and ``(1-η_tλ) c_t/η_t`` after it (the earlier injection
            made for this step's rate).

    Returns:
        For ``"replay"``: ``h - (1-η_{t+1}λ) c_{t+1}/(β1 η_{t+1})`` (``c_t = 1 - β1^t``, or 1
        without bias correction); for ``"injection"``: ``(1-η_tλ)(1-1/β1) c_t/η_t`` (the paper's
        constant-rate formula, at every step including the first). 0 when ``lr`` is 0.

    Raises:
        ValueError: an unknown ``scale``, or a negative or non-finite rate.
    """
    if scale not in INJECTION_SCALES:
        raise ValueError(f"injection_scale must be one of {INJECTION_SCALES}, got {scale!r}")
    for name, rate in (("lr", lr), ("next_lr", next_lr)):
        if not (math.isfinite(rate) and rate >= 0):
            raise ValueError(f"{name} must be a finite rate >= 0, got {rate!r}")
    if lr == 0:
        return 0.0
    c_now = 1.0 - beta1**step if bias_correction else 1.0
    if scale == "injection":
        return (1.0 - lr * weight_decay) * (1.0 - 1.0 / beta1) * c_now / lr
    if held is None:
        held = 0.0 if step <= 1 else _replay_factor(lr, weight_decay, c_now)
    if next_lr == 0:
        return held
    c_next = 1.0 - beta1 ** (step + 1) if bias_correction else 1.0
    return held - _replay_factor(next_lr, weight_decay, c_next) / beta1


def _replay_factor(rate: float, weight_decay: float, bias_correction: float) -> float:
    """``(1 - ηλ) c / η``: how much ``d ⊙ e`` the momentum must hold for a step at rate ``η``
    (bias correction ``c``) to move the weights by ``(1 - ηλ) e`` more."""
    return (1.0 - rate * weight_decay) * bias_correction / rate


#: ``group_size="auto"``: one scale per tensor for FP8, groups of 16 for INT4 (one INT4 scale
#: per tensor lost +836% training loss on the MLP in 0.1.0: never a silent default)
AUTO_GROUP_SIZE: dict[str, int | None] = {"fp8": None, "int4": 16}


def _fmt_of(group: dict[str, Any]) -> QuantFormat | None:
    if group["fmt"] is None:
        return None
    size = group["group_size"]
    if size == "auto":
        size = AUTO_GROUP_SIZE.get(group["fmt"])
    return QuantFormat(group["fmt"], size, group["rounding"])


def sr_seed(seed: int, index: int, step: int) -> int:
    """The seed of a parameter's stochastic-rounding draws at a step (splitmix-style mixing):
    every data-parallel replica and a resumed run draw the same bits.

    Args:
        seed: the optimizer's ``seed``.
        index: the parameter's index in the optimizer (order of first appearance).
        step: the step (0: the initial quantization).

    Returns:
        A 63-bit seed for ``torch.Generator.manual_seed``.
    """
    z = (seed * 0x9E3779B97F4A7C15 + index * 0xBF58476D1CE4E5B9 + step * 0x94D049BB133111EB) & (
        (1 << 64) - 1
    )
    z ^= z >> 31
    z = (z * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z ^= z >> 29
    return z & ((1 << 63) - 1)


class QuantizedOptimizer(Optimizer):
    """Base class: quantized weight storage, checks, the step's skeleton, checkpoints.

    Subclasses implement :meth:`_direction` (the optimizer's update) and :meth:`_inject` (ECO's
    momentum correction). Parameter groups take ``fmt`` (``"fp8"``, ``"int4"`` or ``None`` for
    a group kept in the parameter's own dtype), ``group_size`` and ``rounding``
    (``"rtn"``/``"sr"``) besides the optimizer's own options.
    """

    def __init__(
        self,
        params: Params,
        defaults: dict[str, Any],
        *,
        mode: Mode,
        seed: int = 0,
        check_finite: bool = True,
        scale_order: ScaleOrder = "current",
        error_buffer: bool = False,
        injection_scale: InjectionScale = "replay",
        quantize_all: bool = False,
        model: nn.Module | None = None,
        foreach: bool | None = None,
        fused: bool = False,
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
        if injection_scale not in INJECTION_SCALES:
            raise ValueError(
                f"injection_scale must be one of {INJECTION_SCALES}, got {injection_scale!r}"
            )
        if isinstance(params, nn.Module):
            if model is not None and model is not params:
                raise ValueError("pass the model once: as params or as model=, not both")
            model = params
            params = role_groups(model, quantize_all=quantize_all)
        elif quantize_all:
            raise ValueError(
                "quantize_all decides the groups by role, which needs the model: "
                "pass ECOAdamW(model, quantize_all=True)"
            )
        self.mode: Mode = mode
        self.scale_order: ScaleOrder = scale_order
        self.error_buffer = bool(error_buffer)
        self.injection_scale: InjectionScale = injection_scale
        self.seed = seed
        self.check_finite = bool(check_finite)
        self.foreach = True if foreach is None else bool(foreach)
        self.fused = bool(fused)
        if self.fused and not self.foreach:
            raise ValueError("fused=True replaces the batched step: it needs foreach")
        self.model = model
        self._index: dict[int, int] = {}
        # one stochastic-rounding generator per device, re-seeded per (parameter, step): the
        # same random stream as a fresh generator each time, without allocating one per call
        self._generators: dict[torch.device, torch.Generator] = {}
        self._last_lr: dict[int, float] = {}  # id(group) -> its rate at its last step
        self._rate_warned = False
        self._scheduler: Any = None
        super().__init__(params, defaults)  # calls add_param_group for each group

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group, validate it and move its weights into quantized storage.

        With the model known (``ECOAdamW(model, ...)``), the group's quantized parameters are
        replaced in the model by :class:`~icml26.eco.qweight.QuantizedWeight` parameters.

        Args:
            param_group: ``{"params": [...], **options}`` as for any ``torch.optim``
                optimizer.

        Raises:
            TypeError: a parameter dtype other than float32/bfloat16/float16.
            ValueError: a bad option, a group size that does not divide a parameter's last
                dimension, or a parameter the model does not own.
        """
        group = dict(param_group)
        raw = group["params"]
        params = [raw] if isinstance(raw, torch.Tensor) else list(raw)
        merged = {**self.defaults, **group}
        fmt = _fmt_of(merged)  # validates fmt/group_size/rounding
        self._check_group(merged)
        for p in params:
            self._check_param(p, fmt)
        for p in params:
            self._index.setdefault(id(p), len(self._index))
        dense: dict[int, torch.Tensor] = {}
        if fmt is not None and self.model is not None:
            if self.mode == "master":
                dense = {id(p): p.detach().float().clone() for p in params}
            gens = {}
            if fmt.rounding == "sr":  # one generator each, seeded as _generator(p, 0) would be
                for p in params:
                    gen = torch.Generator(device=p.device)
                    gens[id(p)] = gen.manual_seed(sr_seed(self.seed, self._index[id(p)], 0))
            new = quantize_parameters(self.model, {id(p): fmt for p in params}, generators=gens)
            for old in params:
                self._index[id(new[id(old)])] = self._index[id(old)]
                if id(old) in dense:
                    dense[id(new[id(old)])] = dense[id(old)]
            params = [new[id(p)] for p in params]
        group["params"] = params
        super().add_param_group(group)
        if fmt is not None:
            for p in params:
                self._init_storage(p, fmt, dense.get(id(p)))

    # -- validation ---------------------------------------------------------------------------
    def _check_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        if isinstance(lr, torch.Tensor):
            raise TypeError("tensor learning rates are not supported; pass a float")
        if not (isinstance(lr, int | float) and math.isfinite(lr) and lr >= 0):
            raise ValueError(f"learning rate must be a finite number >= 0, got {lr!r}")
        wd = group.get("weight_decay", 0.0)
        if not (math.isfinite(wd) and wd >= 0):
            raise ValueError(f"weight_decay must be >= 0, got {wd!r}")

    def _check_param(self, p: torch.Tensor, fmt: QuantFormat | None) -> None:
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"optimizer params must be tensors, got {type(p).__name__}")
        if p.dtype not in SUPPORTED_DTYPES:
            raise TypeError(
                f"unsupported parameter dtype {p.dtype} (shape {tuple(p.shape)}); supported: "
                "float32, bfloat16, float16"
            )
        if isinstance(p, QuantizedWeight) and id(p) not in self._index:
            raise ValueError(
                "this parameter is already a QuantizedWeight (another optimizer stores it); "
                "one quantized optimizer per model"
            )
        if fmt is not None:
            fmt.check(p.shape)

    def _all_params(self) -> Iterator[torch.Tensor]:
        for group in self.param_groups:
            yield from group["params"]

    # -- storage ------------------------------------------------------------------------------
    def _init_storage(self, p: torch.Tensor, fmt: QuantFormat, dense: torch.Tensor | None) -> None:
        state = self.state[p]
        if "qdata" in state:
            return
        if isinstance(p, QuantizedWeight):
            state["qdata"], state["qscale"] = p.codes, p.scale
            if self.mode == "master":
                state["master"] = dense if dense is not None else p.dequantize(torch.float32)
        else:
            with torch.no_grad():
                w = p.detach().float()
                if self.mode == "master":
                    state["master"] = w.clone()
                gen = self._generator(p, 0) if fmt.rounding == "sr" else None
                try:
                    q = fmt.quantize(w, generator=gen)
                except ValueError as err:
                    raise ValueError(
                        f"parameter {self._index[id(p)]} (shape {tuple(p.shape)}): {err}"
                    ) from err
                state["qdata"], state["qscale"] = q.data, q.scale
                p.copy_(fmt.dequantize(q, p.dtype))
        if self.scale_order == "delayed":
            state["next_scale"] = state["qscale"].clone()

    def _generator(self, p: torch.Tensor, step: int) -> torch.Generator:
        """The device's generator, seeded for ``(self.seed, p's index, step)``."""
        gen = self._generators.get(p.device)
        if gen is None:
            gen = self._generators[p.device] = torch.Generator(device=p.device)
        gen.manual_seed(sr_seed(self.seed, self._index[id(p)], step))
        return gen

    def _sync(self, p: torch.Tensor) -> None:
        """A quantized weight's codes are its storage: point the state at them (they move with
        ``model.to(...)``)."""
        if isinstance(p, QuantizedWeight):
            state = self.state[p]
            state["qdata"], state["qscale"] = p.codes, p.scale

    def qtensor(self, p: torch.Tensor) -> QTensor:
        """The quantized storage of ``p``.

        Args:
            p: a parameter of a quantized group.

        Returns:
            Its codes, scales and shape.

        Raises:
            KeyError: ``p`` is not stored quantized by this optimizer.
        """
        if isinstance(p, QuantizedWeight):
            return p.qtensor()
        state = self.state.get(p, {})
        if "qdata" not in state:
            raise KeyError("this parameter is not stored quantized by this optimizer")
        return QTensor(state["qdata"], state["qscale"], torch.Size(p.shape))

    def dequantized(self, p: torch.Tensor) -> torch.Tensor:
        """``p``'s stored weights in float32 (for a full-precision group: ``p`` itself).

        Args:
            p: a parameter of this optimizer.

        Returns:
            A float32 tensor of ``p``'s shape.

        Raises:
            KeyError: ``p`` is not a parameter of this optimizer.
        """
        fmt = _fmt_of(self._group_of(p))
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

    # -- the step -----------------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """One update of every parameter with a gradient, then re-quantization.

        Args:
            closure: re-evaluates the model and returns the loss (as for ``torch.optim``).

        Returns:
            The closure's loss, or ``None``.

        Raises:
            NonFiniteGradientError: a gradient holds NaN/inf (no weight changed).
            RuntimeError: a sparse gradient.
            ValueError: a group's rate (or ``next_lr``) is negative or not finite (a broken
                learning-rate schedule; no weight changed).
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self.check_finite:
            self._check_finite_grads()
        if self._scheduler is not None:
            self._peek_next_lr()
        for i, group in enumerate(self.param_groups):
            _check_rates(i, group)
        for group in self.param_groups:
            fmt = _fmt_of(group)
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                if p.grad.is_sparse:
                    raise RuntimeError("sparse gradients are not supported")
                if fmt is not None:
                    self._sync(p)
            rest = self._step_batched(group, params, fmt) if self.foreach else params
            for p in rest:
                self._step_param(p, p.grad.float(), group, fmt)
            group.pop("next_lr", None)  # a rate for this step only
        return loss

    def follow(self, scheduler: Any) -> None:
        """Tell ECO's injection the rate of the next step from a ``torch.optim.lr_scheduler``.

        Each :meth:`step` then reads the rate the scheduler will set at its next ``step()``
        (by stepping it and restoring its state and the groups' rates) into
        ``group["next_lr"]``, so the injected error is scaled for the step that replays it.
        Call it once, after building the scheduler on this optimizer; keep calling
        ``scheduler.step()`` after ``opt.step()`` as usual.

        Args:
            scheduler: an ``LRScheduler`` of this optimizer (``ReduceLROnPlateau``, which needs
                a metric, cannot be read ahead).

        Raises:
            TypeError: ``scheduler`` is not a scheduler of this optimizer, or needs a metric.
        """
        if getattr(scheduler, "optimizer", None) is not self:
            raise TypeError("follow() takes a learning-rate scheduler built on this optimizer")
        if not callable(getattr(scheduler, "state_dict", None)) or isinstance(
            scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau
        ):
            raise TypeError(
                "follow() needs a scheduler whose next rate can be read ahead; "
                "ReduceLROnPlateau depends on a metric: set group['next_lr'] yourself"
            )
        self._scheduler = scheduler

    def _peek_next_lr(self) -> None:
        sched = self._scheduler
        saved = sched.state_dict()
        rates = [g["lr"] for g in self.param_groups]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sched.step()
            upcoming: list[float] | None = [float(g["lr"]) for g in self.param_groups]
        except ValueError:  # a schedule at its end (OneCycleLR): no next step to read
            upcoming = None
        finally:
            sched.load_state_dict(saved)
            for group, rate in zip(self.param_groups, rates, strict=True):
                group["lr"] = rate
        if upcoming is not None:
            for group, nxt in zip(self.param_groups, upcoming, strict=True):
                group["next_lr"] = nxt

    def _step_batched(
        self, group: dict[str, Any], params: list[torch.Tensor], fmt: QuantFormat | None
    ) -> list[torch.Tensor]:
        """Batched step of what the subclass supports; returns the parameters left over for
        the per-parameter reference step (none here)."""
        return params

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
                    f"{tuple(p.shape)} at index {self._index[id(p)]}; step refused, "
                    "no weight changed"
                )

    def _store(self, p: torch.Tensor, q: QTensor, fmt: QuantFormat) -> None:
        """Write new codes and scales (and a dense working copy's values)."""
        state = self.state[p]
        if isinstance(p, QuantizedWeight):
            p.codes.copy_(q.data)
            p.scale.copy_(q.scale)
            return
        state["qdata"], state["qscale"] = q.data, q.scale
        p.copy_(fmt.dequantize(q, p.dtype))

    def _step_param(
        self, p: torch.Tensor, grad: torch.Tensor, group: dict[str, Any], fmt: QuantFormat | None
    ) -> None:
        """The per-parameter reference step (the batched step computes the same bits)."""
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
        if self.scale_order == "current":  # scale from w̃, quantize, inject (the paper's order)
            q = fmt.quantize(target, generator=gen, check_finite=False)
            self._store(p, q, fmt)
            if self.mode != "eco":
                return
            error = target.sub_(fmt.dequantize(q))  # e = w̃ − q(w̃), in w̃'s buffer
        else:
            q, error = self._quantize_reordered(target, fmt, gen, state)
            self._store(p, q, fmt)
        if self.error_buffer:
            state["error"] = error
        elif self.mode == "eco":
            self._inject(error, state, group)

    def _quantize_reordered(
        self,
        target: torch.Tensor,
        fmt: QuantFormat,
        gen: torch.Generator | None,
        state: dict[str, Any],
    ) -> tuple[QTensor, torch.Tensor]:
        """The scale-order ablations: the stored codes and the error to inject."""
        if self.scale_order == "delayed":  # the scale of the previous iterate, clipping
            q = fmt.quantize(target, generator=gen, check_finite=False, scale=state["next_scale"])
            state["next_scale"] = fmt.scale_for(target)
            return q, target.sub_(fmt.dequantize(q))
        # inject_then_rescale: quantize on the old scale, keep that error, then rescale
        q_old = fmt.quantize(target, generator=gen, check_finite=False, scale=state["qscale"])
        on_old = fmt.dequantize(q_old)
        lost = target - on_old
        q = fmt.quantize(on_old, generator=gen, check_finite=False, scale=fmt.scale_for(target))
        return q, lost

    def _injection(self, group: dict[str, Any], states: list[dict[str, Any]], beta: float) -> float:
        """This step's injection coefficient for ``group`` (see the module docstring), for
        parameters at the same step with the same history (``states``); records in each state
        the factor of the injection its momentum will hold at the next step (``_held``)."""
        lr = group["lr"]
        next_lr = group.get("next_lr")
        if next_lr is None:
            next_lr = lr
            if self.injection_scale == "replay":
                self._note_rate(group)
        t = _step_count(states[0])
        adam = "betas" in group
        wd = group.get("weight_decay", 0.0) if adam else 0.0
        if self.injection_scale != "replay":
            return injection_coefficient(
                lr=lr,
                next_lr=next_lr,
                beta1=beta,
                step=t,
                weight_decay=wd,
                bias_correction=adam,
                scale="injection",
            )
        held = states[0].get("_held")
        if held is None:  # a fresh state, or a checkpoint written before ``_held`` existed
            c_now = 1.0 - beta**t if adam else 1.0
            held = _replay_factor(lr, wd, c_now) if t > 1 and lr > 0 else 0.0
        if lr == 0:  # the weights did not move: nothing to inject; the momentum decays
            coef, after = 0.0, beta * held
        else:
            coef = injection_coefficient(
                lr=lr,
                next_lr=next_lr,
                beta1=beta,
                step=t,
                weight_decay=wd,
                bias_correction=adam,
                held=held,
            )
            c_next = 1.0 - beta ** (t + 1) if adam else 1.0
            after = _replay_factor(next_lr, wd, c_next) if next_lr > 0 else 0.0
        for state in states:
            state["_held"] = after
        return coef

    def _note_rate(self, group: dict[str, Any]) -> None:
        """Warn once when a group's rate changed since its last step and no ``next_lr`` told
        the injection the rate of the step that replays it."""
        key = id(group)
        last = self._last_lr.get(key)
        self._last_lr[key] = group["lr"]
        if self._rate_warned or last is None or last == group["lr"]:
            return
        self._rate_warned = True
        warnings.warn(
            f"the learning rate changed ({last:g} -> {group['lr']:g}) but ECO's injection was "
            "not told the next step's rate: it assumes the rate stays, so the error is "
            "replayed at the wrong scale while the rate moves. Call opt.follow(scheduler) "
            "once after building the scheduler, or set group['next_lr'] before each step "
            "(warned once).",
            stacklevel=4,
        )

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
    def state_dict(self) -> dict[str, Any]:
        """The optimizer state (with the quantized weights' codes and scales).

        Returns:
            As ``torch.optim.Optimizer.state_dict``; loads with ``weights_only=True``.
        """
        for p, _ in self._quantized_params():
            self._sync(p)
        return super().state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load, keeping the saved dtypes (``Optimizer`` would cast float state to the
        parameter's dtype), then write the loaded weights into the parameters.

        Args:
            state_dict: from :meth:`state_dict` (an optimizer over the same parameter layout).
        """
        super().load_state_dict(state_dict)
        saved_groups = state_dict["param_groups"]
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            for pid, p in zip(saved["params"], group["params"], strict=True):
                for key, value in state_dict["state"].get(pid, {}).items():
                    if isinstance(value, torch.Tensor) and key != "step":
                        self.state[p][key] = value.detach().to(device=p.device).clone()
        with torch.no_grad():
            for p, fmt in self._quantized_params():
                state = self.state[p]
                if isinstance(p, QuantizedWeight):
                    p.codes.copy_(state["qdata"])
                    p.scale.copy_(state["qscale"])
                    self._sync(p)
                else:
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


def _check_rates(index: int, group: dict[str, Any]) -> None:
    """Refuse a negative or non-finite rate before any state changes (0 is allowed: a
    warm-up from 0 moves no weight and injects nothing)."""
    for key in ("lr", "next_lr"):
        rate = group.get(key)
        if rate is None and key == "next_lr":
            continue
        if isinstance(rate, torch.Tensor) or not (
            isinstance(rate, int | float) and math.isfinite(rate) and rate >= 0
        ):
            raise ValueError(
                f"param group {index}: {key} must be a finite float >= 0, got {rate!r}; "
                "check the learning-rate schedule"
            )


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
        s = AdamWSettings(lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=wd, step=t)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.lerp_(grad, 1.0 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
        # √(1-β2^t)(√v̂ + ε), with the factor moved into the step size (torch.optim.AdamW
        # divides √v by it instead: the same update up to float rounding, one pass fewer)
        denom = adamw_denominators(v, s, torch.empty_like(v))
        state["_denom"] = denom  # reused by _inject within this step, then dropped
        if wd:
            w.mul_(1.0 - lr * wd)
        return w.addcdiv_(m, denom, value=s.step_size)

    def _inject(self, error: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        s = AdamWSettings(
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            step=_step_count(state),
            inject=self._injection(group, [state], beta1),
        )
        state["exp_avg"].addcmul_(state["_denom"], error, value=s.inject_value)

    def _step_param(
        self, p: torch.Tensor, grad: torch.Tensor, group: dict[str, Any], fmt: QuantFormat | None
    ) -> None:
        try:
            super()._step_param(p, grad, group, fmt)
        finally:
            self.state[p].pop("_denom", None)

    # -- the batched step ---------------------------------------------------------------------
    def _step_batched(
        self, group: dict[str, Any], params: list[torch.Tensor], fmt: QuantFormat | None
    ) -> list[torch.Tensor]:
        if fmt is not None and (self.scale_order != "current" or self.error_buffer):
            return params  # the ablation switches run the reference step
        buckets: dict[tuple[Any, ...], list[torch.Tensor]] = {}
        rest = []
        for p in params:
            state = self.state[p]
            if fmt is None and p.dtype != torch.float32:  # a bf16/fp16 high-precision weight
                rest.append(p)
                continue
            if "exp_avg" not in state:
                state["exp_avg"] = torch.zeros(p.shape, dtype=torch.float32, device=p.device)
                state["exp_avg_sq"] = torch.zeros_like(state["exp_avg"])
            key = (
                p.dtype,
                p.device,
                _step_count(state),
                state.get("_held"),
                isinstance(p, QuantizedWeight),
            )
            buckets.setdefault(key, []).append(p)
        for (_, _, t, _, _), ps in buckets.items():
            self._bucket_step(group, ps, fmt, t + 1)
        return rest

    def _bucket_step(
        self, group: dict[str, Any], ps: list[torch.Tensor], fmt: QuantFormat | None, t: int
    ) -> None:
        states = [self.state[p] for p in ps]
        for state in states:
            _advance_step(state)
        beta1, beta2 = group["betas"]
        inject = self._injection(group, states, beta1) if self.mode == "eco" else 0.0
        settings = AdamWSettings(
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            step=t,
            inject=inject,
        )
        grads = [p.grad.float() for p in ps]
        m = [s["exp_avg"] for s in states]
        v = [s["exp_avg_sq"] for s in states]
        if fmt is None:
            adamw_dense_step([p.detach() for p in ps], grads, m, v, settings)
            return
        noise = None
        if fmt.rounding == "sr":

            def noise(i: int, out: torch.Tensor) -> None:
                torch.rand(out.shape, generator=self._generator(ps[i], t), out=out)

        bucket = QuantizedBucket(
            grads=grads,
            exp_avg=m,
            exp_avg_sq=v,
            codes=[s["qdata"] for s in states],
            scales=[s["qscale"] for s in states],
            shapes=[torch.Size(p.shape) for p in ps],
            masters=[s["master"] for s in states] if self.mode == "master" else None,
            noise=noise,
            dense=None if isinstance(ps[0], QuantizedWeight) else [p.detach() for p in ps],
        )
        if self.fused and supports(fmt, bucket):
            adamw_fp8_fused_step(bucket, fmt, settings)
        else:
            adamw_quantized_step(bucket, fmt, settings)


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
        coef = self._injection(group, [state], group["momentum"])
        state["momentum_buffer"].add_(error, alpha=coef)


def _adamw_defaults(
    lr: float,
    betas: tuple[float, float],
    eps: float,
    weight_decay: float,
    mode: Mode,
    fmt: str | None,
    group_size: int | str | None,
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


def _group_defaults(fmt: str | None, group_size: int | str | None, rounding: str) -> dict[str, Any]:
    _fmt_of({"fmt": fmt, "group_size": group_size, "rounding": rounding})  # validate early
    return {"fmt": fmt, "group_size": group_size, "rounding": rounding}


class ECOAdamW(_AdamWMixin):
    """AdamW whose weights exist only quantized, with ECO error feedback into ``exp_avg``.

    Example::

        opt = ECOAdamW(model, lr=1e-3, fmt="fp8")   # the model's weights become FP8
        loss_fn(model(x), y).backward(); opt.step(); opt.zero_grad()
        torch.save(model.state_dict(), "ckpt.pt")   # dense weights, as always

    Args:
        params: the model (its parameters are grouped by role and the quantized ones replaced
            by :class:`~icml26.eco.qweight.QuantizedWeight` parameters), or parameters /
            parameter groups as for ``torch.optim.AdamW`` (each then keeps a dense working
            copy of its weights; groups may override ``fmt``, ``group_size``, ``rounding``,
            ``lr``, ``betas``, ``eps``, ``weight_decay``).
        lr: learning rate (>= 0; a schedule may set 0, which moves no weight).
        betas: moment coefficients; ``betas[0]`` must be > 0 (it carries the injection).
        eps: added to the denominator.
        weight_decay: decoupled weight decay (every group; :func:`~icml26.eco.roles.role_groups`
            with ``weight_decay=`` exempts norms and biases).
        fmt: ``"fp8"`` (e4m3), ``"int4"``, or ``None`` (keep in the parameter's dtype).
        group_size: elements of the last dimension per scale (``None``: one per tensor;
            ``"auto"``, the default: one per tensor for FP8, groups of 16 for INT4).
        rounding: ``"rtn"`` (round to nearest) or ``"sr"`` (stochastic).
        error_feedback: ``False`` gives the naive master-weight-removal baseline.
        seed: seeds stochastic rounding (identical on every data-parallel rank).
        check_finite: refuse a step whose gradients hold NaN/inf.
        scale_order: ablation of the order of scale update, quantization and injection.
            ``"current"`` (the paper's): scale from the new iterate ``w̃``, quantize, inject
            ``w̃ − q(w̃)``. ``"delayed"``: quantize on the scale taken from the previous
            iterate (delayed scaling; clipped values' error is injected too).
            ``"inject_then_rescale"``: quantize on the stored scale, inject that error, then
            re-quantize on ``w̃``'s scale (the second rounding's error is lost).
        error_buffer: ablation: keep ``e`` in an FP32 buffer and add it to the next iterate
            in full (exact error feedback at master-weight memory).
        injection_scale: ``"replay"`` (default: the injection is scaled by the rate and bias
            correction of the step that re-applies it, ``group["next_lr"]`` when set) or
            ``"injection"`` (this step's, the paper's constant-rate formula).
        quantize_all: with a model, also quantize norms, biases, embeddings and routers.
        model: the model owning ``params`` when ``params`` are groups you built yourself: its
            quantized parameters are then replaced as when passing the model.
        foreach: the batched step (default) or the per-parameter reference (``False``).
        fused: FP8 round-to-nearest quantized parameters step through one compiled call per
            bucket (:mod:`icml26.eco.fused`: equal to the reference to float32 rounding; the first
            step compiles, tens of seconds; without a C++ compiler it runs eagerly, warned).

    Raises:
        TypeError: a parameter dtype other than float32/bfloat16/float16, or a tensor lr.
        ValueError: a bad option, a group size that does not divide a last dimension.
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | str | None = "auto",
        rounding: str = "rtn",
        error_feedback: bool = True,
        seed: int = 0,
        check_finite: bool = True,
        scale_order: ScaleOrder = "current",
        error_buffer: bool = False,
        injection_scale: InjectionScale = "replay",
        quantize_all: bool = False,
        model: nn.Module | None = None,
        foreach: bool | None = None,
        fused: bool = False,
    ) -> None:
        mode: Mode = "eco" if error_feedback else "naive"
        defaults = _adamw_defaults(lr, betas, eps, weight_decay, mode, fmt, group_size, rounding)
        super().__init__(
            params,
            defaults,
            mode=mode,
            seed=seed,
            check_finite=check_finite,
            scale_order=scale_order,
            error_buffer=error_buffer,
            injection_scale=injection_scale,
            quantize_all=quantize_all,
            model=model,
            foreach=foreach,
            fused=fused,
        )


class MasterWeightAdamW(_AdamWMixin):
    """The standard scheme ECO removes: AdamW on an FP32 master copy, quantized stored weights.

    The gradient is taken at the quantized weights ``q(master)``; the update goes to
    ``master`` (4 bytes per weight).

    Args:
        params: as for :class:`ECOAdamW`.
        lr: as for :class:`ECOAdamW`.
        betas: as for :class:`ECOAdamW`.
        eps: as for :class:`ECOAdamW`.
        weight_decay: as for :class:`ECOAdamW`.
        fmt: as for :class:`ECOAdamW`.
        group_size: as for :class:`ECOAdamW`.
        rounding: as for :class:`ECOAdamW`.
        seed: as for :class:`ECOAdamW`.
        check_finite: as for :class:`ECOAdamW`.
        quantize_all: as for :class:`ECOAdamW`.
        model: as for :class:`ECOAdamW`.
        foreach: as for :class:`ECOAdamW`.

    Raises:
        TypeError, ValueError: as :class:`ECOAdamW`.
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | str | None = "auto",
        rounding: str = "rtn",
        seed: int = 0,
        check_finite: bool = True,
        quantize_all: bool = False,
        model: nn.Module | None = None,
        foreach: bool | None = None,
    ) -> None:
        defaults = _adamw_defaults(
            lr, betas, eps, weight_decay, "master", fmt, group_size, rounding
        )
        super().__init__(
            params,
            defaults,
            mode="master",
            seed=seed,
            check_finite=check_finite,
            quantize_all=quantize_all,
            model=model,
            foreach=foreach,
        )


class ECOSGD(_SGDMixin):
    """SGD with momentum whose weights exist only quantized, with ECO error feedback.

    The step is the per-parameter reference (no batched path).

    Args:
        params: as :class:`ECOAdamW`.
        lr: as for ``torch.optim.SGD``.
        momentum: as for ``torch.optim.SGD`` (no Nesterov); must be > 0 with
            ``error_feedback=True``.
        dampening: as for ``torch.optim.SGD``.
        weight_decay: as for ``torch.optim.SGD``.
        fmt: as for :class:`ECOAdamW`.
        group_size: as for :class:`ECOAdamW`.
        rounding: as for :class:`ECOAdamW`.
        error_feedback: as for :class:`ECOAdamW`.
        seed: as for :class:`ECOAdamW`.
        check_finite: as for :class:`ECOAdamW`.
        injection_scale: as for :class:`ECOAdamW`.
        quantize_all: as for :class:`ECOAdamW`.
        model: as for :class:`ECOAdamW`.

    Raises:
        TypeError, ValueError: as :class:`ECOAdamW`.
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        momentum: float = 0.9,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | str | None = "auto",
        rounding: str = "rtn",
        error_feedback: bool = True,
        seed: int = 0,
        check_finite: bool = True,
        injection_scale: InjectionScale = "replay",
        quantize_all: bool = False,
        model: nn.Module | None = None,
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
            seed=seed,
            check_finite=check_finite,
            injection_scale=injection_scale,
            quantize_all=quantize_all,
            model=model,
            foreach=False,
        )


class MasterWeightSGD(_SGDMixin):
    """SGD with momentum on an FP32 master copy with quantized stored weights (baseline).

    Args:
        params: as for :class:`ECOSGD`.
        lr: as for :class:`ECOSGD`.
        momentum: as for :class:`ECOSGD`.
        dampening: as for :class:`ECOSGD`.
        weight_decay: as for :class:`ECOSGD`.
        fmt: as for :class:`ECOSGD`.
        group_size: as for :class:`ECOSGD`.
        rounding: as for :class:`ECOSGD`.
        seed: as for :class:`ECOSGD`.
        check_finite: as for :class:`ECOSGD`.
        quantize_all: as for :class:`ECOSGD`.
        model: as for :class:`ECOSGD`.

    Raises:
        TypeError, ValueError: as :class:`ECOAdamW`.
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        momentum: float = 0.9,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        *,
        fmt: str | None = "fp8",
        group_size: int | str | None = "auto",
        rounding: str = "rtn",
        seed: int = 0,
        check_finite: bool = True,
        quantize_all: bool = False,
        model: nn.Module | None = None,
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
            seed=seed,
            check_finite=check_finite,
            quantize_all=quantize_all,
            model=model,
            foreach=False,
        )
