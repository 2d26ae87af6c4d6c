"""The job configs (light: no torch import, read by ``icml26 list/show``).

``RunConfig`` is the main job, ``BenchConfig`` the throughput bench; both are frozen
dataclasses validated in ``__post_init__``, their profiles live in
:mod:`icml26.velocity_deficit.paper`.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from icml26.shared.devices import check_torch_device

__all__ = ["BenchConfig", "Regime", "RunConfig", "dataset_name"]

_EVALS = {"euler": 1, "heun": 2, "midpoint": 2}
_DATA = re.compile(r"^(gmm\d+|moons|digits|mnist|npy:.+|images:.+)$")
REGIMES = ("fit", "short")


def dataset_name(spec: str) -> str:
    """The metric-key name of a dataset spec.

    Args:
        spec: a dataset spec (``gmm256``, ``mnist``, ``npy:<path>``, ``images:<folder>``).

    Returns:
        The spec itself for the built-in datasets; for a user file or folder
        ``user_<stem>_<hash>``: the path's stem reduced to ``[a-z0-9_]`` and 8 hex digits of
        the resolved path, so two user datasets never share metric keys, the same path always
        gets the same name, and the name holds no ``.``, ``/`` or ``:``.
    """
    kind, sep, arg = spec.partition(":")
    if not sep or kind not in ("npy", "images"):
        return spec
    path = Path(arg).expanduser().resolve()
    stem = re.sub(r"[^a-z0-9_]+", "_", path.stem.lower()).strip("_")[:32] or "data"
    digest = hashlib.sha256(f"{kind}:{path}".encode()).hexdigest()[:8]
    return f"user_{stem}_{digest}"


def check_inputs(datasets: tuple[str, ...]) -> None:
    """``npy:`` names an existing file, ``images:`` an existing folder; no two specs name the
    same data. Called by :class:`RunConfig` itself, so a bad path is a usage error (exit 2)
    before the run folder exists.

    Args:
        datasets: the dataset specs.

    Raises:
        ValueError: a missing file or folder, or two specs naming one dataset.
    """
    for spec in datasets:
        kind, _, arg = spec.partition(":")
        p = Path(arg).expanduser()
        if kind == "npy" and not p.is_file():
            raise ValueError(f"dataset {spec!r}: {arg!r} is not an existing .npy file")
        if kind == "images" and not p.is_dir():
            raise ValueError(f"dataset {spec!r}: {arg!r} is not an existing folder of images")
    names = [dataset_name(s) for s in datasets]
    twice = sorted({s for s, n in zip(datasets, names, strict=True) if names.count(n) > 1})
    if twice:
        raise ValueError(f"datasets {twice} name the same data")


def _positive(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be >= 1, got {value!r}")


@dataclass(frozen=True)
class Regime:
    """One model budget: the velocity MLP's size and its training steps.

    Attributes:
        width: hidden width.
        depth: residual blocks.
        skip: the MLP's time-scaled input skip ``a(t) x``.
        train_steps: Adam steps.
    """

    width: int = 128
    depth: int = 2
    skip: bool = True
    train_steps: int = 1000

    def __post_init__(self) -> None:
        _positive(self, "width", "depth", "train_steps")


@dataclass(frozen=True)
class RunConfig:
    """The main job: the velocity deficit against the exact field, SSC and MAFM sized from it,
    in a near-exact control and an under-trained regime.

    Attributes:
        seed: the run's seed; seed ``i`` of ``seeds`` trains with ``seed + i``.
        seeds: training seeds (each trains its own models and draws its own noise; the data
            split and the FD classifier are shared). Figures are seed means with SEs.
        datasets: dataset specs (``icml26.velocity_deficit.data``).
        compare: the datasets on which MAFM models are trained too (one per lambda).
        regimes: which of ``fit`` (near-exact control) and ``short`` (under-trained) to run.
        fit, short: the two regimes' model size and training steps (``--set short.train_steps=200``):
            ``fit`` a 128 x 2 MLP with skip for 1,000 steps (FM loss within ~1 % of the exact
            field's), ``short`` the same net for 100 steps.
        n_train, n_val, n_test: split sizes (validation: SSC's and MAFM's choices, and the FD
            floor from ``n_val // n_samples`` disjoint sets of ``n_samples`` rows: at least
            two, so ``n_val >= 2 n_samples``).
        batch_size, lr, ema_decay, coupling: training (``coupling``: ``independent`` or ``ot``).
        mafm_regimes: the regimes in which MAFM models are trained (on ``compare``).
        mafm_lambdas: MAFM's weights tried; the one with the best validation FD is reported.
        mafm_power: ``p`` of MAFM's time weight ``(1 - t)^p``.
        mafm_targets: MAFM's targets trained, each with every lambda: ``exact`` (``rho =
            R_exact(t)`` at validation points, training rows as the bank; variant ``mafm``)
            and ``paper`` (the paper's ``rho = 1``; variant ``mafm_paper``).
        ssc_min_gain: SSC keeps a correction only if its validation FD beats the identity's by
            this fraction (0: the noise margin alone decides).
        ssc_noise_margin: and its mean paired validation FD drop must exceed this many SEs of
            the paired drops over ``ssc_replicates`` shared noise draws (a guard against
            choosing on validation noise; fixed a priori at 2, not tuned on any test figure).
        ssc_replicates: noise draws of ``val_samples`` each that every SSC candidate is
            sampled from (the same draws for all: a paired comparison; >= 2).
        sampler, grid: ODE solver and time grid.
        nfe: budgets at which every variant is sampled; ``reference_nfe``: the baseline's long
            budget (the paper's 250 steps).
        select_nfe: the budget SSC and MAFM are chosen at, on validation (one of ``nfe``).
        ssc_betas: tapers of SSC's deficit schedule (0, no taper, is allowed but not a default:
            the paper wants ``gamma -> 1`` at the data end).
        n_samples: samples per (variant, NFE) on the test split.
        val_samples: samples per validation candidate (SSC's schedules, MAFM's lambdas).
        ratio_samples: pairs per time in ``R(t)``.
        ratio_times: times of ``R(t)`` (keys ``t0``, ``t0p05``, ...).
        empirical_t_max: for data without a density, the exact field is the training set's own
            up to this time (``t = 0`` is exact for any data).
        classifier_steps: training steps of the FD feature classifier.
        threads: torch CPU threads (set by the runner); device: ``cpu`` or ``cuda``.
    """

    seed: int = 0
    seeds: int = 3
    datasets: tuple[str, ...] = ("gmm16", "gmm256", "mnist")
    compare: tuple[str, ...] = ("gmm256",)
    regimes: tuple[str, ...] = REGIMES
    fit: Regime = field(default_factory=Regime)
    short: Regime = field(default_factory=lambda: Regime(train_steps=100))
    n_train: int = 10_000
    n_val: int = 1600
    n_test: int = 1000
    batch_size: int = 256
    lr: float = 1e-3
    ema_decay: float = 0.999
    coupling: Literal["independent", "ot"] = "independent"
    mafm_regimes: tuple[str, ...] = REGIMES
    mafm_lambdas: tuple[float, ...] = (0.3, 1.0, 3.0)
    mafm_power: float = 1.0
    mafm_targets: tuple[str, ...] = ("exact", "paper")
    sampler: Literal["euler", "heun", "midpoint"] = "euler"
    grid: Literal["uniform", "power"] = "uniform"
    nfe: tuple[int, ...] = (5, 10, 50)
    reference_nfe: int = 250
    select_nfe: int = 50
    ssc_betas: tuple[float, ...] = (1.0, 3.0)
    ssc_min_gain: float = 0.0
    ssc_noise_margin: float = 2.0
    ssc_replicates: int = 4
    n_samples: int = 400
    val_samples: int = 300
    ratio_samples: int = 500
    ratio_times: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(20))
    empirical_t_max: float = 0.15
    classifier_steps: int = 400
    threads: int = 1
    device: str = "cpu"

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not self.datasets:
            raise ValueError("datasets must name at least one dataset")
        for spec in self.datasets:
            if not _DATA.match(spec):
                raise ValueError(
                    f"unknown dataset {spec!r}; use gmm<d>, moons, digits, mnist, npy:<path> or images:<folder>"
                )
        if len(set(self.datasets)) != len(self.datasets):
            raise ValueError(f"datasets repeat: {self.datasets}")
        check_inputs(self.datasets)
        missing = [c for c in self.compare if c not in self.datasets]
        if missing:
            raise ValueError(f"compare lists {missing}, which are not in datasets")
        bad = [r for r in self.regimes if r not in REGIMES]
        if bad or not self.regimes or len(set(self.regimes)) != len(self.regimes):
            raise ValueError(f"regimes must be distinct names among {REGIMES}, got {self.regimes}")
        if any(r not in self.regimes for r in self.mafm_regimes):
            raise ValueError(
                f"mafm_regimes {self.mafm_regimes} must be among regimes {self.regimes}"
            )
        _positive(self, "seeds", "n_train", "n_val", "n_test", "batch_size", "ratio_samples")
        _positive(self, "classifier_steps", "threads", "reference_nfe", "select_nfe")
        if self.n_samples < 2 or self.val_samples < 2:
            raise ValueError(
                f"n_samples and val_samples must be >= 2, got {self.n_samples}, {self.val_samples}"
            )
        if self.n_val < 2 * self.n_samples:
            raise ValueError(
                f"n_val={self.n_val} must be >= 2 * n_samples={2 * self.n_samples}: the FD floor "
                "is the mean over disjoint held-out sets of n_samples rows (at least two, for its SE)"
            )
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if not 0 <= self.ema_decay < 1:
            raise ValueError(f"ema_decay must lie in [0, 1), got {self.ema_decay}")
        if not self.mafm_lambdas or any(
            not (lam > 0 and math.isfinite(lam)) for lam in self.mafm_lambdas
        ):
            raise ValueError(
                f"mafm_lambdas must be > 0 (lambda = 0 is the baseline), got {self.mafm_lambdas}"
            )
        if not self.mafm_targets or any(t not in ("exact", "paper") for t in self.mafm_targets):
            raise ValueError(
                f"mafm_targets must name 'exact' and/or 'paper', got {self.mafm_targets}"
            )
        if len(set(self.mafm_targets)) != len(self.mafm_targets):
            raise ValueError(f"mafm_targets repeat: {self.mafm_targets}")
        if not 0 <= self.ssc_min_gain < 1:
            raise ValueError(f"ssc_min_gain must lie in [0, 1), got {self.ssc_min_gain}")
        if not (self.ssc_noise_margin >= 0 and math.isfinite(self.ssc_noise_margin)):
            raise ValueError(
                f"ssc_noise_margin must be finite and >= 0, got {self.ssc_noise_margin}"
            )
        if self.ssc_replicates < 2:
            raise ValueError(
                f"ssc_replicates must be >= 2 (SSC's margin needs a standard error), "
                f"got {self.ssc_replicates}"
            )
        if self.mafm_power < 0:
            raise ValueError(f"mafm_power must be >= 0, got {self.mafm_power}")
        if not self.nfe:
            raise ValueError("nfe must list at least one budget")
        per = _EVALS[self.sampler]
        for k in (*self.nfe, self.reference_nfe, self.select_nfe):
            if isinstance(k, bool) or k < 1:
                raise ValueError(f"NFE must be >= 1, got {k}")
            if k % per:
                raise ValueError(
                    f"{self.sampler} spends {per} evaluations per step: NFE {k} is not a multiple"
                )
        if self.select_nfe not in self.nfe:
            raise ValueError(f"select_nfe={self.select_nfe} must be one of nfe {self.nfe}")
        if not self.ssc_betas or any(not (b >= 0 and math.isfinite(b)) for b in self.ssc_betas):
            raise ValueError(f"ssc_betas must be finite and >= 0, got {self.ssc_betas}")
        if not self.ratio_times or any(not 0 <= t < 1 for t in self.ratio_times):
            raise ValueError(f"ratio_times must lie in [0, 1), got {self.ratio_times}")
        if self.ratio_times[0] != 0.0 or any(
            b <= a for a, b in zip(self.ratio_times, self.ratio_times[1:], strict=False)
        ):
            raise ValueError(
                "ratio_times must be increasing and start at 0.0 (SSC's deficit at the start; the "
                f"exact field's times are a prefix of them, measured on the same draws), got {self.ratio_times}"
            )
        if not 0 <= self.empirical_t_max < 1:
            raise ValueError(f"empirical_t_max must lie in [0, 1), got {self.empirical_t_max}")
        check_torch_device(self.device)

    def regime(self, name: str) -> Regime:
        """The :class:`Regime` called ``name`` (``fit`` or ``short``)."""
        return {"fit": self.fit, "short": self.short}[name]


@dataclass(frozen=True)
class BenchConfig:
    """Sampling throughput per sampler and NFE, and SSC's overhead.

    Attributes:
        dim, width, depth: the velocity MLP timed (untrained: speed does not depend on weights).
        batch: samples per call; nfe: budgets; samplers: the solvers timed; repeats: timing
            repeats (median reported).
    """

    seed: int = 0
    dim: int = 64
    width: int = 256
    depth: int = 2
    batch: int = 1000
    nfe: tuple[int, ...] = (10, 50, 250)
    samplers: tuple[str, ...] = ("euler", "heun", "midpoint")
    repeats: int = 3
    threads: int = 1
    device: str = "cpu"

    def __post_init__(self) -> None:
        _positive(self, "dim", "width", "depth", "batch", "repeats", "threads")
        if not self.nfe or any(k < 2 or k % 2 for k in self.nfe):
            raise ValueError(f"bench nfe must be even numbers >= 2 (every sampler), got {self.nfe}")
        unknown = [s for s in self.samplers if s not in _EVALS]
        if unknown or not self.samplers:
            raise ValueError(f"unknown samplers {unknown}; choose from {', '.join(_EVALS)}")
        check_torch_device(self.device)
