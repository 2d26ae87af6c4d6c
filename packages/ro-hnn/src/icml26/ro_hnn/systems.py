"""High-dimensional Hamiltonian systems with a known Hamiltonian, and their reference solver.

Every system has unit masses, ``H(q, p) = ½|p|² + V(q)``, optionally Rayleigh damping
``dp/dt = -∂H/∂q - γ p``. Reference trajectories are produced by a Strang splitting of the exact
damping flow around Störmer-Verlet (leapfrog) with many small sub-steps per observation step,
so the data's own integration error is far below every model's error.

* :class:`FPUTChain`: the β-Fermi-Pasta-Ulam-Tsingou chain of ``n`` masses between walls.
* :class:`WaveEquation`: the 1-D linear wave equation on ``[0, 1]`` (Dirichlet), finite differences.
* :class:`DampedCloth`: a 3-D mass-spring cloth pinned at two corners, under gravity, damped.

Initial conditions come from a low-dimensional parametric family (a few excited modes, a
pulse's position and width, a cloth's tilt and initial velocity), as in model order reduction:
the solution set is a low-dimensional manifold embedded in the high-dimensional phase space.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "SYSTEMS",
    "DampedCloth",
    "FPUTChain",
    "HamiltonianSystem",
    "WaveEquation",
    "make_system",
    "simulate",
]


class HamiltonianSystem(ABC):
    """A separable Hamiltonian system with unit masses and optional Rayleigh damping."""

    name: str = "system"
    #: observation time step of the data.
    dt: float
    #: Rayleigh damping rate γ (0 for conservative systems).
    damping: float = 0.0

    @property
    @abstractmethod
    def dof(self) -> int:
        """Number of configuration coordinates ``n`` (phase space has ``2n`` dimensions)."""

    @abstractmethod
    def potential(self, q: jax.Array) -> jax.Array:
        """``V(q)`` for one configuration ``q`` of shape ``(n,)``."""

    @abstractmethod
    def sample_initial_conditions(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` initial states ``x0 = (q0, p0)``, shape ``(count, 2n)``."""

    @property
    @abstractmethod
    def max_frequency(self) -> float:
        """An upper bound of the linearised angular frequencies (sets the reference step)."""

    @property
    def damped(self) -> bool:
        return self.damping > 0.0

    def substeps(self, accuracy: float = 0.05) -> int:
        """Reference sub-steps per observation step so that ``h·ω_max <= accuracy``."""
        return max(1, math.ceil(self.dt * self.max_frequency / accuracy))

    def hamiltonian(self, x: jax.Array) -> jax.Array:
        """True energy ``H(x)`` of one state ``x = (q, p)`` of shape ``(2n,)``."""
        q, p = x[: self.dof], x[self.dof :]
        return 0.5 * jnp.sum(p * p) + self.potential(q)

    def force(self, q: jax.Array) -> jax.Array:
        return -jax.grad(self.potential)(q)


