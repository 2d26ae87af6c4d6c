r"""Divergences compared where they differ in shape: Pareto fronts of multi-input control.

The setting. A double integrator with ``m`` axes and one input per axis, actuator gains
``g_i`` drawn log-uniformly in ``[1/spread, spread]``, and process noise that enters through
the actuators, ``Sigma_w = rho (B W B^T + floor I)``, with ``W = U diag(1, ..., kappa) U^T``
(``U`` a random rotation of the input space): one precise actuator direction beside noisy ones.
KL's penalty is then ``~ beta/(2 rho) W^{-1}`` (condition number ``~ 1/kappa``, independent of
the gains), WKL's ``beta/2 B^T B`` (the gains squared): different *shapes*, so no ``beta``
makes one the other. :func:`front_study` sweeps a grid of ``kappa`` and gain spreads: at
``kappa = 1`` the actuator noise is isotropic in input space, KL's penalty is ``~ I`` and KL *is*
plain LQR, the optimum of this evaluation (the claim's placebo); with equal gains
(``spread = 1``) WKL's penalty is ``~ I`` and WKL is plain LQR.

The comparison. For each divergence, ``beta`` is swept over a grid (each penalty first scaled
to unit trace per input, which only reparametrises ``beta``); each ``beta`` gives a Riccati gain
and, exactly (Lyapunov), its expected discounted state cost ``E sum g^t |x_t|^2`` and control
energy ``E sum g^t |u_t|^2`` from ``x_0 ~ N(0, I)``. The fronts are compared at equal control
energy on the range both cover: ``gap = mean over energy levels of log J_x(div) - log J_x(kl)``
(negative: lower state cost for the same energy). Plain LQR (``R = beta I``) is the exact
optimum of this evaluation, so no divergence's front can lie below it (a test); the question
is how close each divergence's shape brings its controllers to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from icml26.shared.keys import number_part
from icml26.transport_kl._x64 import x64
from icml26.transport_kl.control import (
    closed_loop_costs,
    double_integrator,
    penalty_matrix,
    riccati,
)
from icml26.transport_kl.linalg import random_rotation

__all__ = [
    "Front",
    "FrontSettings",
    "System",
    "SystemDraw",
    "build_system",
    "cell_key",
    "compare_fronts",
    "draw_randomness",
    "draw_system",
    "front",
    "front_study",
]

FRONT_DIVERGENCES = ("kl", "wkl", "kwkl", "lqr")


@dataclass(frozen=True)
class FrontSettings:
    """The multi-input control comparison.

    Attributes:
        axes: inputs (= axes of the double integrator), >= 2.
        dt: time step.
        gamma: discount in ``(0, 1)``.
        rho: noise scale.
        kappa: smallest / largest actuator-noise variance (the anisotropy), in ``(0, 1]``.
        floor: isotropic floor of the noise, relative to ``rho``.
        lam: KWKL's regulariser.
        gain_spread: actuator gains log-uniform in ``[1/spread, spread]``.
        betas: points of the ``beta`` grid, log-spaced in ``[1/beta_span, beta_span]``.
        beta_span: the grid's half-width (a factor).
        levels: control-energy levels at which fronts are compared.
        kappas: the anisotropies of the grid that :func:`front_study` sweeps (``kappa`` and
            ``gain_spread`` are the single setting of :func:`draw_system`).
        spreads: the gain spreads of that grid.
    """

    axes: int = 2
    dt: float = 0.1
    gamma: float = 0.99
    rho: float = 1e-2
    kappa: float = 1e-3
    floor: float = 1e-6
    lam: float = 1.0
    gain_spread: float = 3.0
    betas: int = 41
    beta_span: float = 1e4
    levels: int = 40
    kappas: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)
    spreads: tuple[float, ...] = (1.0, 3.0, 10.0)

    def __post_init__(self) -> None:
        if self.axes < 2:
            raise ValueError(
                f"axes must be >= 2 (a single input makes every R a scalar), got {self.axes}"
            )
        for k in (self.kappa, *self.kappas):
            if not 0 < k <= 1:
                raise ValueError(f"kappa must be in (0, 1], got {k} (kappa or an entry of kappas)")
        if not self.kappas or not self.spreads or any(g < 1 for g in self.spreads):
            raise ValueError(
                f"kappas and spreads must be non-empty, spreads >= 1; got {self.kappas}, "
                f"{self.spreads}"
            )
        if not 0 < self.gamma < 1:
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma}")
        for name in ("dt", "rho", "floor", "lam", "gain_spread", "beta_span"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.betas < 5 or self.levels < 2:
            raise ValueError(f"need betas >= 5 and levels >= 2, got {self.betas}, {self.levels}")


@dataclass(frozen=True)
class System:
    """One drawn system: dynamics, input matrix and the two noise settings."""

    a: np.ndarray
    b: np.ndarray
    anisotropic: np.ndarray
    isotropic: np.ndarray


@dataclass(frozen=True)
class SystemDraw:
    """The randomness of one system, shared by every cell of the grid (paired comparisons).

    Attributes:
        exponents: per input, in ``[-1, 1]``: the gain is ``spread ** exponent``.
        rotation: a random rotation of the input space (the noise's orientation).
    """

    exponents: np.ndarray
    rotation: np.ndarray


def draw_randomness(rng: np.random.Generator, axes: int) -> SystemDraw:
    """One system's randomness (see :class:`SystemDraw`)."""
    return SystemDraw(rng.uniform(-1.0, 1.0, axes), random_rotation(rng, axes))


def build_system(draw: SystemDraw, s: FrontSettings, kappa: float, spread: float) -> System:
    """The system of ``draw`` at anisotropy ``kappa`` and gain spread ``spread``.

    Args:
        draw: the system's randomness.
        s: the settings (``dt``, ``rho``, ``floor``).
        kappa: smallest / largest actuator-noise variance.
        spread: gains lie in ``[1/spread, spread]``.

    Returns:
        The system with its anisotropic noise and the isotropic noise of equal trace.
    """
    m = draw.exponents.size
    a, b = double_integrator(s.dt, m, spread**draw.exponents)
    u = draw.rotation
    w = u @ np.diag(np.geomspace(1.0, kappa, m)) @ u.T
    n = a.shape[0]
    aniso = s.rho * (b @ w @ b.T + s.floor * np.eye(n))
    iso = np.trace(aniso) / n * np.eye(n)
    return System(a, b, aniso, iso)


def draw_system(rng: np.random.Generator, s: FrontSettings) -> System:
    """A random multi-input double integrator with actuator noise (see the module docstring).

    Args:
        rng: the stream for gains and the noise's orientation.
        s: the settings (its single ``kappa`` and ``gain_spread``).

    Returns:
        The system with its anisotropic noise and the isotropic noise of equal trace.
    """
    return build_system(draw_randomness(rng, s.axes), s, s.kappa, s.gain_spread)


@dataclass(frozen=True)
class Front:
    """One divergence's front: ``beta`` grid, state cost and control energy per ``beta``."""

    beta: np.ndarray
    state: np.ndarray
    energy: np.ndarray


@jax.jit
def _front_costs(a: Any, b: Any, r1: Any, noise: Any, betas: Any, gamma: Any) -> tuple[Any, Any]:
    """State cost and control energy for each ``beta`` (compiled once per shape)."""
    n, m = a.shape[0], b.shape[1]
    eye_n, eye_m = jnp.eye(n, dtype=a.dtype), jnp.eye(m, dtype=a.dtype)

    def point(beta: Any) -> tuple[Any, Any]:
        _, k = riccati(a, b, eye_n, beta * r1, gamma)
        return closed_loop_costs(
            a, b, k, noise, q_eval=eye_n, r_eval=eye_m, gamma=gamma, x0_cov=eye_n
        )

    return jax.vmap(point)(betas)


@x64
def front(system: System, noise: np.ndarray, divergence: str, s: FrontSettings) -> Front:
    """The ``beta``-swept front of one divergence (Riccati and Lyapunov vmapped over ``beta``).

    Args:
        system: the system.
        noise: its process-noise covariance.
        divergence: ``kl``, ``wkl``, ``kwkl`` or ``lqr``.
        s: the settings.

    Returns:
        :class:`Front` (``inf`` costs where the closed loop is unstable).
    """
    a, b = jnp.asarray(system.a), jnp.asarray(system.b)
    r1 = penalty_matrix(divergence, b, noise, 1.0, s.lam)
    r1 = r1 * b.shape[1] / jnp.trace(r1)
    betas = jnp.geomspace(1.0 / s.beta_span, s.beta_span, s.betas)
    state, energy = _front_costs(a, b, r1, jnp.asarray(noise), betas, jnp.asarray(s.gamma))
    return Front(np.asarray(betas), np.asarray(state), np.asarray(energy))


def compare_fronts(ours: Front, ref: Front, levels: int) -> tuple[float, float]:
    """Log state cost of ``ours`` minus ``ref``'s at equal control energy.

    Both fronts are read as ``log J_x`` against ``log J_u`` and interpolated at ``levels``
    energies spread over the inner 90 % of the range both cover.

    Args:
        ours: the front compared.
        ref: the reference front.
        levels: number of energy levels.

    Returns:
        ``(mean gap, largest gap)`` over the levels (negative: ``ours`` is better).

    Raises:
        ValueError: the fronts share no range of control energy.
    """
    curves = []
    for f in (ours, ref):
        ok = np.isfinite(f.state) & np.isfinite(f.energy) & (f.energy > 0)
        lu, lx = np.log(f.energy[ok]), np.log(f.state[ok])
        order = np.argsort(lu)
        curves.append((lu[order], lx[order]))
    lo = max(c[0][0] for c in curves)
    hi = min(c[0][-1] for c in curves)
    if not hi > lo:
        raise ValueError("the two fronts share no range of control energy: widen beta_span")
    span = hi - lo
    grid = np.linspace(lo + 0.05 * span, hi - 0.05 * span, levels)
    diff = np.interp(grid, *curves[0]) - np.interp(grid, *curves[1])
    return float(diff.mean()), float(diff.max())


def cell_key(kappa: float, spread: float) -> str:
    """The metric-key parts of one grid cell: ``kappa0p001.spread3``."""
    return f"kappa{number_part(float(kappa))}.spread{number_part(float(spread))}"


def front_study(s: FrontSettings, rng: np.random.Generator, systems: int) -> dict[str, Any]:
    """Fronts of every divergence on ``systems`` drawn systems, over the ``kappas x spreads`` grid.

    Each system's randomness (gain exponents, noise orientation) is drawn once and reused in
    every cell, so the cells are paired.

    Args:
        s: the settings.
        rng: the stream for the systems.
        systems: how many systems (the standard errors are over them).

    Returns:
        ``{"metrics": ..., "curves": ...}``: per cell ``front.<cell>.<div>.gap`` (mean over
        systems of the gap to KL's front), ``.gap_se``, ``.upper`` (``gap + 2 gap_se``),
        ``.worst`` (the largest gap at any level of any system), ``.oracle_gap`` (the gap to
        plain LQR, >= 0 by optimality), ``cond_R.<cell>.kl``; curves: the fronts of the first
        system at each ``kappa`` (gain spread ``s.gain_spread`` if in the grid, else the first).
    """
    draws = [draw_randomness(rng, s.axes) for _ in range(systems)]
    show = s.gain_spread if s.gain_spread in s.spreads else s.spreads[0]
    metrics: dict[str, float] = {}
    curves: dict[str, Any] = {}
    for kappa in s.kappas:
        for spread in s.spreads:
            cell = cell_key(kappa, spread)
            rows: dict[str, list[tuple[float, float, float]]] = {}
            conds = []
            for i, draw in enumerate(draws):
                system = build_system(draw, s, kappa, spread)
                fronts = {d: front(system, system.anisotropic, d, s) for d in FRONT_DIVERGENCES}
                r_kl = np.asarray(penalty_matrix("kl", system.b, system.anisotropic))
                conds.append(float(np.linalg.cond(r_kl)))
                for d in FRONT_DIVERGENCES:
                    gap, worst = compare_fronts(fronts[d], fronts["kl"], s.levels)
                    oracle, _ = compare_fronts(fronts[d], fronts["lqr"], s.levels)
                    rows.setdefault(d, []).append((gap, worst, oracle))
                if i == 0 and spread == show:
                    curves[f"kappa {kappa:g}"] = {
                        d: {"state": f.state.tolist(), "energy": f.energy.tolist()}
                        for d, f in fronts.items()
                    }
            for d, r in rows.items():
                arr, key = np.asarray(r), f"front.{cell}.{d}"
                gap, se = float(arr[:, 0].mean()), float(arr[:, 0].std(ddof=1) / np.sqrt(len(arr)))
                metrics.update(
                    {
                        f"{key}.gap": gap,
                        f"{key}.gap_se": se,
                        f"{key}.upper": gap + 2 * se,
                        f"{key}.worst": float(arr[:, 1].max()),
                        f"{key}.oracle_gap": float(arr[:, 2].mean()),
                    }
                )
            metrics[f"cond_R.{cell}.kl"] = float(np.median(conds))
    return {"metrics": metrics, "curves": curves}
