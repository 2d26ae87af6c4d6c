"""Data in: a tensor with its targets, or a ``DataLoader`` of mini-batches.

Every posterior's ``fit`` and ``predict`` take either form::

    post.fit(x, y)                       # tensors (N, ...) and (N,) / (N, C)
    post.fit(DataLoader(TensorDataset(x, y), batch_size=256))
    post.predict(x_test)                 # a tensor ...
    post.predict(test_loader)            # ... or a loader of x, (x,) or (x, y) batches

A loader yields ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, mask)`` per batch (lists work as
tuples, so ``TensorDataset`` loaders do). Tensors are cut into ``batch_size`` chunks, so no
step pushes all N inputs through the network at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch

__all__ = ["Batch", "Data", "count", "iter_batches"]

#: A tensor of inputs ``(N, ...)`` or an iterable (a ``DataLoader``) of batches.
Data = torch.Tensor | Iterable[Any]
#: ``(x, y or None, mask or None)``.
Batch = tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]


def _split(item: Any, where: str) -> Batch:
    if isinstance(item, torch.Tensor):
        return item, None, None
    if isinstance(item, tuple | list) and 1 <= len(item) <= 3:
        parts = list(item) + [None] * (3 - len(item))
        if not isinstance(parts[0], torch.Tensor):
            raise TypeError(
                f"{where}: the first element of a batch must be the input tensor, "
                f"got {type(parts[0]).__name__}"
            )
        return parts[0], parts[1], parts[2]
    raise TypeError(
        f"{where}: a batch must be x, (x,), (x, y) or (x, y, mask) tensors, "
        f"got {type(item).__name__}"
    )


def iter_batches(
    data: Data,
    y: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    *,
    batch_size: int = 1024,
    where: str = "fit",
) -> Iterator[Batch]:
    """Yield ``(x, y, mask)`` mini-batches from tensors or from a loader.

    Args:
        data: inputs ``(N, ...)`` or an iterable of batches.
        y: targets for tensor ``data`` (``None`` with a loader, which carries its own).
        mask: observed-entry mask for tensor ``data``.
        batch_size: chunk size for tensor ``data``.
        where: the calling method's name, for error messages.

    Yields:
        ``(x, y, mask)`` with ``y`` and ``mask`` ``None`` where absent.

    Raises:
        TypeError: ``data`` is neither a tensor nor an iterable of batches.
        ValueError: targets passed beside a loader, or lengths that differ.
    """
    if isinstance(data, torch.Tensor):
        if data.ndim < 2:
            raise ValueError(
                f"{where}: inputs must be a batch of shape (N, features...), got shape "
                f"{tuple(data.shape)}; add the batch dimension with x[None] for one example"
            )
        n = data.shape[0]
        for name, t in (("targets", y), ("mask", mask)):
            if t is not None and (not isinstance(t, torch.Tensor) or t.shape[:1] != (n,)):
                got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
                raise ValueError(f"{where}: {n} inputs but {name} of shape {got}")
        for s in range(0, n, batch_size):
            yield (
                data[s : s + batch_size],
                None if y is None else y[s : s + batch_size],
                None if mask is None else mask[s : s + batch_size],
            )
        return
    if hasattr(data, "__array__") and hasattr(data, "shape"):
        raise TypeError(
            f"{where}: inputs must be a torch.Tensor (or a DataLoader), got "
            f"{type(data).__name__}; wrap arrays with torch.as_tensor(x)"
        )
    if y is not None or mask is not None:
        raise ValueError(f"{where}: pass targets inside the loader's batches, not beside it")
    if not isinstance(data, Iterable):
        raise TypeError(
            f"{where}: data must be a tensor (N, ...) or an iterable of batches "
            f"(a DataLoader), got {type(data).__name__}"
        )
    for item in data:
        yield _split(item, where)


def count(data: Data) -> int:
    """The number of examples in ``data`` (one pass over a loader).

    Args:
        data: inputs or an iterable of batches.

    Returns:
        N.
    """
    if isinstance(data, torch.Tensor):
        return int(data.shape[0])
    return sum(int(x.shape[0]) for x, _, _ in iter_batches(data, where="count"))
