"""Configurations of the main job and of the benchmark, and their profiles (frozen dataclasses)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["BENCH_PROFILES", "PROFILES", "BenchConfig", "RunConfig"]


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True)
class RunConfig:
    """Everything ``icml26 run transport-kl`` does, in four stages.

    1. ``closed_forms``: KL, WKL, KWKL, W2 closed forms against their flow definitions on
       ``n_pairs`` random Gaussian (and Student-t, ``particles > 0``) pairs of dimension ``dim``.
    2. ``degeneration``: every divergence between laws with equal covariances ``eps I``.
    3. ``fronts``: multi-input double integrators (``axes`` inputs) over a grid of actuator-
       noise anisotropies ``kappas`` and actuator-gain spreads ``spreads``; ``beta`` swept over
       ``betas`` points per divergence; ``systems`` drawn systems, shared by every cell.
    4. ``kalman``: a collapsed ensemble on a linear inverse problem.

    Attributes:
        seed: one seed; each stage draws from its own stream.
        threads: CPU threads (set by the runner).
        dim, n_pairs, flow_steps, lam, student_t_dof, particles, kl_mc_samples, w2_search:
            stage 1 and 2 settings (``lam`` is KWKL's regulariser everywhere).
        eps_grid: covariance scales of stage 2.
        axes, dt, gamma, rho, noise_floor, kappas, spreads, betas, beta_span, levels, systems:
            stage 3 (``noise_floor``: the isotropic floor of the noise, relative to ``rho``).
        kappa, gain_spread: the grid cell whose fronts the figure shows.
        kalman_dim, kalman_ensemble, kalman_t_end, kalman_steps: stage 4.
    """

    seed: int = 0
    threads: int = 1
    dim: int = 2
    n_pairs: int = 3
    flow_steps: int = 128
    eps_grid: tuple[float, ...] = (1.0, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12)
    lam: float = 1.0
    student_t_dof: float = 6.0
    particles: int = 4000
    kl_mc_samples: int = 20000
    w2_search: bool = True
    axes: int = 2
    dt: float = 0.1
    gamma: float = 0.99
    rho: float = 1e-2
    noise_floor: float = 1e-6
    kappas: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)
    spreads: tuple[float, ...] = (1.0, 3.0, 10.0)
    kappa: float = 1e-3
    gain_spread: float = 3.0
    betas: int = 41
    beta_span: float = 1e4
    levels: int = 40
    systems: int = 8
    kalman_dim: int = 8
    kalman_ensemble: int = 4
    kalman_t_end: float = 50.0
    kalman_steps: int = 4000

    def __post_init__(self) -> None:
        for name in ("dim", "n_pairs", "flow_steps", "betas", "levels"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {getattr(self, name)!r}")
        for name in ("axes", "kalman_dim", "kalman_ensemble", "kalman_steps"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 2:
                raise ValueError(f"{name} must be an integer >= 2, got {getattr(self, name)!r}")
        if not isinstance(self.systems, int) or self.systems < 3:
            raise ValueError(
                f"systems must be an integer >= 3 (standard errors), got {self.systems!r}"
            )
        if self.particles != 0 and self.particles < 100:
            raise ValueError(f"particles must be 0 (skip) or >= 100, got {self.particles}")
        if self.kl_mc_samples < 100:
            raise ValueError(f"kl_mc_samples must be >= 100, got {self.kl_mc_samples}")
        for name in ("lam", "dt", "rho", "noise_floor", "gain_spread", "beta_span", "kalman_t_end"):
            _positive(name, getattr(self, name))
        if not 0 < self.gamma < 1:
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma}")
        for k in (self.kappa, *self.kappas):
            if not 0 < k <= 1:
                raise ValueError(f"kappa must be in (0, 1], got {k} (kappa or an entry of kappas)")
        if not self.spreads or any(not g >= 1 for g in self.spreads):
            raise ValueError(f"spreads must be non-empty numbers >= 1, got {self.spreads}")
        if 1.0 not in self.kappas:
            raise ValueError("kappas must contain 1 (the claim's placebo: KL is plain LQR there)")
        if not self.student_t_dof > 4:
            raise ValueError(
                f"student_t_dof must be > 4 (finite fourth moments), got {self.student_t_dof}"
            )
        if len(self.eps_grid) < 2:
            raise ValueError(f"eps_grid needs at least two values, got {self.eps_grid}")
        for v in self.eps_grid:
            _positive("eps_grid", v)
        if self.kalman_ensemble > self.kalman_dim:
            raise ValueError(
                "kalman_ensemble must be <= kalman_dim (the example is about collapsed ensembles)"
            )


@dataclass(frozen=True)
class BenchConfig:
    """Batched divergence throughput: jit + vmap vs a per-pair NumPy/SciPy reference.

    Attributes:
        seed: data seed.
        threads: CPU threads (set by the runner).
        dim: dimension of the laws.
        batches: batch sizes timed.
        repeats: timed repeats (the best is reported).
    """

    seed: int = 0
    threads: int = 1
    dim: int = 4
    batches: tuple[int, ...] = (64, 1024)
    repeats: int = 3

    def __post_init__(self) -> None:
        if self.dim < 1 or self.repeats < 1:
            raise ValueError(f"dim and repeats must be >= 1, got {self.dim}, {self.repeats}")
        if not self.batches or any(b < 1 for b in self.batches):
            raise ValueError(f"batches must be positive integers, got {self.batches}")


_QUICK = RunConfig()

PROFILES = {
    "smoke": replace(
        _QUICK,
        n_pairs=1,
        flow_steps=64,
        eps_grid=(1.0, 1e-12),
        particles=0,
        kl_mc_samples=500,
        w2_search=False,
        betas=21,
        levels=20,
        systems=3,
        kappas=(1e-2, 1.0),
        spreads=(3.0, 10.0),
        kalman_steps=200,
        kalman_t_end=5.0,
    ),
    "quick": _QUICK,
    "full": replace(
        _QUICK,
        dim=3,
        n_pairs=8,
        flow_steps=256,
        particles=20000,
        kl_mc_samples=200000,
        axes=3,
        betas=81,
        levels=80,
        systems=32,
        kalman_steps=8000,
        kalman_t_end=100.0,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(batches=(16, 64), repeats=1),
    "quick": BenchConfig(),
    "full": BenchConfig(batches=(64, 1024, 8192), repeats=5),
}
