"""One training run of a workload under a scheme: same seed, data order and steps for all.

A workload builds its model (the same initial weights for every scheme, from ``seed``), draws
training batches from a generator seeded by ``seed`` (the same batches for every scheme), and
evaluates a fixed validation set. :func:`train` runs AdamW-family optimizers with linear
warm-up then cosine decay (the paper's theory assumes a decaying learning rate), tells ECO the
next step's rate (its injection is scaled at replay), and records the loss curve, the
final/validation loss, static memory (measured, :mod:`icml26.eco.memory`), optionally the peak
memory of the last step (activations, dequantized weight copies, gradients and the step's
temporaries included), and the CPU time spent in ``optimizer.step()``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import Optimizer

from icml26.eco.data import MNISTSplit, TextData
from icml26.eco.memory import peak_memory, static_memory
from icml26.eco.models import MLP, LMConfig, TinyLM
from icml26.eco.schemes import make_optimizer, parse_scheme
from icml26.shared import seed_for

__all__ = ["LMWorkload", "MLPWorkload", "TrainResult", "TrainSpec", "Workload", "train"]


class Workload(Protocol):
    name: str

    def build_model(self, seed: int) -> nn.Module: ...

    def train_loss(self, model: nn.Module, gen: torch.Generator) -> torch.Tensor: ...

    def val_loss(self, model: nn.Module) -> float: ...


@dataclass
class LMWorkload:
    """Next-byte prediction on a text corpus with :class:`TinyLM` (dense or MoE)."""

    name: str
    data: TextData
    cfg: LMConfig
    batch_size: int
    val_batches: int = 8
    seed: int = 0
    device: str = "cpu"
    _val: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list, repr=False)

    def build_model(self, seed: int) -> nn.Module:
        torch.manual_seed(seed)
        return TinyLM(self.cfg).to(self.device)

    def train_loss(self, model: nn.Module, gen: torch.Generator) -> torch.Tensor:
        x, y = self.data.batch("train", self.batch_size, self.cfg.seq_len, gen)
        _, loss = model(x.to(self.device), y.to(self.device))
        assert loss is not None
        return loss

    @torch.no_grad()
    def val_loss(self, model: nn.Module) -> float:
        if not self._val:
            self._val = self.data.val_batches(
                self.val_batches, self.batch_size, self.cfg.seq_len, seed_for(self.seed, "val")
            )
        model.eval()
        losses = [
            model.lm_loss(x.to(self.device), y.to(self.device)).item()  # type: ignore[operator]
            for x, y in self._val
        ]
        model.train()
        return sum(losses) / len(losses)


@dataclass
class MLPWorkload:
    """Digit classification on MNIST-5k with an :class:`MLP` (cross-entropy)."""

    data: MNISTSplit
    hidden: tuple[int, ...] = (256,)
    batch_size: int = 128
    name: str = "mlp"
    device: str = "cpu"

    def build_model(self, seed: int) -> nn.Module:
        torch.manual_seed(seed)
        return MLP(self.data.x_train.shape[1], self.hidden).to(self.device)

    def train_loss(self, model: nn.Module, gen: torch.Generator) -> torch.Tensor:
        idx = torch.randint(0, len(self.data.x_train), (self.batch_size,), generator=gen)
        x = self.data.x_train[idx].to(self.device)
        return F.cross_entropy(model(x), self.data.y_train[idx].to(self.device))

    @torch.no_grad()
    def val_loss(self, model: nn.Module) -> float:
        model.eval()
        loss = F.cross_entropy(
            model(self.data.x_val.to(self.device)), self.data.y_val.to(self.device)
        )
        model.train()
        return float(loss)

    @torch.no_grad()
    def val_accuracy(self, model: nn.Module) -> float:
        pred = model(self.data.x_val.to(self.device)).argmax(dim=1).cpu()
        return float((pred == self.data.y_val).float().mean())


@dataclass(frozen=True)
class TrainSpec:
    """Optimisation settings shared by every scheme of a comparison.

    Attributes:
        steps: optimizer steps.
        lr: peak learning rate.
        warmup_frac: share of the steps in linear warm-up.
        min_lr_frac: the cosine decay's final rate, as a share of ``lr`` (1: no decay).
        betas: AdamW's moment coefficients.
        weight_decay: decoupled weight decay of the matrices.
        fp8_group_size: elements per scale of FP8 matrices (``None``: per tensor).
        int4_group_size: elements per scale of INT4 matrices.
        grad_clip: global gradient-norm clip (0: none).
        quantize_all: quantize norms, biases, embeddings and routers too.
        eco_options: :class:`~icml26.eco.optim.ECOAdamW` ablation switches, as pairs.
    """

    steps: int
    lr: float
    warmup_frac: float = 0.05
    min_lr_frac: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.0
    fp8_group_size: int | None = None
    int4_group_size: int | None = 16
    grad_clip: float = 1.0
    quantize_all: bool = False
    eco_options: tuple[tuple[str, Any], ...] = ()

    def lr_factor(self, step: int) -> float:
        """Warm-up then cosine decay to ``min_lr_frac`` (multiplier of ``lr`` at ``step``)."""
        warmup = max(1, int(self.warmup_frac * self.steps))
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, self.steps - warmup))
        return self.min_lr_frac + (1 - self.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * progress))


@dataclass
class TrainResult:
    """One training run's record (JSON-friendly through :meth:`as_dict`).

    Attributes:
        losses: training loss per step.
        final_loss: mean training loss over the last 10% of the steps.
        val_loss: validation loss of the final weights.
        memory: static bytes by role (:class:`~icml26.eco.memory.StaticMemory`).
        peak: ``{"static", "transient", "peak"}`` bytes of the last step, when measured.
        step_seconds: mean CPU seconds of ``optimizer.step()``.
        n_params: the model's parameter count.
        extra: other figures (``val_accuracy``).
    """

    losses: list[float]
    final_loss: float
    val_loss: float
    memory: dict[str, float]
    peak: dict[str, float] | None
    step_seconds: float
    n_params: int
    extra: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The record as plain JSON values."""
        return asdict(self)


