"""One training run of a workload under a scheme: same seed, data order and steps for all.

A workload builds its model (the same initial weights for every scheme, from ``seed``), draws
training batches from a generator seeded by ``seed`` (the same batches for every scheme), and
evaluates a fixed validation set. :func:`train` runs AdamW-family optimizers with linear
warm-up then cosine decay (the paper's theory assumes a decaying learning rate) and records
the loss curve, the final/validation loss, static memory (measured, see
:mod:`icml26.eco.memory`), ``held_memory_mb`` (the largest weights + gradients + working copy
+ optimizer state held after a backward pass, over every step: an accounting of the buffers, not
an allocator peak; activations and the step's temporaries are not in it), on CUDA also
``peak_memory_mb`` (``torch.cuda.max_memory_allocated``, a real peak), and the time spent in
``optimizer.step()`` (+ re-materializing weights).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import nn

from icml26.eco.data import MNISTSplit, TextData
from icml26.eco.memory import static_memory
from icml26.eco.models import MLP, LMConfig, TinyLM
from icml26.eco.optim import QuantizedOptimizer
from icml26.eco.schemes import make_optimizer, parse_scheme

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
                self.val_batches, self.batch_size, self.cfg.seq_len, self.seed
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
    """Optimisation settings shared by every scheme of a comparison."""

    steps: int
    lr: float
    warmup_frac: float = 0.05
    min_lr_frac: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.0
    fp8_group_size: int | None = None
    int4_group_size: int | None = 16
    grad_clip: float = 1.0
    eco_options: tuple[tuple[str, Any], ...] = ()  # ECOAdamW ablation switches, as pairs

    def lr_factor(self, step: int) -> float:
        """Warm-up then cosine decay to ``min_lr_frac`` (multiplier of ``lr`` at ``step``)."""
        warmup = max(1, int(self.warmup_frac * self.steps))
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, self.steps - warmup)
        return self.min_lr_frac + (1 - self.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * progress))


@dataclass
class TrainResult:
    losses: list[float]
    final_loss: float
    val_loss: float
    static_bytes: float
    static_bytes_per_param: float
    memory: dict[str, float]
    held_memory_mb: float
    peak_memory_mb: float | None
    step_seconds: float
    n_params: int
    extra: dict[str, float] = field(default_factory=dict)


def _grad_bytes(model: nn.Module) -> int:
    return sum(p.grad.nbytes for p in model.parameters() if p.grad is not None)


def train(
    workload: Any,
    scheme: str,
    spec: TrainSpec,
    seed: int,
    *,
    on_step: Callable[[int, float], None] | None = None,
) -> TrainResult:
    """Train ``workload``'s model from scratch under ``scheme``; see the module docstring."""
    parse_scheme(scheme)
    model = workload.build_model(seed)
    params = list(model.parameters())
    opt = make_optimizer(
        scheme,
        model,
        lr=spec.lr,
        betas=spec.betas,
        weight_decay=spec.weight_decay,
        fp8_group_size=spec.fp8_group_size,
        int4_group_size=spec.int4_group_size,
        seed=seed,
        eco_options=dict(spec.eco_options),
    )
    sched = torch.optim.lr_scheduler.LambdaLR(opt, spec.lr_factor)
    gen = torch.Generator().manual_seed(seed + 1)
    cuda = any(p.is_cuda for p in params)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    losses: list[float] = []
    peak = 0
    step_time = 0.0
    for step in range(spec.steps):
        loss = workload.train_loss(model, gen)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{scheme}: loss became {loss.item()} at step {step}")
        loss.backward()
        if spec.grad_clip > 0:
            nn.utils.clip_grad_norm_(params, spec.grad_clip)
        # every step, at the point where weights, gradients, the working copy and the optimizer
        # state coexist (after backward): the largest such total, not an allocator peak
        peak = max(peak, static_memory(params, opt).total + _grad_bytes(model))
        t0 = time.perf_counter()
        opt.step()
        if isinstance(opt, QuantizedOptimizer):
            opt.materialize()  # the cost of producing the working weights counts too
        step_time += time.perf_counter() - t0
        opt.zero_grad(set_to_none=True)
        sched.step()
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
    if isinstance(opt, QuantizedOptimizer):
        opt.materialize()
    val = workload.val_loss(model)
    extra: dict[str, float] = {}
    if hasattr(workload, "val_accuracy"):
        extra["val_accuracy"] = workload.val_accuracy(model)
    if isinstance(opt, QuantizedOptimizer):
        opt.release()  # measure static memory as it is between steps
    mem = static_memory(params, opt)
    tail = max(1, spec.steps // 10)
    # a true allocator peak exists only on CUDA; on the CPU there is none to read (None)
    peak_mb = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    return TrainResult(
        losses=losses,
        final_loss=sum(losses[-tail:]) / tail,
        val_loss=val,
        static_bytes=float(mem.total),
        static_bytes_per_param=mem.bytes_per_param,
        memory=mem.as_dict(),
        held_memory_mb=peak / 2**20,
        peak_memory_mb=peak_mb,
        step_seconds=step_time / spec.steps,
        n_params=mem.n_params,
        extra=extra,
    )
