"""Parameter roles: which weights a low-precision training recipe stores quantized.

FP8 training recipes keep some parameters in high precision: normalisation gains, biases,
embeddings (and an output head tied to them) and MoE routers (small, and a flipped routing
decision changes which expert sees a token). :func:`parameter_roles` names every parameter's
role from the module that owns it and its name; :func:`role_groups` turns that into optimizer
parameter groups, with ``fmt=None`` (the parameter's own dtype) for those roles unless
``quantize_all=True``.

Roles, checked in this order:

* ``norm``: owned by a normalisation layer (``LayerNorm``, ``RMSNorm``, ``GroupNorm``,
  ``BatchNorm*``, ``InstanceNorm*``, ``LocalResponseNorm``, or any module whose class name ends
  in ``Norm``);
* ``embedding``: owned by ``nn.Embedding``/``nn.EmbeddingBag`` (a tied output head shares the
  parameter and so the role);
* ``router``: owned by a module whose name (last part) is ``router`` or ``gate``, or contains
  ``router`` (Mixtral's ``block_sparse_moe.gate``, Switch's ``router``; not Llama's
  ``gate_proj``);
* ``bias``: a parameter named ``bias``, or any other parameter with fewer than two dimensions;
* ``weight``: everything else (the matrices and stacked experts that are quantized).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch import nn

__all__ = ["HIGH_PRECISION_ROLES", "ROLES", "parameter_roles", "role_groups"]

ROLES = ("weight", "norm", "embedding", "router", "bias")
#: the roles kept in high precision (``fmt=None``) by default
HIGH_PRECISION_ROLES = frozenset({"norm", "embedding", "router", "bias"})

_NORMS = (
    nn.LayerNorm,
    nn.GroupNorm,
    nn.LocalResponseNorm,
    nn.modules.batchnorm._NormBase,
    nn.RMSNorm,
)


def _module_role(qualified: str, module: nn.Module) -> str | None:
    if isinstance(module, _NORMS) or type(module).__name__.endswith("Norm"):
        return "norm"
    if isinstance(module, nn.Embedding | nn.EmbeddingBag):
        return "embedding"
    last = qualified.rsplit(".", 1)[-1].lower()
    if last in ("router", "gate") or "router" in last:
        return "router"
    return None


def parameter_roles(model: nn.Module) -> dict[str, str]:
    """The role of every trainable parameter of ``model``, by its qualified name.

    A parameter shared by several modules (tied weights) takes the first role found among its
    owners in the order of :data:`ROLES` after ``weight`` (so a head tied to an embedding is an
    embedding).

    Args:
        model: the model.

    Returns:
        ``{name: role}`` for each parameter ``model.named_parameters()`` yields (requiring
        gradients or not), roles from :data:`ROLES`.
    """
    found: dict[int, set[str]] = {}
    for qualified, module in model.named_modules():
        owner_role = _module_role(qualified, module)
        for pname, p in module._parameters.items():
            if p is None:
                continue
            role = owner_role or ("bias" if pname == "bias" or p.dim() < 2 else "weight")
            found.setdefault(id(p), set()).add(role)
    out = {}
    for name, p in model.named_parameters():
        roles = found.get(id(p), {"weight"})
        out[name] = next((r for r in ROLES[1:] if r in roles), "weight")
    return out


def role_groups(
    model: nn.Module,
    *,
    quantize_all: bool = False,
    weight_decay: float | None = None,
    params: Iterable[nn.Parameter] | None = None,
) -> list[dict[str, Any]]:
    """Optimizer parameter groups of ``model``'s trainable parameters, one per role.

    Args:
        model: the model.
        quantize_all: ``True`` stores every role in the optimizer's format; by default norms,
            biases, embeddings and routers keep their own dtype (``fmt=None``).
        weight_decay: if given, the decay of the matrices (``weight``, ``embedding``,
            ``router``); norms and biases get 0.
        params: restrict to these parameters (e.g. those requiring gradients); all trainable
            ones by default.

    Returns:
        Non-empty groups ``{"params": [...], "role": role}`` (plus ``"fmt": None`` for a high-
        precision role, ``"group_size": None`` for a quantized vector role, and
        ``"weight_decay"`` when asked).
    """
    allowed = None if params is None else {id(p) for p in params}
    roles = parameter_roles(model)
    by_role: dict[str, list[nn.Parameter]] = {r: [] for r in ROLES}
    for name, p in model.named_parameters():
        if not p.requires_grad or (allowed is not None and id(p) not in allowed):
            continue
        by_role[roles[name]].append(p)
    groups = []
    for role, ps in by_role.items():
        if not ps:
            continue
        group: dict[str, Any] = {"params": ps, "role": role}
        if role in HIGH_PRECISION_ROLES and not quantize_all:
            group["fmt"] = None
        elif role in ("norm", "bias"):
            group["group_size"] = None  # vectors: one scale per tensor
        if weight_decay is not None:
            group["weight_decay"] = 0.0 if role in ("norm", "bias") else weight_decay
        groups.append(group)
    return groups
