"""Trajectory data: generated from a system, or a user's ``.npz`` (``q``, ``p``, ``t``), split for training.

A dataset holds trajectories ``x`` of shape ``(N, T+1, 2n)`` sampled every ``dt``. Training sees
the first ``horizon`` steps of the training trajectories; testing rolls out from held-out
initial conditions to ``10 × horizon`` steps.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from icml26.ro_hnn.systems import HamiltonianSystem

__all__ = [
    "Dataset",
    "Reduction",
    "Trajectories",
    "dataset_from_trajectories",
    "fit_reduction",
    "load_trajectories",
    "make_dataset",
    "save_trajectories",
]


@dataclass(frozen=True)
class Trajectories:
    """Phase-space trajectories ``x`` (``(N, T+1, 2n)``, ``x = (q, p)``) at a uniform step ``dt``.

    Attributes:
        x: the states, float64.
        dt: the time step, > 0.

    Raises:
        ValueError: ``x`` not ``(N, T+1, 2n)``, not finite, or ``dt <= 0``.
    """

    x: np.ndarray
    dt: float

    def __post_init__(self) -> None:
        x = self.x
        if not isinstance(x, np.ndarray) or x.ndim != 3:
            raise ValueError(
                f"trajectories must be an array of shape (N, T+1, 2n), got {getattr(x, 'shape', type(x))}"
            )
        if x.shape[-1] % 2 or x.shape[-1] == 0:
            raise ValueError(f"the phase-space dimension must be even (q and p), got {x.shape[-1]}")
        if x.shape[0] < 1 or x.shape[1] < 2:
            raise ValueError(
                f"need at least one trajectory of two time points, got shape {x.shape}"
            )
        if not np.all(np.isfinite(x)):
            bad = int(np.sum(~np.isfinite(x)))
            raise ValueError(f"trajectories contain {bad} NaN or infinite values")
        if not (self.dt > 0 and np.isfinite(self.dt)):
            raise ValueError(f"dt must be a positive number, got {self.dt}")

    @property
    def n(self) -> int:
        """Configuration dimension."""
        return self.x.shape[-1] // 2

    @property
    def q(self) -> np.ndarray:
        return self.x[..., : self.n]

    @property
    def p(self) -> np.ndarray:
        return self.x[..., self.n :]


def load_trajectories(path: str | os.PathLike[str]) -> Trajectories:
    """Read ``q``, ``p`` (``(N, T+1, n)`` or ``(T+1, n)``) and ``t`` (``(T+1,)``, uniform) from a ``.npz``.

    Args:
        path: the ``.npz`` file.

    Returns:
        :class:`Trajectories`.

    Raises:
        FileNotFoundError: no such file.
        ValueError: missing arrays, shapes that do not match, a non-uniform ``t``, NaN.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"trajectory file {path} does not exist")
    with np.load(path) as data:
        missing = [k for k in ("q", "p", "t") if k not in data]
        if missing:
            raise ValueError(f"{path} lacks the arrays {missing}; it needs q, p and t")
        q, p, t = (np.asarray(data[k], dtype=np.float64) for k in ("q", "p", "t"))
    if q.ndim == 2:
        q, p = q[None], p[None]
    if q.shape != p.shape or q.ndim != 3:
        raise ValueError(
            f"q and p must have the same shape (N, T+1, n), got {q.shape} and {p.shape}"
        )
    if t.ndim != 1 or t.shape[0] != q.shape[1]:
        raise ValueError(f"t must have shape ({q.shape[1]},) to match q, got {t.shape}")
    steps = np.diff(t)
    if steps.size == 0 or np.any(steps <= 0) or not np.allclose(steps, steps[0], rtol=1e-6, atol=0):
        raise ValueError("t must be strictly increasing with a uniform step")
    return Trajectories(np.concatenate([q, p], axis=-1), float(steps[0]))


def save_trajectories(path: str | os.PathLike[str], traj: Trajectories) -> None:
    """Write ``traj`` as a ``.npz`` readable by :func:`load_trajectories`."""
    t = traj.dt * np.arange(traj.x.shape[1])
    np.savez(path, q=traj.q, p=traj.p, t=t)


@dataclass(frozen=True)
class Dataset:
    """Training windows and test trajectories of one system."""

    name: str
    train: Trajectories  # (n_train, horizon + 1, 2n)
    test: Trajectories  # (n_test, 10 * horizon + 1, 2n)
    horizon: int
    damped: bool
    val: Trajectories | None = None  # (n_val, horizon + 1, 2n), own seed stream: model selection

    @property
    def n(self) -> int:
        return self.train.n

    @property
    def q_ref(self) -> np.ndarray:
        """Mean training configuration (the centre of the reduced bases and of the error norm)."""
        return self.train.q.reshape(-1, self.n).mean(axis=0)

    @property
    def x_ref(self) -> np.ndarray:
        return np.concatenate([self.q_ref, np.zeros(self.n)])