@dataclass(frozen=True)
class FPUTChain(HamiltonianSystem):
    """β-FPUT chain: ``V = κ Σ_i (s_i²/2 + β κ s_i⁴/4)``, ``s_i = q_{i+1} - q_i``, walls at both ends.

    ``κ = ((n+1)/π)²`` makes the lowest linear frequencies ``ω_k ≈ k``, and ``β κ s² ≈ β a²``
    for a mode amplitude ``a``, so ``β = O(1)`` is genuinely nonlinear at any ``n``. Initial
    conditions excite the first ``modes`` normal modes (amplitudes ``amplitude · U[-1,1]/k``)
    in position and velocity. The nonlinearity felt is ``β · amplitude²``: it sets how fast
    energy leaks from the excited modes into higher ones, i.e. how many dimensions the solution
    set fills over a long rollout (at ``amplitude = 1`` a linear basis fitted on 20 steps misses
    ~35% of a 200-step rollout even with 8 modes; at ``0.3`` under 1%).
    """

    n: int = 32
    beta: float = 0.25
    modes: int = 2
    dt: float = 0.1
    amplitude: float = 1.0
    name: str = "fput"
    damping: float = 0.0

    def __post_init__(self) -> None:
        if self.n < 2 or self.modes < 1 or self.modes > self.n:
            raise ValueError(
                f"FPUT needs n >= 2 and 1 <= modes <= n, got n={self.n}, modes={self.modes}"
            )
        if not self.amplitude > 0:
            raise ValueError(f"FPUT amplitude must be positive, got {self.amplitude}")

    @property
    def dof(self) -> int:
        return self.n

    @property
    def kappa(self) -> float:
        return ((self.n + 1) / math.pi) ** 2

    @property
    def max_frequency(self) -> float:
        amp = 2.0 * math.sqrt(self.kappa)
        return amp * math.sqrt(1.0 + 3.0 * self.beta * 4.0)  # hardening at strain ~ 2/sqrt(κ)

    def potential(self, q: jax.Array) -> jax.Array:
        padded = jnp.concatenate([jnp.zeros(1, q.dtype), q, jnp.zeros(1, q.dtype)])
        s = jnp.diff(padded)
        k = self.kappa
        return k * jnp.sum(0.5 * s**2 + 0.25 * self.beta * k * s**4)

    def sample_initial_conditions(self, rng: np.random.Generator, count: int) -> np.ndarray:
        j = np.arange(1, self.n + 1)
        k = np.arange(1, self.modes + 1)
        shapes = np.sin(np.outer(k, j) * np.pi / (self.n + 1))  # (modes, n)
        omega = 2.0 * math.sqrt(self.kappa) * np.sin(k * np.pi / (2 * (self.n + 1)))
        a = self.amplitude * rng.uniform(-1.0, 1.0, (count, self.modes)) / k
        b = self.amplitude * rng.uniform(-1.0, 1.0, (count, self.modes)) / k
        q0 = a @ shapes
        p0 = (b * omega) @ shapes
        return np.concatenate([q0, p0], axis=1)


@dataclass(frozen=True)
class WaveEquation(HamiltonianSystem):
    """Linear wave ``u_tt = u_xx`` on ``[0,1]``, ``u = 0`` at both ends, ``n`` interior nodes.

    ``H = Σ p²/2 + κ/2 Σ (q_{i+1} - q_i)²`` with ``κ = (n+1)²`` (unit wave speed). Initial
    conditions: a Gaussian pulse of random centre ``μ ~ U[0.35, 0.65]`` and width
    ``w ~ U[0.04, 0.08]`` at rest; it splits into two travelling pulses that reflect at the
    walls (period 2), the textbook case where linear reduced bases need many modes.
    """

    n: int = 64
    dt: float = 0.01
    name: str = "wave"
    damping: float = 0.0

    def __post_init__(self) -> None:
        if self.n < 4:
            raise ValueError(f"the wave equation needs n >= 4 nodes, got {self.n}")

    @property
    def dof(self) -> int:
        return self.n

    @property
    def kappa(self) -> float:
        return float((self.n + 1) ** 2)

    @property
    def max_frequency(self) -> float:
        return 2.0 * math.sqrt(self.kappa)

    def potential(self, q: jax.Array) -> jax.Array:
        padded = jnp.concatenate([jnp.zeros(1, q.dtype), q, jnp.zeros(1, q.dtype)])
        return 0.5 * self.kappa * jnp.sum(jnp.diff(padded) ** 2)

    def sample_initial_conditions(self, rng: np.random.Generator, count: int) -> np.ndarray:
        x = np.arange(1, self.n + 1) / (self.n + 1)
        mu = rng.uniform(0.35, 0.65, (count, 1))
        width = rng.uniform(0.04, 0.08, (count, 1))
        q0 = np.exp(-0.5 * ((x[None, :] - mu) / width) ** 2)
        return np.concatenate([q0, np.zeros_like(q0)], axis=1)


