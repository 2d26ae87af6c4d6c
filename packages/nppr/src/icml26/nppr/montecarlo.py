"""The Monte-Carlo core shared by PR and NPPR: per-input rate of label-keeping draws.

``PR_D(x, y) = P_{δ ~ D(x, y)} [ f(x + δ) = y ]`` is estimated per input by ``m`` i.i.d.
draws; the metric is the mean over inputs (inputs the model already misclassifies count with
whatever rate the perturbations give, usually 0), so AR <= NPPR <= PR <= 1 holds input by
input (δ = 0 is in the ball, so a point is adversarially robust only if it is clean-correct).
The official code instead averages over the clean-correct inputs only; :meth:`Estimate.on`
with the clean-correct mask gives that convention from the same per-input rates.

Data comes as a ``torch.utils.data.DataLoader`` (or any iterable of ``(x, y)`` batches), or
as a pair of tensors ``(x, y)``, which is batched here; only one batch is on the device at a
time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.nppr.stats import Estimate, estimate_from_rates
from icml26.nppr.validation import check_eval_inputs

__all__ = [
    "Data",
    "PerturbationSampler",
    "clip_to_ball",
    "estimate_pr_with",
    "frozen_parameters",
    "is_tensor_pair",
    "iter_batches",
    "kept_rates",
    "model_device",
    "predictions",
]

#: ``sampler(x, y, m, generator) -> δ`` of shape ``[m, B, *x.shape[1:]]`` inside the ball.
PerturbationSampler = Callable[[torch.Tensor, torch.Tensor, int, torch.Generator], torch.Tensor]

#: A ``DataLoader`` (any iterable of ``(x, y)`` batches) or a pair of tensors ``(x, y)``.
Data = Iterable[Any] | tuple[torch.Tensor, torch.Tensor]


def is_tensor_pair(data: Any) -> bool:
    """Whether ``data`` is a pair ``(x, y)`` of tensors (rather than a loader)."""
    return (
        isinstance(data, tuple | list)
        and len(data) == 2
        and all(isinstance(t, torch.Tensor) for t in data)
        and data[0].ndim >= 2
    )


def iter_batches(data: Data, batch_size: int = 256) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """``(x, y)`` batches from a loader or from a pair of tensors.

    Args:
        data: a ``DataLoader`` / iterable of ``(x, y)`` batches (extra items after the first
            two are ignored), or ``(x, y)`` tensors of all inputs.
        batch_size: the batch size when ``data`` is a pair of tensors.

    Yields:
        ``(x, y)`` tensor batches.

    Raises:
        TypeError: ``data`` is neither, or a batch is not ``(x, y)`` tensors.
        ValueError: a pair whose ``y`` is not one label per input.
    """
    if is_tensor_pair(data):
        x, y = data  # type: ignore[misc]
        if y.ndim != 1 or len(y) != len(x):
            raise ValueError(
                f"y must be a 1-D label vector with one label per input: x has {len(x)} inputs, "
                f"y has shape {tuple(y.shape)}"
            )
        for i in range(0, len(x), batch_size):
            yield x[i : i + batch_size], y[i : i + batch_size]
        return
    if isinstance(data, torch.Tensor) or not isinstance(data, Iterable):
        raise TypeError(
            "data must be a DataLoader (an iterable of (x, y) batches) or a pair (x, y) of "
            f"tensors, got {type(data).__name__}"
        )
    for batch in data:
        if not isinstance(batch, tuple | list) or len(batch) < 2:
            raise TypeError(f"each batch must be (x, y, ...), got {type(batch).__name__}")
        x, y = batch[0], batch[1]
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            raise TypeError("each batch must hold tensors x and y")
        yield x, y


@contextmanager
def frozen_parameters(model: nn.Module) -> Iterator[nn.Module]:
    """Turn off gradients of every parameter of ``model`` for the block, then give each
    parameter its own ``requires_grad`` back (a layer the user froze stays frozen), also when
    the block raises.

    Args:
        model: the classifier fitted against.

    Yields:
        ``model``.
    """
    flags = [p.requires_grad for p in model.parameters()]
    try:
        for p in model.parameters():
            p.requires_grad_(False)
        yield model
    finally:
        for p, flag in zip(model.parameters(), flags, strict=True):
            p.requires_grad_(flag)


def model_device(model: nn.Module, fallback: torch.device | None = None) -> torch.device:
    """The device of ``model``'s first parameter (``fallback`` or CPU for a parameter-free one).

    Args:
        model: the classifier.
        fallback: the device to use when the model has no parameters.

    Returns:
        A ``torch.device``.
    """
    for p in model.parameters():
        return p.device
    return fallback if fallback is not None else torch.device("cpu")


def clip_to_ball(
    x: torch.Tensor, delta: torch.Tensor, eps: float, clip: tuple[float, float] = (0.0, 1.0)
) -> torch.Tensor:
    """``x + Π(δ)``: δ clipped to the L-inf ball, then the image to the input range (which
    only moves a coordinate towards ``x``, so the result stays in the ball).

    Args:
        x: inputs.
        delta: perturbations broadcastable to ``x``.
        eps: the L-inf budget.
        clip: the input range.

    Returns:
        The perturbed inputs.
    """
    return (x + delta.clamp(-eps, eps)).clamp(*clip)


@torch.no_grad()
def predictions(model: nn.Module, data: Data, batch_size: int = 1024) -> tuple[np.ndarray, ...]:
    """The model's labels and the true labels, batch by batch.

    Args:
        model: the classifier (eval mode).
        data: loader or ``(x, y)``.
        batch_size: for a pair of tensors.

    Returns:
        ``(predicted, true)`` int arrays over all inputs.
    """
    device = model_device(model)
    pred, true = [], []
    for x, y in iter_batches(data, batch_size):
        pred.append(model(x.to(device)).argmax(-1).cpu())
        true.append(y.cpu())
    return torch.cat(pred).numpy(), torch.cat(true).numpy()


@torch.no_grad()
def kept_rates(
    model: nn.Module,
    data: Data,
    sampler: PerturbationSampler,
    m: int,
    eps: float,
    *,
    batch_size: int = 2048,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
) -> np.ndarray:
    """Per-input fraction of ``m`` draws ``δ ~ sampler`` with ``argmax f(x + δ) = y``.

    Args:
        model: the classifier (eval mode).
        data: loader or ``(x, y)`` (validated batch by batch).
        sampler: draws perturbations (a :class:`~icml26.nppr.baselines.FixedNoise`, a fitted
            mixture's ``sampler``).
        m: draws per input.
        eps: the L-inf budget.
        batch_size: inputs times draws per forward pass (for a pair of tensors).
        clip: the input range.
        seed: seeds the draws.

    Returns:
        ``[N]`` float64 rates in ``[0, 1]``.

    Raises:
        ValueError: ``m < 1`` or bad inputs (see :func:`~icml26.nppr.validation.check_eval_inputs`).
    """
    if m < 1:
        raise ValueError(f"the number of Monte-Carlo draws must be >= 1, got {m}")
    out = []
    g: torch.Generator | None = None
    for xb_all, yb_all in iter_batches(data, max(1, batch_size // m)):
        check_eval_inputs(model, xb_all, yb_all, eps, clip)
        device = model_device(model, xb_all.device)
        if g is None:
            g = torch.Generator(device=device).manual_seed(seed)
        per_chunk = max(1, batch_size // m)
        for i in range(0, len(yb_all), per_chunk):
            xb = xb_all[i : i + per_chunk].to(device)
            yb = yb_all[i : i + per_chunk].to(device)
            delta = sampler(xb, yb, m, g)  # [m, B, ...]
            xp = clip_to_ball(xb.unsqueeze(0), delta, eps, clip)
            pred = model(xp.flatten(0, 1)).argmax(-1).view(m, -1)
            out.append((pred == yb.unsqueeze(0)).float().mean(0).cpu())
    if not out:
        raise ValueError("the data holds no input")
    return torch.cat(out).numpy().astype(np.float64)


def estimate_pr_with(
    model: nn.Module,
    data: Data,
    sampler: PerturbationSampler,
    eps: float,
    m: int,
    *,
    level: float = 0.95,
    clip: tuple[float, float] = (0.0, 1.0),
    seed: int = 0,
    batch_size: int = 2048,
) -> Estimate:
    """PR of ``model`` under ``sampler``, with its interval and cost.

    Args:
        model: the classifier (eval mode).
        data: loader or ``(x, y)``.
        sampler: the perturbation distribution.
        eps: the L-inf budget.
        m: draws per input.
        level: the interval's confidence.
        clip: the input range.
        seed: seeds the draws.
        batch_size: inputs times draws per forward pass.

    Returns:
        An :class:`~icml26.nppr.stats.Estimate` (per-input rates in ``.rates``).
    """
    t0 = time.perf_counter()
    rates = kept_rates(model, data, sampler, m, eps, clip=clip, seed=seed, batch_size=batch_size)
    return estimate_from_rates(
        rates, m, level=level, forward_passes=len(rates) * m, seconds=time.perf_counter() - t0
    )