def make_dataset(
    system: HamiltonianSystem,
    *,
    n_train: int,
    n_test: int,
    horizon: int,
    seed: int,
    noise: float = 0.0,
) -> Dataset:
    """Simulate ``system`` from fresh initial conditions: training to ``horizon``, test to ``10 × horizon``.

    Args:
        system: the system.
        n_train: training trajectories.
        n_test: test trajectories (other initial conditions, drawn after the training ones).
        horizon: training steps.
        seed: the initial conditions' seed.
        noise: relative Gaussian noise on the training states.

    Returns:
        The float64 dataset.
    """
    from icml26.ro_hnn.systems import simulate

    rng = np.random.default_rng(seed)
    x_train = np.asarray(simulate(system, system.sample_initial_conditions(rng, n_train), horizon))
    x_test = np.asarray(
        simulate(system, system.sample_initial_conditions(rng, n_test), 10 * horizon)
    )
    if noise > 0:
        scale = np.std(x_train, axis=(0, 1), keepdims=True)
        x_train = x_train + noise * scale * rng.standard_normal(x_train.shape)
    return Dataset(
        system.name,
        Trajectories(x_train, system.dt),
        Trajectories(x_test, system.dt),
        horizon,
        system.damped,
    )


def dataset_from_trajectories(
    traj: Trajectories, *, n_test: int, name: str = "user", damped: bool = True
) -> Dataset:
    """Split a user's trajectories: the last ``n_test`` (at most half) are held out.

    Training uses the first tenth of each training trajectory (``horizon = (T) // 10``), the
    test rollouts the whole length (``10 × horizon``). Damping is learned unless told otherwise.
    """
    count, length = traj.x.shape[:2]
    if count < 2:
        raise ValueError("a user dataset needs at least two trajectories (train and test)")
    horizon = (length - 1) // 10
    if horizon < 2:
        raise ValueError(
            f"trajectories need at least 21 time points to test 10x the horizon, got {length}"
        )
    held = min(n_test, count // 2)
    train = traj.x[: count - held, : horizon + 1]
    test = traj.x[count - held :, : 10 * horizon + 1]
    return Dataset(name, Trajectories(train, traj.dt), Trajectories(test, traj.dt), horizon, damped)


@dataclass(frozen=True)
class Reduction:
    """What every reduced model starts from: a PSD basis and the typical coordinate sizes.

    Attributes:
        basis: ``(n, k)`` orthonormal cotangent-lift PSD basis, ``k`` wide enough for the
            symplectic autoencoder's last layer (its first ``latent_dof`` columns are PSD's).
        latent_scale: RMS of the PSD latent coordinates of the training states.
        full_scale: RMS of the centred training states.
        projection_error: PSD's relative projection error on the test states at
            ``latent_dof`` (median over trajectories): how far a linear reduction gets.
        projection_error_h1: the same over the test states of the training horizon only
            (the time span the training trajectories cover).
        frequency: ``rms(p) / rms(q)`` of the PSD latent coordinates of the training states,
            the data's typical frequency (the scale of the geometric HNN's potential).
    """

    basis: np.ndarray
    latent_scale: float
    full_scale: float
    projection_error: float
    projection_error_h1: float = float("nan")
    frequency: float = 1.0


def fit_reduction(ds: Dataset, latent_dof: int, width: int | None = None) -> Reduction:
    """Fit the PSD reduction of a dataset's training states (no test state is used to fit).

    Args:
        ds: the dataset.
        latent_dof: the latent configuration dimension ``d``.
        width: columns of the basis (default ``latent_dof``; give the autoencoder's widest
            hidden layer to start its last layer at the leading PSD modes).

    Returns:
        :class:`Reduction`.

    Raises:
        ValueError: ``latent_dof`` outside ``[1, n]``.
    """
    from icml26.ro_hnn.autoencoder import psd_basis

    if not 0 < latent_dof <= ds.n:
        raise ValueError(f"latent_dof={latent_dof} must be in [1, n={ds.n}]")
    snapshots = ds.train.x.reshape(-1, 2 * ds.n)
    q, p = snapshots[:, : ds.n], snapshots[:, ds.n :]
    k = min(ds.n, 2 * q.shape[0], max(latent_dof, width or latent_dof))
    basis = psd_basis(q, p, k, ds.q_ref)
    v = basis[:, :latent_dof]
    z = np.concatenate([(q - ds.q_ref) @ v, p @ v], axis=1)
    test = ds.test.x
    tq, tp = test[..., : ds.n] - ds.q_ref, test[..., ds.n :]
    recon = np.concatenate([tq @ v @ v.T + ds.q_ref, tp @ v @ v.T], axis=-1)
    sq_err, sq_norm = (recon - test) ** 2, (test - ds.x_ref) ** 2
    err = np.sqrt(np.sum(sq_err, axis=(1, 2)) / np.sum(sq_norm, axis=(1, 2)))
    first = slice(0, ds.horizon + 1)
    err_h1 = np.sqrt(np.sum(sq_err[:, first], axis=(1, 2)) / np.sum(sq_norm[:, first], axis=(1, 2)))
    zq, zp = z[:, :latent_dof], z[:, latent_dof:]
    rms_q, rms_p = float(np.sqrt(np.mean(zq**2))), float(np.sqrt(np.mean(zp**2)))
    return Reduction(
        basis,
        float(np.sqrt(np.mean(z**2))) or 1.0,
        float(np.sqrt(np.mean((snapshots - ds.x_ref) ** 2))) or 1.0,
        float(np.median(err)),
        float(np.median(err_h1)),
        rms_p / rms_q if rms_q > 0 and rms_p > 0 else 1.0,
    )
