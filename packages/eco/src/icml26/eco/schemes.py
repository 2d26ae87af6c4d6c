"""Training schemes compared in the experiments, by name, and the optimizer each one builds.

``fp32`` is full-precision AdamW (``torch.optim.AdamW``). The others are
``<kind>_<format>_<rounding>`` with kind ``master`` (FP32 master weights + quantized working
weights), ``naive`` (master weights removed, no compensation) or ``eco``; format ``fp8`` or
``int4``; rounding ``rtn`` or ``sr``. Matrices (``ndim >= 2``) are quantized with the
configured group size and take weight decay; vectors (norm gains, biases) are quantized with a
per-tensor scale and no weight decay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn
from torch.optim import Optimizer

from icml26.eco.config import ALL_SCHEMES
from icml26.eco.optim import ECOAdamW, MasterWeightAdamW

__all__ = ["SCHEMES", "Scheme", "make_optimizer", "parse_scheme"]

SCHEMES = ALL_SCHEMES


@dataclass(frozen=True)
class Scheme:
    name: str
    kind: Literal["fp32", "master", "naive", "eco"]
    fmt: Literal["fp8", "int4"] | None
    rounding: Literal["rtn", "sr"] | None

    @property
    def master_name(self) -> str | None:
        """The master-weight scheme with the same format and rounding (``None`` for fp32)."""
        return None if self.fmt is None else f"master_{self.fmt}_{self.rounding}"


def parse_scheme(name: str) -> Scheme:
    """``"eco_fp8_rtn"`` → ``Scheme(kind="eco", fmt="fp8", rounding="rtn")``."""
    if name == "fp32":
        return Scheme(name, "fp32", None, None)
    if name not in SCHEMES:
        raise ValueError(f"unknown scheme {name!r}; schemes: {', '.join(SCHEMES)}")
    kind, fmt, rounding = name.split("_")
    return Scheme(name, kind, fmt, rounding)  # type: ignore[arg-type]


def make_optimizer(
    scheme: str | Scheme,
    model: nn.Module,
    *,
    lr: float,
    betas: tuple[float, float] = (0.9, 0.95),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    fp8_group_size: int | None = None,
    int4_group_size: int | None = 16,
    seed: int = 0,
    eco_options: dict[str, Any] | None = None,
) -> Optimizer:
    """The optimizer of ``scheme`` over ``model``'s parameters (attached to ``model``).

    ``eco_options`` go to :class:`ECOAdamW` of an ``eco_*`` scheme (the ablation switches
    ``scale_order``, ``error_buffer``); other schemes refuse them."""
    s = parse_scheme(scheme) if isinstance(scheme, str) else scheme
    if eco_options and s.kind != "eco":
        raise ValueError(f"eco_options {sorted(eco_options)} apply to eco_* schemes, not {s.name}")
    matrices = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    if s.kind == "fp32":
        groups = [
            {"params": matrices, "weight_decay": weight_decay},
            {"params": vectors, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(
            [g for g in groups if g["params"]], lr=lr, betas=betas, eps=eps, foreach=False
        )
    group_size = fp8_group_size if s.fmt == "fp8" else int4_group_size
    groups = [
        {"params": matrices, "weight_decay": weight_decay, "group_size": group_size},
        {"params": vectors, "weight_decay": 0.0, "group_size": None},
    ]
    groups = [g for g in groups if g["params"]]
    opt: ECOAdamW | MasterWeightAdamW
    common = {
        "lr": lr,
        "betas": betas,
        "eps": eps,
        "fmt": s.fmt,
        "rounding": s.rounding,
        "seed": seed,
    }
    if s.kind == "master":
        opt = MasterWeightAdamW(groups, **common)  # type: ignore[arg-type]
    else:
        opt = ECOAdamW(
            groups,
            error_feedback=s.kind == "eco",
            **common,  # type: ignore[arg-type]
            **(eco_options or {}),
        )
    opt.attach(model)
    return opt
