"""Task sources: each draws batches of regression tasks as point sequences ``x [B, N, Dx]``,
``y [B, N, 1]`` and knows its reference predictor (``oracle``).

* :class:`GPSource`: synthetic GP tasks (RBF, Matern-5/2, periodic; any input dimension) with
  the exact GP posterior as oracle.
* :class:`TabularSource`: random row subsets of a table (scikit-learn's diabetes by default,
  or a user's CSV); the reference is a GP whose ARD-RBF hyperparameters were fitted by
  marginal likelihood on the training rows.
* :class:`TemperatureSource`: windows of consecutive hours of Seattle's 2010 temperatures
  (``vega_datasets``), in time order: a streaming forecasting task.

Train and test tasks come from disjoint rows/time ranges.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from icml26.inctnp.gp import KERNELS, GPKernel, gp_predict

__all__ = [
    "GPSource",
    "TabularSource",
    "TaskBatch",
    "TemperatureSource",
    "load_csv_table",
    "make_source",
]


@dataclass
class TaskBatch:
    """A batch of point sequences and what the oracle needs to predict them."""

    x: torch.Tensor  # [B, N, Dx]
    y: torch.Tensor  # [B, N, 1]
    kernels: list[GPKernel] = field(default_factory=list)  # per task (GP reference)
    noise_std: float = 0.1


def _randu(g: torch.Generator, lo: float, hi: float) -> float:
    return lo + (hi - lo) * float(torch.rand((), generator=g))


class GPSource:
    """Tasks drawn from a GP prior.

    Args:
        kernel: ``rbf``, ``matern52``, ``periodic`` or ``mix`` (one of the three per task).
        dim_x: input dimension.
        noise_std: observation noise (the paper uses 0.1).
        x_range: inputs are uniform on ``[-x_range, x_range]^dim_x``.
    """

    ordered = False

    def __init__(
        self, kernel: str = "rbf", dim_x: int = 1, noise_std: float = 0.1, x_range: float = 2.0
    ) -> None:
        if kernel not in (*KERNELS, "mix"):
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)} or mix, got {kernel!r}")
        if dim_x < 1 or noise_std <= 0 or x_range <= 0:
            raise ValueError("dim_x must be >= 1 and noise_std, x_range positive")
        self.kernel, self.dim_x, self.noise_std, self.x_range = kernel, dim_x, noise_std, x_range

    def _draw_kernel(self, g: torch.Generator) -> GPKernel:
        name = self.kernel
        if name == "mix":
            name = KERNELS[int(torch.randint(len(KERNELS), (), generator=g))]
        ls = _randu(g, 0.3, 1.0) * math.sqrt(self.dim_x)
        if name == "periodic":
            return GPKernel("periodic", lengthscale=_randu(g, 0.5, 1.0), period=_randu(g, 0.8, 1.6))
        return GPKernel(name, lengthscale=ls)

    def sample(self, batch: int, n: int, g: torch.Generator, split: str = "train") -> TaskBatch:
        del split  # fresh draws: train and test never share a task
        x = (
            2 * torch.rand(batch, n, self.dim_x, generator=g, dtype=torch.float64) - 1
        ) * self.x_range
        kernels = [self._draw_kernel(g) for _ in range(batch)]
        ys = []
        for b, kern in enumerate(kernels):
            k = kern(x[b], x[b]) + 1e-6 * torch.eye(n, dtype=torch.float64)
            f = torch.linalg.cholesky(k) @ torch.randn(n, 1, generator=g, dtype=torch.float64)
            ys.append(f + self.noise_std * torch.randn(n, 1, generator=g, dtype=torch.float64))
        return TaskBatch(x.float(), torch.stack(ys).float(), kernels, self.noise_std)

    def oracle(
        self, tb: TaskBatch, n_ctx: int, xt: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Exact GP predictive at ``xt`` given the first ``n_ctx`` points of each task."""
        means, stds = [], []
        for b, kern in enumerate(tb.kernels):
            m, s = gp_predict(kern, tb.noise_std, tb.x[b, :n_ctx], tb.y[b, :n_ctx], xt[b])
            means.append(m)
            stds.append(s)
        return torch.stack(means), torch.stack(stds)


