"""Configs of the main job and of the benchmark (frozen dataclasses, validated on creation)."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["BenchConfig", "TransportKLConfig"]


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True)
class TransportKLConfig:
    """Everything ``icml26 run transport-kl`` does, in four stages.

    1. Divergence table: closed forms vs the flow definition on random Gaussian and Student-t
       pairs of dimension ``dim`` (``n_pairs`` of each kind), and the degeneration sweep
       ``Sigma = eps I`` over ``eps_grid``.
    2. Double integrator (``dt``) with noise ``Sigma_w = rho diag(1e-5, 1e-5, 1, 1)`` for
       ``rho`` in ``rho_grid``: Riccati solves and Monte-Carlo closed-loop costs, evaluated with
       control weight ``control_weight_eval``, and exact expected costs (Lyapunov sums) for
       every evaluation control weight in ``control_weight_sweep``.
    3. Cart-pole with noise level ``cartpole_noise``.
    4. Ensemble Kalman example (``kalman_*``).
    """

    seed: int = 0
    # 1. divergences
    dim: int = 2
    n_pairs: int = 3
    flow_steps: int = 128
    eps_grid: tuple[float, ...] = (1.0, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12)
    lam: float = 1.0
    student_t_dof: float = 6.0
    particles: int = 4000
    kl_mc_samples: int = 20000
    w2_search: bool = True
    # 2. double integrator
    rho_grid: tuple[float, ...] = (10.0, 1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8)
    beta: float = 1.0
    gamma: float = 0.99
    dt: float = 0.1
    rollouts: int = 64
    horizon: int = 600
    control_weight_eval: float = 0.01
    control_weight_sweep: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)
    # 3. cart-pole
    cartpole_noise: float = 1e-4
    cartpole_rollouts: int = 32
    cartpole_horizon: int = 500
    force_limit: float = 30.0
    # 4. ensemble Kalman
    kalman_dim: int = 8
    kalman_ensemble: int = 4
    kalman_t_end: float = 50.0
    kalman_steps: int = 4000

    def __post_init__(self) -> None:
        for name in ("dim", "n_pairs", "flow_steps", "rollouts", "horizon", "cartpole_rollouts"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {getattr(self, name)!r}")
        for name in ("cartpole_horizon", "kalman_dim", "kalman_ensemble", "kalman_steps"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 2:
                raise ValueError(f"{name} must be an integer >= 2, got {getattr(self, name)!r}")
        if self.particles != 0 and self.particles < 100:
            raise ValueError(f"particles must be 0 (skip) or >= 100, got {self.particles}")
        if self.kl_mc_samples < 100:
            raise ValueError(f"kl_mc_samples must be >= 100, got {self.kl_mc_samples}")
        for name in ("lam", "beta", "dt", "cartpole_noise", "force_limit", "kalman_t_end"):
            _positive(name, getattr(self, name))
        _positive("control_weight_eval", self.control_weight_eval)
        if not self.control_weight_sweep:
            raise ValueError("control_weight_sweep needs at least one evaluation control weight")
        for v in self.control_weight_sweep:
            _positive("control_weight_sweep", v)
        if not 0 < self.gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        if not self.student_t_dof > 4:
            raise ValueError(
                f"student_t_dof must be > 4 (finite fourth moments), got {self.student_t_dof}"
            )
        for name in ("eps_grid", "rho_grid"):
            grid = getattr(self, name)
            if len(grid) < 2:
                raise ValueError(f"{name} needs at least two values, got {grid}")
            for v in grid:
                _positive(name, v)
        if self.kalman_ensemble > self.kalman_dim:
            raise ValueError(
                "kalman_ensemble must be <= kalman_dim (the example is about collapsed ensembles)"
            )


@dataclass(frozen=True)
class BenchConfig:
    """Batched divergence throughput: jit + vmap vs a per-pair NumPy/SciPy reference."""

    seed: int = 0
    dim: int = 4
    batches: tuple[int, ...] = (64, 1024)
    repeats: int = 3

    def __post_init__(self) -> None:
        if self.dim < 1 or self.repeats < 1:
            raise ValueError(f"dim and repeats must be >= 1, got {self.dim}, {self.repeats}")
        if not self.batches or any(b < 1 for b in self.batches):
            raise ValueError(f"batches must be positive integers, got {self.batches}")