@dataclass(frozen=True)
class DampedCloth(HamiltonianSystem):
    """A ``nx × ny`` mass-spring cloth in 3-D pinned at two corners, under gravity, damped.

    Structural and shear springs of stiffness ``k`` with rest lengths of the flat grid,
    gravity ``g`` along ``-z`` (potential zero at ``z = -1``, the lowest reachable height, so
    ``H > 0``), Rayleigh damping ``γ``. The cloth starts flat, tilted by ``θ ~ U[0, tilt_max]``
    about its pinned edge, with a random initial velocity ``v ~ N(0, velocity_std²)`` per axis
    ramped along the cloth. ``dof = 3 (nx·ny - 2)``.

    The random velocity and weak damping excite many elastic modes that ring for the whole
    rollout (a linear basis of 8 modes fitted on 20 steps misses ~22% of a 200-step rollout);
    with ``velocity_std = 0`` (a one-parameter family: the tilt) and ``damping = 2`` the
    elastic ringing dies within the training window and 8 modes miss ~4%.
    """

    nx: int = 5
    ny: int = 5
    k: float = 200.0
    g: float = 2.0
    damping: float = 0.3
    dt: float = 0.05
    tilt_max: float = math.pi / 3
    velocity_std: float = 0.5
    name: str = "cloth"
    _springs: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.nx < 2 or self.ny < 2:
            raise ValueError(f"the cloth needs at least 2x2 nodes, got {self.nx}x{self.ny}")
        if self.damping < 0 or self.tilt_max < 0 or self.velocity_std < 0:
            raise ValueError(
                "cloth damping, tilt_max and velocity_std must be >= 0, got "
                f"{self.damping}, {self.tilt_max}, {self.velocity_std}"
            )
        pairs = []
        for i in range(self.nx):
            for j in range(self.ny):
                for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):  # structural + shear
                    a, b = i + di, j + dj
                    if 0 <= a < self.nx and 0 <= b < self.ny:
                        pairs.append((i * self.ny + j, a * self.ny + b))
        springs = np.asarray(pairs)
        rest = np.linalg.norm(
            self._grid(0.0)[springs[:, 0]] - self._grid(0.0)[springs[:, 1]], axis=1
        )
        object.__setattr__(self, "_springs", (springs[:, 0], springs[:, 1], rest))

    @property
    def spacing(self) -> float:
        return 1.0 / (max(self.nx, self.ny) - 1)

    @property
    def pinned(self) -> tuple[int, int]:
        return (0, (self.nx - 1) * self.ny)  # nodes (0, 0) and (nx-1, 0)

    @property
    def free(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.nx * self.ny), self.pinned)

    @property
    def dof(self) -> int:
        return 3 * (self.nx * self.ny - 2)

    @property
    def max_frequency(self) -> float:
        return 2.0 * math.sqrt(8.0 * self.k)

    def _grid(self, theta: float) -> np.ndarray:
        """Node positions ``(nx·ny, 3)`` of the flat cloth tilted by ``theta`` about its pinned edge."""
        i, j = np.meshgrid(np.arange(self.nx), np.arange(self.ny), indexing="ij")
        s = self.spacing
        pos = np.stack([i * s, j * s * np.cos(theta), -j * s * np.sin(theta)], axis=-1)
        return pos.reshape(-1, 3)

    def positions(self, q: jax.Array) -> jax.Array:
        """All node positions ``(nx·ny, 3)`` from the free coordinates ``q``."""
        anchor = jnp.asarray(self._grid(0.0), q.dtype)
        return anchor.at[self.free].set(q.reshape(-1, 3))

    def potential(self, q: jax.Array) -> jax.Array:
        a, b, rest = self._springs
        pos = self.positions(q)
        length = jnp.sqrt(jnp.sum((pos[a] - pos[b]) ** 2, axis=-1) + 1e-30)
        elastic = 0.5 * self.k * jnp.sum((length - jnp.asarray(rest, q.dtype)) ** 2)
        gravity = self.g * jnp.sum(q.reshape(-1, 3)[:, 2] + 1.0)
        return elastic + gravity

    def sample_initial_conditions(self, rng: np.random.Generator, count: int) -> np.ndarray:
        free = self.free
        ramp = (self._grid(0.0)[free, 1] / max(self._grid(0.0)[:, 1].max(), 1e-12))[:, None]
        states = []
        for _ in range(count):
            theta = rng.uniform(0.0, self.tilt_max)
            velocity = rng.normal(0.0, 1.0, 3) * self.velocity_std
            q0 = self._grid(theta)[free].ravel()
            p0 = (ramp * velocity[None, :]).ravel()
            states.append(np.concatenate([q0, p0]))
        return np.stack(states)


