"""Device settings checked in config validation, before any run folder exists.

A config with a ``device`` field calls :func:`check_torch_device` in ``__post_init__``, so
``--set device=cuda`` on a machine without CUDA is a usage error (exit 2) that names the
problem, instead of a crash after the run started. torch is imported only when CUDA is asked
for: configs stay light for ``icml26 list`` and ``show``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["check_torch_device"]


def check_torch_device(
    device: str, *, field: str = "device", allowed: Sequence[str] = ("cpu",)
) -> None:
    """Accept a name in ``allowed`` as is, or ``cuda`` / ``cuda:N`` that torch can see.

    Args:
        device: the configured value.
        field: the config field's name, for the message.
        allowed: the non-CUDA names the package accepts (e.g. ``("", "cpu", "mps")``).

    Raises:
        ValueError: any other value, or a CUDA device that is not visible to torch.
    """
    if device in allowed:
        return
    if not re.fullmatch(r"cuda(:\d+)?", device):
        names = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{field} must be {names}, 'cuda' or 'cuda:N', got {device!r}")
    import torch

    if not torch.cuda.is_available():
        raise ValueError(
            f"{field} {device!r} requested but no CUDA device is visible to torch "
            f"(torch {torch.__version__}); use {field}=cpu"
        )
    index = int(device.partition(":")[2] or 0)
    if index >= torch.cuda.device_count():
        raise ValueError(
            f"{field} {device!r} requested but torch sees {torch.cuda.device_count()} CUDA "
            "device(s)"
        )
