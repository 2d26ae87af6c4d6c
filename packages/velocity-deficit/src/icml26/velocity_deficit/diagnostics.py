"""Diagnostics of the two phenomena the paper names, measured against the exact field.

* **Velocity Deficit**: the ratio of the learned speed to the target speed along the path,
  ``R(t) = E |v(x_t, t)| / E |x1 - x0|`` with ``x_t = (1 - t) x0 + t x1``, independent pairs
  ``x0 ~ N(0, I)``, ``x1 ~ data``. The exact flow-matching field ``v* = E[x1 - x0 | x_t]`` has
  ``R_exact(t) < 1`` too (Jensen): at ``t = 0`` it is ``v*(x0, 0) = E[x1] - x0`` for *any*
  data, so ``R_exact(0) = E|E[x1] - x0| / E|x1 - x0|``, about ``1 / sqrt(1 + var)`` for data of
  per-coordinate variance ``var`` and small mean. That part is geometry. What a model lacks
  is ``R_learned(t) / R_exact(t)`` (:func:`exact_ratio` gives the denominator: the mixture's
  exact field, or for data without a density the closed form at ``t = 0`` and the training
  set's own exact field at small ``t``).
* **Integration Lag**: generated samples falling short of the data manifold, measured as the
  relative shortfall of their RMS radius about the data mean,
  ``lag = 1 - rms|x_gen - m| / rms|x_real - m|`` (> 0: samples stop short).

Every function takes batches of any shape ``(n, ...)`` (vectors or images).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from icml26.velocity_deficit.gmm import IsotropicGMM

__all__ = [
    "RatioProfile",
    "exact_ratio",
    "integration_lag",
    "nn_distance",
    "radii",
    "velocity_ratio",
]

VelocityFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class RatioProfile:
    """A speed ratio measured at a few times, read between them by linear interpolation.

    Outside ``[times[0], times[-1]]`` the end values are held; :meth:`covers` says where the
    profile was measured (a MAFM target is not applied beyond it).

    Attributes:
        times: increasing times in ``[0, 1]``.
        values: the ratio at each time (finite, > 0).
    """

    times: tuple[float, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        times = tuple(float(t) for t in self.times)
        values = tuple(float(v) for v in self.values)
        if not times or len(times) != len(values):
            raise ValueError(
                f"a RatioProfile needs one value per time, got {len(times)} times and "
                f"{len(values)} values"
            )
        if any(not 0 <= t <= 1 for t in times) or any(b <= a for a, b in itertools.pairwise(times)):
            raise ValueError(f"times must be increasing and in [0, 1], got {times}")
        if any(not (math.isfinite(v) and v > 0) for v in values):
            raise ValueError(f"ratio values must be finite and > 0, got {values}")
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "values", values)

    @property
    def t_max(self) -> float:
        """The last measured time."""
        return self.times[-1]

    def __call__(self, t: torch.Tensor | float) -> torch.Tensor:
        """The ratio at ``t`` (same shape as ``t``; float64 for a Python float)."""
        tt = torch.as_tensor(t)
        if not tt.is_floating_point():
            tt = tt.to(torch.float64)
        knots = torch.tensor(self.times, dtype=tt.dtype, device=tt.device)
        vals = torch.tensor(self.values, dtype=tt.dtype, device=tt.device)
        if len(self.times) == 1:
            return vals[0].expand(tt.shape).clone()
        flat = tt.reshape(-1).clamp(knots[0], knots[-1])
        idx = (torch.searchsorted(knots, flat, right=True) - 1).clamp(0, len(knots) - 2)
        w = (flat - knots[idx]) / (knots[idx + 1] - knots[idx])
        return (vals[idx] * (1 - w) + vals[idx + 1] * w).reshape(tt.shape)

    def covers(self, t: torch.Tensor) -> torch.Tensor:
        """``t <= t_max`` (boolean, same shape as ``t``)."""
        return torch.as_tensor(t) <= self.t_max + 1e-9

    def __truediv__(self, other: RatioProfile) -> RatioProfile:
        """The pointwise ratio at this profile's times (``other`` read there)."""
        them = other(torch.tensor(self.times, dtype=torch.float64))
        return RatioProfile(
            self.times, tuple(a / float(b) for a, b in zip(self.values, them, strict=False))
        )


def _as_batch(data: torch.Tensor | np.ndarray) -> torch.Tensor:
    x = torch.as_tensor(data)
    if not x.is_floating_point():
        x = x.to(torch.float32)
    if x.ndim < 2 or len(x) < 1:
        raise ValueError(
            f"data must be a batch (N, ...) of vectors or images, got shape {tuple(x.shape)}"
        )
    if not bool(torch.isfinite(x).all()):
        raise ValueError("data contains NaN or infinite values")
    return x


@torch.no_grad()
def velocity_ratio(
    velocity: VelocityFn,
    data: torch.Tensor | np.ndarray,
    times: Sequence[float],
    *,
    n: int = 1000,
    generator: torch.Generator | None = None,
) -> dict[float, float]:
    """``R(t) = E|v(x_t, t)| / E|x1 - x0|`` for each ``t`` in ``times`` (module docstring).

    Args:
        velocity: ``(x, t) -> v``, ``t`` a 0-d tensor; close over labels for conditional models.
        data: real samples ``x1``, ``(N, ...)`` (vectors or images).
        times: times in ``[0, 1]``.
        n: pairs per time (drawn with replacement from ``data``).
        generator: a CPU generator for the draws (moved to ``data``'s device).

    Returns:
        ``{t: R(t)}``.

    Raises:
        ValueError: data not a batch or not finite, a time outside ``[0, 1]``, or the
            velocity's output shape differs from ``x``'s.
    """
    x = _as_batch(data)
    out: dict[float, float] = {}
    for t in times:
        if not 0 <= t <= 1:
            raise ValueError(f"times must lie in [0, 1], got {t}")
        idx = torch.randint(0, len(x), (n,), generator=generator)
        x1 = x[idx.to(x.device)]
        x0 = torch.randn(x1.shape, generator=generator, dtype=x1.dtype).to(x.device)
        xt = (1 - t) * x0 + t * x1
        v = velocity(xt, torch.tensor(t, dtype=x1.dtype, device=x1.device))
        if v.shape != xt.shape:
            raise ValueError(
                f"velocity returned shape {tuple(v.shape)} for x of shape {tuple(xt.shape)}"
            )
        out[float(t)] = float(
            v.flatten(1).norm(dim=1).mean() / (x1 - x0).flatten(1).norm(dim=1).mean()
        )
    return out


