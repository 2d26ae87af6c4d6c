"""Configurations of the main job and of the benchmark, and their profiles (frozen dataclasses).

This module imports nothing of the package: the registries of processes and Lipschitz
functions check their names against :data:`PROCESS_NAMES` and :data:`FUNCTION_NAMES` (a test
holds them equal).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = [
    "BENCH_PROFILES",
    "FUNCTION_NAMES",
    "LS_SETTINGS",
    "PARTS",
    "PROCESS_NAMES",
    "PROFILES",
    "BenchConfig",
    "RunConfig",
]

PARTS = ("dudley", "concentration", "least_squares", "maurey")
PROCESS_NAMES = ("finite_iid", "euclidean_ball", "l1_ball", "brownian")
FUNCTION_NAMES = ("norm", "max", "softmax", "dist_to_set", "linear")
#: ``linear``: OLS, error vs n; ``linear_dim``: OLS, error vs d; ``l1``: l1-constrained LS vs n
#: at hard points of the ball (reported only); ``l1_dim_hard`` / ``l1_dim_sparse``: the same
#: estimator vs log d at fixed n, at each d's hard point / at ``l1_sparsity`` spikes, and
#: ``*_oracle``: least squares on the true support at the same points (the claims' placebos);
#: ``l0``: best-subset LS vs n.
LS_SETTINGS = (
    "linear",
    "linear_dim",
    "l1",
    "l1_dim_hard",
    "l1_dim_hard_oracle",
    "l1_dim_sparse",
    "l1_dim_sparse_oracle",
    "l0",
)


def _positive_ints(name: str, values: tuple[int, ...], minimum: int = 1) -> None:
    if not values:
        raise ValueError(f"{name} must hold at least one value")
    for v in values:
        if isinstance(v, bool) or int(v) != v or v < minimum:
            raise ValueError(f"every entry of {name} must be an integer >= {minimum}, got {v!r}")


def _names(name: str, values: tuple[str, ...], known: tuple[str, ...]) -> None:
    bad = [v for v in values if v not in known]
    if bad or not values:
        raise ValueError(f"unknown {name} {bad}; {name}: {', '.join(known)}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} repeat a name: {values}")


@dataclass(frozen=True)
class RunConfig:
    """Main job: every formalised bound against Monte Carlo on computable cases.

    Attributes:
        seed: one seed; each part draws from its own stream (``rng_for(seed, part)``).
        threads: CPU threads (set by the runner).
        parts: which parts to run (see :data:`PARTS`).
        processes: Gaussian processes for Dudley (see :data:`PROCESS_NAMES`).
        dudley_sizes: index-set sizes ``n`` (>= 2 distinct sizes).
        dudley_draws: Monte Carlo draws of the supremum per size.
        functions: Lipschitz functions for the concentration check.
        concentration_dim: dimension ``n`` of ``X ~ N(0, I_n)``.
        concentration_draws: draws of ``f(X)`` per batch (and as many for an unknown mean).
        concentration_batches: independent batches (seeds) of draws; the variance-proxy ratio
            is reported as mean and standard error over them.
        ls_settings: least-squares settings (see :data:`LS_SETTINGS`).
        sigma: noise level of every regression.
        linear_dim, linear_sizes: ``d`` and the ``n`` grid of the ``linear`` setting.
        linear_dims, linear_dim_n: the ``d`` grid of ``linear_dim`` and its ``n``.
        l1_dim, l1_radius, l1_sizes: the ``l1``-ball settings (``d``, ``R``, ``n`` grid).
        l1_dims, l1_dim_n: the ``d`` grid and the fixed ``n`` of the ``l1_dim_*`` settings.
        l1_sparsity: nonzeros of the fixed-sparsity points of ``l1_dim_sparse*``.
        l0_dim, l0_sparsity, l0_sizes: the best-subset setting.
        ls_reps: repetitions per grid point (``l1_reps`` for the costly ``l1`` solves); the
            exponent's standard error is a jackknife over repetitions.
        maurey_dims: dimensions for Maurey's bound; maurey_radius, maurey_eps: ``R``, ``eps``.
        maurey_samples: sampled points of the ``l1`` ball per dimension for greedy nets.
    """

    seed: int = 0
    threads: int = 1
    parts: tuple[str, ...] = PARTS
    processes: tuple[str, ...] = PROCESS_NAMES
    dudley_sizes: tuple[int, ...] = (10, 32, 100, 316, 1000, 3162, 10000)
    dudley_draws: int = 4000
    functions: tuple[str, ...] = FUNCTION_NAMES
    concentration_dim: int = 100
    concentration_draws: int = 50_000
    concentration_batches: int = 4
    ls_settings: tuple[str, ...] = LS_SETTINGS
    sigma: float = 1.0
    linear_dim: int = 10
    linear_sizes: tuple[int, ...] = (50, 100, 200, 500, 1000, 2000, 5000)
    linear_dims: tuple[int, ...] = (5, 10, 20, 40, 80, 160)
    linear_dim_n: int = 2000
    l1_dim: int = 1000
    l1_radius: float = 1.0
    l1_sizes: tuple[int, ...] = (100, 200, 400, 800, 1600)
    l1_dims: tuple[int, ...] = (20, 60, 200, 1000)
    l1_dim_n: int = 400
    l1_sparsity: int = 3
    l0_dim: int = 20
    l0_sparsity: int = 2
    l0_sizes: tuple[int, ...] = (50, 100, 200, 500, 1000, 2000, 5000)
    ls_reps: int = 20
    l1_reps: int = 6
    maurey_dims: tuple[int, ...] = (2, 5, 10, 100, 1000)
    maurey_radius: float = 1.0
    maurey_eps: float = 0.25
    maurey_samples: int = 2000

    def __post_init__(self) -> None:
        _names("parts", self.parts, PARTS)
        _names("processes", self.processes, PROCESS_NAMES)
        _names("functions", self.functions, FUNCTION_NAMES)
        _names("ls_settings", self.ls_settings, LS_SETTINGS)
        _positive_ints("dudley_sizes", self.dudley_sizes, 2)
        if len(set(self.dudley_sizes)) < 2:
            raise ValueError("dudley_sizes needs at least two distinct sizes to fit a slope")
        for name in ("linear_sizes", "linear_dims", "l1_sizes", "l1_dims", "l0_sizes"):
            _positive_ints(name, getattr(self, name), 2)
            if len(set(getattr(self, name))) < 2:
                raise ValueError(f"{name} needs at least two distinct values to fit an exponent")
        _positive_ints("maurey_dims", self.maurey_dims, 1)
        for name in ("dudley_draws", "ls_reps", "l1_reps", "maurey_samples"):
            if getattr(self, name) < 2:
                raise ValueError(f"{name} must be at least 2, got {getattr(self, name)}")
        if self.concentration_draws < 1000:
            raise ValueError(
                f"concentration_draws must be at least 1000, got {self.concentration_draws}"
            )
        if self.concentration_batches < 2:
            raise ValueError(
                f"concentration_batches must be at least 2 (a standard error needs two), "
                f"got {self.concentration_batches}"
            )
        if self.concentration_dim < 1:
            raise ValueError(f"concentration_dim must be at least 1, got {self.concentration_dim}")
        for name in ("sigma", "l1_radius", "maurey_radius", "maurey_eps"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and v > 0 and v < float("inf")):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if min(self.linear_sizes) <= self.linear_dim:
            raise ValueError("every linear_sizes entry must exceed linear_dim (full-rank design)")
        if max(self.linear_dims) >= self.linear_dim_n:
            raise ValueError("every linear_dims entry must be below linear_dim_n")
        if not (1 <= self.l0_sparsity <= self.l0_dim <= 40):
            raise ValueError(
                "need 1 <= l0_sparsity <= l0_dim <= 40 (best subset enumerates supports)"
            )
        if min(self.l0_sizes) <= self.l0_sparsity:
            raise ValueError("every l0_sizes entry must exceed l0_sparsity")
        if not (1 <= self.l1_sparsity <= min(self.l1_dims)):
            raise ValueError("need 1 <= l1_sparsity <= min(l1_dims)")
        if self.l1_dim_n < 2:
            raise ValueError(f"l1_dim_n must be at least 2, got {self.l1_dim_n}")


@dataclass(frozen=True)
class BenchConfig:
    """Benchmark: the package's numerical kernels against their plain baselines.

    Attributes:
        seed: data seed.
        threads: CPU threads (set by the runner).
        dudley_size: size of the ``l1``-ball process whose entropy integral is timed (vs
            ``scipy.integrate.quad`` on the same integrand).
        greedy_points, greedy_dim: sample for the greedy net (vs a pure-Python scan).
        rounds: timed repetitions (the best is reported).
    """

    seed: int = 0
    threads: int = 1
    dudley_size: int = 10_000
    greedy_points: int = 2000
    greedy_dim: int = 20
    rounds: int = 3

    def __post_init__(self) -> None:
        for name in ("dudley_size", "greedy_points", "greedy_dim", "rounds"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.dudley_size < 2:
            raise ValueError("dudley_size must be at least 2")


_QUICK = RunConfig()

PROFILES = {
    "smoke": replace(
        _QUICK,
        dudley_sizes=(10, 100, 1000),
        dudley_draws=400,
        concentration_dim=50,
        concentration_draws=5000,
        concentration_batches=3,
        linear_sizes=(50, 200, 800),
        linear_dims=(5, 20, 80),
        linear_dim_n=500,
        l1_dim=200,
        l1_sizes=(50, 100, 200, 400),
        l1_dims=(20, 60, 200),
        l1_dim_n=200,
        l0_dim=8,
        l0_sizes=(50, 200, 800),
        ls_reps=3,
        l1_reps=3,
        maurey_dims=(2, 10, 100),
        maurey_samples=300,
    ),
    "quick": _QUICK,
    "full": replace(
        _QUICK,
        dudley_sizes=(10, 18, 32, 56, 100, 178, 316, 562, 1000, 1778, 3162, 5623, 10000),
        dudley_draws=20_000,
        concentration_dim=200,
        concentration_draws=250_000,
        concentration_batches=4,
        linear_sizes=(50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000),
        linear_dims=(5, 10, 20, 40, 80, 160, 320),
        linear_dim_n=5000,
        l1_dim=2000,
        l1_sizes=(100, 200, 400, 800, 1600, 3200),
        l0_dim=24,
        l0_sizes=(50, 100, 200, 500, 1000, 2000, 5000, 10000),
        ls_reps=50,
        l1_reps=6,
        maurey_dims=(2, 5, 10, 100, 1000, 10000),
        maurey_samples=4000,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(dudley_size=300, greedy_points=200, greedy_dim=10, rounds=1),
    "quick": BenchConfig(),
    "full": BenchConfig(dudley_size=100_000, greedy_points=5000, rounds=5),
}