def _set_next_lr(opt: Optimizer, spec: TrainSpec, step: int) -> None:
    """Tell ECO the rate of the step that will replay this step's error (scale at replay)."""
    for group in opt.param_groups:
        group["next_lr"] = group["initial_lr"] * spec.lr_factor(step + 1)


def train(
    workload: Any,
    scheme: str,
    spec: TrainSpec,
    seed: int,
    *,
    measure_peak: bool = False,
    on_step: Callable[[int, float], None] | None = None,
) -> TrainResult:
    """Train ``workload``'s model from scratch under ``scheme``.

    The model's initial weights, the training batches and stochastic rounding draw from
    separate streams of ``seed`` (``seed_for(seed, "model" | "batches" | "rounding")``), so
    every scheme trained with the same seed sees the same initialisation and batches.

    Args:
        workload: a :class:`Workload`.
        scheme: a scheme name (:data:`~icml26.eco.schemes.SCHEMES`).
        spec: the optimisation settings.
        seed: the run's seed.
        measure_peak: measure the peak memory of the last step (forward, backward, step).
        on_step: called with ``(step, loss)`` after every step.

    Returns:
        The run's :class:`TrainResult`.

    Raises:
        FloatingPointError: the loss became NaN or infinite.
        ValueError: an unknown scheme.
    """
    parse_scheme(scheme)
    model = workload.build_model(seed_for(seed, "model"))
    opt = make_optimizer(
        scheme,
        model,
        lr=spec.lr,
        betas=spec.betas,
        weight_decay=spec.weight_decay,
        fp8_group_size=spec.fp8_group_size,
        int4_group_size=spec.int4_group_size,
        seed=seed_for(seed, "rounding"),
        quantize_all=spec.quantize_all,
        eco_options=dict(spec.eco_options),
    )
    params = list(model.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, spec.lr_factor)
    gen = torch.Generator().manual_seed(seed_for(seed, "batches"))
    device = params[0].device
    losses: list[float] = []
    peak: dict[str, float] | None = None
    step_time = 0.0

    def one_step(step: int) -> float:
        nonlocal step_time
        loss = workload.train_loss(model, gen)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{scheme}: loss became {loss.item()} at step {step}")
        loss.backward()
        if spec.grad_clip > 0:
            nn.utils.clip_grad_norm_(params, spec.grad_clip)
        _set_next_lr(opt, spec, step)
        t0 = time.thread_time()
        opt.step()
        step_time += time.thread_time() - t0
        opt.zero_grad(set_to_none=True)
        return float(loss.detach())

    for step in range(spec.steps):
        if measure_peak and step == spec.steps - 1:
            loss, mem = peak_memory(lambda s=step: one_step(s), params, opt, device=device)
            peak = {"static": mem.static, "transient": mem.transient, "peak": mem.peak}
        else:
            loss = one_step(step)
        sched.step()
        losses.append(loss)
        if on_step is not None:
            on_step(step, loss)
    val = workload.val_loss(model)
    extra: dict[str, float] = {}
    if hasattr(workload, "val_accuracy"):
        extra["val_accuracy"] = workload.val_accuracy(model)
    mem_static = static_memory(params, opt)
    tail = max(1, spec.steps // 10)
    return TrainResult(
        losses=losses,
        final_loss=sum(losses[-tail:]) / tail,
        val_loss=val,
        memory=mem_static.as_dict(),
        peak=peak,
        step_seconds=step_time / spec.steps,
        n_params=mem_static.n_params,
        extra=extra,
    )