def _fit_gp_reference(
    x: np.ndarray, y: np.ndarray, seed: int, max_rows: int = 250
) -> tuple[GPKernel, float]:
    """ARD-RBF GP hyperparameters fitted by marginal likelihood (scikit-learn) on training rows.

    Large fitted lengthscales are ARD switching irrelevant features off, so scikit-learn's
    "close to the bound" warnings are silenced.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(x))[:max_rows]
    kern = ConstantKernel(1.0, (1e-2, 1e2)) * RBF(np.ones(x.shape[1]), (1e-2, 1e4)) + WhiteKernel(
        0.1, (1e-4, 1.0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gpr = GaussianProcessRegressor(kern, normalize_y=False, random_state=seed).fit(
            x[idx], y[idx]
        )
    params = gpr.kernel_.get_params()
    variance = float(params["k1__k1__constant_value"])
    ls = np.atleast_1d(params["k1__k2__length_scale"]).astype(float)
    noise = math.sqrt(float(params["k2__noise_level"]))
    return GPKernel("rbf", lengthscale=tuple(ls.tolist()), variance=variance), noise


def load_csv_table(
    path: str | os.PathLike[str], target: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Numeric features and one target column from a CSV; rows with missing values dropped."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"CSV file {path} does not exist")
    frame = pd.read_csv(path)
    if target not in frame.columns:
        raise ValueError(
            f"target column {target!r} is not in {path.name}; columns: {', '.join(map(str, frame.columns))}"
        )
    numeric = frame.select_dtypes("number")
    if target not in numeric.columns:
        raise ValueError(f"target column {target!r} in {path.name} is not numeric")
    numeric = numeric.dropna()
    features = [c for c in numeric.columns if c != target]
    if not features:
        raise ValueError(f"{path.name} has no numeric feature columns besides {target!r}")
    if len(numeric) < 20:
        raise ValueError(f"{path.name} has {len(numeric)} complete rows; at least 20 are needed")
    return numeric[features].to_numpy(float), numeric[target].to_numpy(float), features


class TabularSource:
    """Random subsets of a table's rows as regression tasks (features and target standardised).

    Rows are split once into train/test (``test_fraction``); tasks never mix the two. With a
    single table a network can memorise the training rows' x -> y map and become confidently
    wrong on test rows; training tasks therefore get their feature columns randomly permuted
    and sign-flipped and a random affine transform of y (``y' = s y + c``, ``|s|`` in
    [0.5, 1.5] with random sign, ``c ~ N(0, 0.5^2)``), so the map must be inferred from each
    task's context. Test tasks are never transformed.
    """

    ordered = False

    def __init__(
        self,
        x: np.ndarray,
        y: np.ndarray,
        *,
        name: str = "table",
        augment: bool = True,
        test_fraction: float = 0.3,
        seed: int = 0,
    ) -> None:
        x, y = np.asarray(x, float), np.asarray(y, float).reshape(-1)
        if x.ndim != 2 or len(x) != len(y):
            raise ValueError(
                f"x must be [rows, features] with one y per row, got {x.shape} and {y.shape}"
            )
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise ValueError("the table contains NaN or infinite values")
        if not 0 < test_fraction < 1:
            raise ValueError("test_fraction must be in (0, 1)")
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(x))
        n_test = max(1, round(test_fraction * len(x)))
        self.rows = {"test": order[:n_test], "train": order[n_test:]}
        train = self.rows["train"]
        mu, sd = x[train].mean(0), x[train].std(0) + 1e-8
        self.x = ((x - mu) / sd).astype(np.float32)
        self.y = ((y - y[train].mean()) / (y[train].std() + 1e-8)).astype(np.float32)
        self.name, self.dim_x, self.augment = name, x.shape[1], augment
        self.reference, self.noise_std = _fit_gp_reference(
            self.x[train].astype(float), self.y[train].astype(float), seed
        )

    @classmethod
    def diabetes(cls, seed: int = 0) -> TabularSource:
        from sklearn.datasets import load_diabetes

        data = load_diabetes()
        return cls(data.data, data.target, name="diabetes", seed=seed)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], target: str, seed: int = 0) -> TabularSource:
        x, y, _ = load_csv_table(path, target)
        return cls(x, y, name=Path(path).stem, seed=seed)

    def sample(self, batch: int, n: int, g: torch.Generator, split: str = "train") -> TaskBatch:
        rows = self.rows[split]
        if n > len(rows):
            raise ValueError(
                f"tasks of {n} points need at least {n} {split} rows; the table has {len(rows)}"
            )
        picks = np.stack(
            [rows[torch.randperm(len(rows), generator=g)[:n].numpy()] for _ in range(batch)]
        )
        x = torch.from_numpy(self.x[picks])
        y = torch.from_numpy(self.y[picks]).unsqueeze(-1)
        if split == "train" and self.augment:
            cols = torch.stack([torch.randperm(self.dim_x, generator=g) for _ in range(batch)])
            flips = torch.where(torch.rand(batch, 1, self.dim_x, generator=g) < 0.5, -1.0, 1.0)
            x = flips * torch.gather(x, 2, cols.unsqueeze(1).expand(-1, n, -1))
            sign = torch.where(torch.rand(batch, 1, 1, generator=g) < 0.5, -1.0, 1.0)
            scale = sign * (0.5 + torch.rand(batch, 1, 1, generator=g))
            y = scale * y + 0.5 * torch.randn(batch, 1, 1, generator=g)
        return TaskBatch(x, y, [self.reference] * batch, self.noise_std)

    oracle = GPSource.oracle


class TemperatureSource:
    """Windows of ``n`` consecutive hourly temperatures (Seattle 2010), in time order.

    x is the time in days since the window start, y the standardised temperature. Training
    windows start in January-August, test windows in September-December.
    """

    ordered = True
    dim_x = 1

    def __init__(self, seed: int = 0) -> None:
        from vega_datasets import local_data

        temps = local_data.seattle_temps()["temp"].to_numpy(float)
        split = int(len(temps) * 2 / 3)
        mu, sd = temps[:split].mean(), temps[:split].std()
        self.series = ((temps - mu) / sd).astype(np.float32)
        self.split = split
        # Fit the reference GP on 6 training windows of 64 hours placed 1000 days apart in x, so
        # the windows are independent under the fitted kernel, as the tasks are.
        rng = np.random.default_rng(seed)
        starts = rng.integers(0, split - 64, size=6)
        x = np.concatenate([1000.0 * i + np.arange(64) / 24.0 for i in range(6)])[:, None]
        y = np.concatenate([self.series[s : s + 64] for s in starts]).astype(float)
        self.reference, self.noise_std = _fit_gp_reference(x, y, seed, max_rows=len(x))

    def sample(self, batch: int, n: int, g: torch.Generator, split: str = "train") -> TaskBatch:
        lo, hi = (0, self.split - n) if split == "train" else (self.split, len(self.series) - n)
        starts = torch.randint(lo, hi, (batch,), generator=g).numpy()
        y = torch.from_numpy(np.stack([self.series[s : s + n] for s in starts])).unsqueeze(-1)
        x = (
            (torch.arange(n, dtype=torch.float32) / 24.0)
            .expand(batch, n)
            .unsqueeze(-1)
            .contiguous()
        )
        return TaskBatch(x, y, [self.reference] * batch, self.noise_std)

    oracle = GPSource.oracle


def make_source(task: str, seed: int = 0) -> GPSource | TabularSource | TemperatureSource:
    """A task source by name: ``gp-<kernel>``, ``gp-mix``, ``gp2d-rbf``, ``diabetes``,
    ``temperature`` or ``csv:PATH:TARGET``."""
    if task.startswith("gp2d-"):
        return GPSource(task.removeprefix("gp2d-"), dim_x=2)
    if task.startswith("gp-"):
        return GPSource(task.removeprefix("gp-"), dim_x=1)
    if task == "diabetes":
        return TabularSource.diabetes(seed)
    if task == "temperature":
        return TemperatureSource(seed)
    if task.startswith("csv:"):
        path, sep, target = task.removeprefix("csv:").rpartition(":")
        if not sep or not path or not target:
            raise ValueError(
                f"task {task!r} must have the form csv:PATH:TARGET (the CSV file, then the "
                "name of its target column), e.g. csv:data/houses.csv:price"
            )
        return TabularSource.from_csv(path, target, seed)
    raise ValueError(f"unknown task {task!r}")
