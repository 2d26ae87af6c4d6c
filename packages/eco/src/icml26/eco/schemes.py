"""Training schemes compared in the experiments, by name, and the optimizer each one builds.

``fp32`` is full-precision AdamW (``torch.optim.AdamW``). The others are
``<kind>_<format>_<rounding>`` with kind ``master`` (FP32 master weights + quantized working
weights), ``naive`` (master weights removed, no compensation) or ``eco``; format ``fp8`` or
``int4``; rounding ``rtn`` or ``sr``. Parameters are grouped by role
(:mod:`icml26.eco.roles`): matrices and stacked experts are quantized with the configured group
size and take weight decay; norms, biases, embeddings and routers stay float32 (with
``quantize_all``, they are quantized too, vectors with a per-tensor scale); norms and biases
take no weight decay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn
from torch.optim import Optimizer

from icml26.eco.config import ALL_SCHEMES
from icml26.eco.optim import ECOAdamW, MasterWeightAdamW
from icml26.eco.roles import role_groups

__all__ = ["SCHEMES", "Scheme", "make_optimizer", "parse_scheme"]

SCHEMES = ALL_SCHEMES


@dataclass(frozen=True)
class Scheme:
    """A training scheme: ``kind`` (``fp32``, ``master``, ``naive``, ``eco``), weight format
    and rounding (``None`` for ``fp32``)."""

    name: str
    kind: Literal["fp32", "master", "naive", "eco"]
    fmt: Literal["fp8", "int4"] | None
    rounding: Literal["rtn", "sr"] | None

    @property
    def master_name(self) -> str | None:
        """The master-weight scheme with the same format and rounding (``None`` for fp32)."""
        return None if self.fmt is None else f"master_{self.fmt}_{self.rounding}"

    @property
    def naive_name(self) -> str | None:
        """The naive-removal scheme with the same format and rounding (``None`` for fp32)."""
        return None if self.fmt is None else f"naive_{self.fmt}_{self.rounding}"


def parse_scheme(name: str) -> Scheme:
    """``"eco_fp8_rtn"`` → ``Scheme(kind="eco", fmt="fp8", rounding="rtn")``.

    Args:
        name: a scheme name.

    Returns:
        The parsed scheme.

    Raises:
        ValueError: an unknown name.
    """
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
    quantize_all: bool = False,
    eco_options: dict[str, Any] | None = None,
) -> Optimizer:
    """The optimizer of ``scheme`` over ``model``, with parameter groups by role.

    Matrices and stacked experts take ``weight_decay``; norms and biases none
    (:func:`~icml26.eco.roles.role_groups`). For a quantized scheme, the model's quantized
    parameters become :class:`~icml26.eco.qweight.QuantizedWeight` parameters; norms, biases,
    embeddings and routers stay float32 unless ``quantize_all``.

    Args:
        scheme: a name of :data:`SCHEMES` or a parsed :class:`Scheme`.
        model: the model.
        lr: learning rate.
        betas: AdamW's moment coefficients.
        eps: AdamW's epsilon.
        weight_decay: decoupled weight decay of the matrices.
        fp8_group_size: elements per scale for FP8 matrices (``None``: per tensor).
        int4_group_size: elements per scale for INT4 matrices.
        seed: seeds stochastic rounding.
        quantize_all: quantize every role (vectors with one scale per tensor).
        eco_options: :class:`ECOAdamW` ablation switches (``scale_order``, ``error_buffer``,
            ``injection_scale``) for an ``eco_*`` scheme.

    Returns:
        The optimizer (``torch.optim.AdamW`` for ``fp32``).

    Raises:
        ValueError: an unknown scheme, or ``eco_options`` for a scheme that is not ECO.
    """
    s = parse_scheme(scheme) if isinstance(scheme, str) else scheme
    if eco_options and s.kind != "eco":
        raise ValueError(f"eco_options {sorted(eco_options)} apply to eco_* schemes, not {s.name}")
    groups = role_groups(model, quantize_all=quantize_all, weight_decay=weight_decay)
    if s.kind == "fp32":
        plain = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in groups]
        return torch.optim.AdamW(plain, lr=lr, betas=betas, eps=eps, foreach=False)
    common: dict[str, Any] = {
        "lr": lr,
        "betas": betas,
        "eps": eps,
        "fmt": s.fmt,
        "group_size": fp8_group_size if s.fmt == "fp8" else int4_group_size,
        "rounding": s.rounding,
        "seed": seed,
        "model": model,
    }
    if s.kind == "master":
        return MasterWeightAdamW(groups, **common)
    return ECOAdamW(groups, error_feedback=s.kind == "eco", **common, **(eco_options or {}))