def _empirical_field(bank: torch.Tensor) -> VelocityFn:
    """The exact FM field of the point cloud ``bank`` (each row a tiny Gaussian)."""
    flat = bank.flatten(1).double().cpu().numpy()
    k = len(flat)
    field = IsotropicGMM(flat, np.full(k, 1e-3), np.full(k, 1.0 / k))

    def fn(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return field.optimal_velocity(x.flatten(1), float(t)).reshape(x.shape)

    return fn


@torch.no_grad()
def exact_ratio(
    data: torch.Tensor | np.ndarray,
    times: Sequence[float] = (0.0,),
    *,
    field: VelocityFn | None = None,
    bank: torch.Tensor | np.ndarray | None = None,
    n: int = 1000,
    generator: torch.Generator | None = None,
) -> RatioProfile:
    """``R_exact(t)`` of the exact flow-matching field, as a :class:`RatioProfile`.

    Args:
        data: samples ``x1`` of the data ``(N, ...)`` (held-out rows where ``bank`` is given).
        times: the times to measure.
        field: the exact field ``(x, t) -> v*`` when known (a mixture's
            :meth:`~icml26.velocity_deficit.gmm.IsotropicGMM.optimal_velocity`).
        bank: without ``field``, the training rows whose own exact field stands in for the
            population's at ``t > 0`` (trustworthy only while ``x_t`` is still noise-dominated:
            on MNIST up to about ``t = 0.15``; later it memorises and its ratio exceeds 1).
            ``t = 0`` needs neither: ``v*(x0, 0) = E[x1] - x0`` for any data.
        n: pairs per time.
        generator: a CPU generator for the draws.

    Returns:
        The profile at ``times``.

    Raises:
        ValueError: a time ``> 0`` with neither ``field`` nor ``bank``, or ``bank`` rows of
            another shape than ``data``'s.
    """
    x = _as_batch(data)
    if field is not None:
        exact = field
    else:
        if any(t > 0 for t in times) and bank is None:
            raise ValueError(
                "R_exact(t) at t > 0 needs the exact field (field=...) or a bank of training "
                "rows (bank=...); at t = 0 the closed form E[x1] - x0 needs neither"
            )
        mean = x.mean(0, keepdim=True)
        empirical = None
        if bank is not None:
            rows = _as_batch(bank)
            if rows.shape[1:] != x.shape[1:]:
                raise ValueError(
                    f"bank rows have shape {tuple(rows.shape[1:])} but data rows "
                    f"{tuple(x.shape[1:])}: pass training rows of the same data as bank= "
                    "(e.g. x_train beside held-out x_val)"
                )
            empirical = _empirical_field(rows)

        def exact(xt: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            if float(t) == 0.0:
                return (mean - xt).to(xt.dtype)
            assert empirical is not None
            return empirical(xt, t).to(xt.dtype)

    ratios = velocity_ratio(exact, x, times, n=n, generator=generator)
    return RatioProfile(tuple(ratios), tuple(ratios.values()))


def radii(x: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Distances of the rows of ``x`` (flattened) to ``center``."""
    flat = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    return np.linalg.norm(flat - np.asarray(center).reshape(1, -1), axis=1)


def integration_lag(samples: np.ndarray, reference: np.ndarray) -> float:
    """``1 - rms radius(samples) / rms radius(reference)`` about the reference mean.

    Args:
        samples: generated samples ``(n, ...)``.
        reference: real samples of the same trailing shape.

    Returns:
        The lag (> 0: samples stop short of the data's spread).

    Raises:
        ValueError: trailing shapes differ.
    """
    samples, reference = np.asarray(samples), np.asarray(reference)
    if samples.ndim < 2 or samples.shape[1:] != reference.shape[1:]:
        raise ValueError(f"shape mismatch: samples {samples.shape}, reference {reference.shape}")
    ref = reference.reshape(len(reference), -1)
    center = ref.mean(0)
    r_gen = np.sqrt(np.mean(radii(samples, center) ** 2))
    r_ref = np.sqrt(np.mean(radii(ref, center) ** 2))
    return float(1.0 - r_gen / r_ref)


def nn_distance(queries: np.ndarray, bank: np.ndarray, *, chunk: int = 1024) -> np.ndarray:
    """Euclidean distance from each query row (flattened) to its nearest row of ``bank``."""
    q = torch.as_tensor(np.asarray(queries), dtype=torch.float32).flatten(1)
    b = torch.as_tensor(np.asarray(bank), dtype=torch.float32).flatten(1)
    if q.shape[1] != b.shape[1]:
        raise ValueError(f"shape mismatch: queries {tuple(q.shape)}, bank {tuple(b.shape)}")
    out = [torch.cdist(q[i : i + chunk], b).min(dim=1).values for i in range(0, len(q), chunk)]
    return torch.cat(out).numpy().astype(np.float64)
