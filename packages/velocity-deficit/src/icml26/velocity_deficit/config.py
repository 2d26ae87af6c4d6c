"""The experiment config (light: no torch import, read by ``icml26 list/show``)."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from icml26.shared.devices import check_torch_device

__all__ = ["BenchConfig", "VDConfig", "dataset_name"]

_EVALS = {"euler": 1, "heun": 2, "midpoint": 2}
_DATA = re.compile(r"^(gmm\d+|moons|digits|mnist|npy:.+|images:.+)$")


def dataset_name(spec: str) -> str:
    """The metric-key name of a dataset spec: the spec itself for the built-in datasets, and for
    a user file or folder (``npy:<path>``, ``images:<folder>``) ``user_<stem>_<hash>``: the
    path's stem reduced to ``[a-z0-9_]`` and 8 hex digits of the resolved path, so two user
    datasets never share metric keys or checkpoint folders, the same path always gets the same
    name, and the name holds no ``.`` (the metric-key separator), ``/`` or ``:``."""
    kind, sep, arg = spec.partition(":")
    if not sep or kind not in ("npy", "images"):
        return spec
    path = Path(arg).expanduser().resolve()
    stem = re.sub(r"[^a-z0-9_]+", "_", path.stem.lower()).strip("_")[:32] or "data"
    digest = hashlib.sha256(f"{kind}:{path}".encode()).hexdigest()[:8]
    return f"user_{stem}_{digest}"


def _check_user_paths(datasets: tuple[str, ...]) -> None:
    """``npy:`` names an existing file, ``images:`` an existing folder; no two specs name the
    same data."""
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
class VDConfig:
    """The main job: velocity-deficit diagnostics, baseline FM vs MAFM, with and without SSC.

    Attributes:
        datasets: dataset specs (``icml26.velocity_deficit.data``); baseline FM + SSC on each.
        compare: the subset on which a MAFM model is trained too (all four methods).
        conditional: class-conditional models where the data have labels.
        n_train, n_test: training cap and held-out reference size per dataset.
        width, depth, train_steps, batch_size, lr, ema_decay: the velocity MLP and its training.
        skip: the MLP's time-scaled input skip ``a(t) x`` (False: the ablation in the README).
        coupling: ``independent`` or ``ot`` (OT-CFM minibatch coupling, POT).
        mafm_lambda, mafm_power: MAFM's weight ``lambda (1 - t)^p``.
        sampler, grid: ODE solver and time grid; ``nfe`` the evaluation budgets compared.
        n_samples: generated samples per (method, NFE) and reference size of the metrics.
        ratio_times: the times of the velocity-ratio diagnostic (keys ``t00`` .. ``t95``).
        seeds: number of training seeds (``seed``, ``seed + 1``, ...): each trains its own
            models and draws its own sampling noise; the data split and the FD classifier are
            shared. Metrics are seed means, with ``fd_se`` / ``fd_improvement_se`` (standard
            errors over seeds) and ``fd_improvement_lcb`` / ``_ucb`` (mean -/+ 2 SE).
        ssc_kind, ssc_alphas, ssc_betas, ssc_t_stop: the SSC family and its sweep grid.
        ssc_magnitude: ``ratio`` (the paper's description): ``gamma(0) = 1 / R(0)`` from the
            model's measured start ratio, ``beta`` chosen on validation among ``ssc_betas``;
            ``sweep``: ``(alpha, beta)`` chosen on validation among ``alpha > 0``. Either way
            the ``ssc_alphas`` grid is also scored on validation (``ssc_sweep.*``) and the
            selection uses a validation reference (training data, other noise) at
            ``ssc_select_nfe`` NFE, never the test set.
        classifier_steps: training steps of the FD feature classifier.
        threads: torch CPU threads; device: ``cpu`` or ``cuda``.
    """

    seed: int = 0
    datasets: tuple[str, ...] = ("gmm2", "gmm16", "gmm64", "gmm256", "gmm1024", "digits", "mnist")
    compare: tuple[str, ...] = ("gmm64", "digits", "mnist")
    conditional: bool = False
    n_train: int = 20_000
    n_test: int = 1000
    width: int = 256
    depth: int = 2
    skip: bool = True
    train_steps: int = 2000
    batch_size: int = 256
    lr: float = 1e-3
    ema_decay: float = 0.999
    coupling: Literal["independent", "ot"] = "independent"
    mafm_lambda: float = 1.0
    mafm_power: float = 1.0
    sampler: Literal["euler", "heun", "midpoint"] = "euler"
    grid: Literal["uniform", "power"] = "uniform"
    nfe: tuple[int, ...] = (5, 10, 25, 50, 100, 250)
    n_samples: int = 1000
    ratio_samples: int = 1000
    ratio_times: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(20))
    seeds: int = 1
    ssc_magnitude: Literal["ratio", "sweep"] = "ratio"
    ssc_kind: Literal["power", "window"] = "power"
    ssc_alphas: tuple[float, ...] = (-0.1, 0.05, 0.1, 0.2, 0.3, 0.5)
    ssc_betas: tuple[float, ...] = (1.0, 2.0, 4.0)
    ssc_t_stop: float = 0.5
    ssc_select_nfe: int = 50
    classifier_steps: int = 1000
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
        _check_user_paths(self.datasets)
        missing = [c for c in self.compare if c not in self.datasets]
        if missing:
            raise ValueError(f"compare lists {missing}, which are not in datasets")
        _positive(
            self,
            "n_train",
            "n_test",
            "width",
            "depth",
            "train_steps",
            "batch_size",
            "ratio_samples",
            "classifier_steps",
            "threads",
            "ssc_select_nfe",
            "seeds",
        )
        if self.n_samples < 2:
            raise ValueError(f"n_samples must be >= 2, got {self.n_samples}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if not 0 <= self.ema_decay < 1:
            raise ValueError(f"ema_decay must lie in [0, 1), got {self.ema_decay}")
        if self.mafm_lambda < 0 or self.mafm_power < 0:
            raise ValueError("mafm_lambda and mafm_power must be >= 0")
        if not self.nfe:
            raise ValueError("nfe must list at least one budget")
        per = _EVALS[self.sampler]
        for k in (*self.nfe, self.ssc_select_nfe):
            if isinstance(k, bool) or k < 1:
                raise ValueError(f"NFE must be >= 1, got {k}")
            if k % per:
                raise ValueError(
                    f"{self.sampler} spends {per} evaluations per step: NFE {k} is not a multiple"
                )
        if self.ssc_select_nfe not in self.nfe:
            raise ValueError(f"ssc_select_nfe={self.ssc_select_nfe} must be one of nfe {self.nfe}")
        if self.ssc_magnitude not in ("ratio", "sweep"):
            raise ValueError(
                f"ssc_magnitude must be 'ratio' or 'sweep', got {self.ssc_magnitude!r}"
            )
        if self.ssc_magnitude == "sweep" and not any(a > 0 for a in self.ssc_alphas):
            raise ValueError("ssc_alphas needs at least one alpha > 0 (energy injection)")
        for a in self.ssc_alphas:
            if not math.isfinite(a) or a <= -1:
                raise ValueError(f"SSC alphas must be finite and > -1, got {a}")
        if not self.ssc_betas or any(not b > 0 for b in self.ssc_betas):
            raise ValueError(f"ssc_betas must be > 0, got {self.ssc_betas}")
        if not 0 < self.ssc_t_stop <= 1:
            raise ValueError(f"ssc_t_stop must lie in (0, 1], got {self.ssc_t_stop}")
        if not self.ratio_times or any(not 0 <= t < 1 for t in self.ratio_times):
            raise ValueError(f"ratio_times must lie in [0, 1), got {self.ratio_times}")
        if 0.0 not in self.ratio_times:
            raise ValueError("ratio_times must include 0.0 (SSC's magnitude uses R(0))")
        check_torch_device(self.device)


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