SYSTEMS = ("fput", "wave", "cloth")


def make_system(name: str, size: int, **family: float) -> HamiltonianSystem:
    """The system ``name`` at ``size`` (FPUT masses, wave nodes, or cloth nodes per side).

    ``family`` sets the initial-condition family and constants of that system's dataclass
    (``amplitude`` for FPUT; ``damping``, ``tilt_max``, ``velocity_std`` for the cloth).

    Args:
        name: ``fput``, ``wave`` or ``cloth``.
        size: masses, nodes, or nodes per side.
        **family: fields of the system's dataclass.

    Returns:
        The system (a frozen dataclass: its ``hamiltonian`` can be a static jit argument).

    Raises:
        ValueError: an unknown name.
    """
    if name == "fput":
        return FPUTChain(n=size, **family)  # type: ignore[arg-type]
    if name == "wave":
        return WaveEquation(n=size, **family)  # type: ignore[arg-type]
    if name == "cloth":
        return DampedCloth(nx=size, ny=size, **family)  # type: ignore[arg-type]
    raise ValueError(f"unknown system {name!r}; known systems: {', '.join(SYSTEMS)}")


def reference_step(system: HamiltonianSystem, h: float):  # type: ignore[no-untyped-def]
    """One Strang-split damped leapfrog step of size ``h`` for ``system`` (a pure function of x)."""
    n = system.dof
    decay = math.exp(-0.5 * system.damping * h)

    def step(x: jax.Array) -> jax.Array:
        q, p = x[:n], x[n:]
        p = decay * p
        p = p + 0.5 * h * system.force(q)
        q = q + h * p
        p = p + 0.5 * h * system.force(q)
        p = decay * p
        return jnp.concatenate([q, p])

    return step


def simulate(
    system: HamiltonianSystem,
    x0: np.ndarray | jax.Array,
    steps: int,
    *,
    substeps: int | None = None,
) -> jax.Array:
    """Reference trajectories: ``x0 (B, 2n)`` -> ``(B, steps + 1, 2n)`` at spacing ``system.dt``.

    Always float64 (under ``jax.enable_x64``, whatever the caller's global setting).
    """
    with jax.enable_x64(True):
        return _simulate(system, jnp.asarray(x0, jnp.float64), steps, substeps)


def _simulate(
    system: HamiltonianSystem, x0: jax.Array, steps: int, substeps: int | None
) -> jax.Array:
    if x0.ndim != 2 or x0.shape[1] != 2 * system.dof:
        raise ValueError(
            f"initial states must have shape (batch, {2 * system.dof}) for {system.name}, got {x0.shape}"
        )
    m = substeps or system.substeps()
    step = reference_step(system, system.dt / m)

    def observe(x: jax.Array, _: None) -> tuple[jax.Array, jax.Array]:
        x = jax.lax.fori_loop(0, m, lambda _, y: step(y), x)
        return x, x

    def one(x: jax.Array) -> jax.Array:
        _, xs = jax.lax.scan(observe, x, None, length=steps)
        return jnp.concatenate([x[None], xs])

    return jax.jit(jax.vmap(one))(x0)
