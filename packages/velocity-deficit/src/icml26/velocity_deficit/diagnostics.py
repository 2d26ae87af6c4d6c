"""Diagnostics of the two phenomena the paper names.

* **Velocity Deficit**: the ratio of the learned speed to the target speed along the path,
  ``R(t) = E |v(x_t, t)| / E |x1 - x0|`` with ``x_t = (1 - t) x0 + t x1``, independent pairs
  ``x0 ~ N(0, I)``, ``x1 ~ data``. ``R < 1`` is the deficit. The same ratio of the exact field
  (known for mixtures) separates what the MSE objective itself loses (Jensen) from what a
  finite network loses on top.
* **Integration Lag**: generated samples falling short of the data manifold, measured as the
  relative shortfall of their RMS radius about the data mean,
  ``lag = 1 - rms|x_gen - m| / rms|x_real - m|`` (> 0: samples stop short), and as the gap of
  the mean distance to the nearest training point relative to held-out real data
  (``nn_gap = E d_NN(gen) / E d_NN(test) - 1``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

__all__ = ["integration_lag", "nn_distance", "radii", "velocity_ratio"]


@torch.no_grad()
def velocity_ratio(
    velocity: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    data: torch.Tensor,
    times: Sequence[float],
    *,
    n: int = 1000,
    generator: torch.Generator | None = None,
) -> dict[float, float]:
    """``R(t)`` for each ``t`` in ``times`` (module docstring).

    Args:
        velocity: ``(x, t) -> v``, ``t`` a 0-d tensor; close over labels for conditional models.
        data: ``(N, d)`` real samples ``x1``.
        times: times in [0, 1).
        n: pairs per time.
    """
    if data.ndim != 2:
        raise ValueError(f"data must be (N, d), got {tuple(data.shape)}")
    out: dict[float, float] = {}
    for t in times:
        if not 0 <= t <= 1:
            raise ValueError(f"times must lie in [0, 1], got {t}")
        idx = torch.randint(0, len(data), (n,), generator=generator)
        x1 = data[idx.to(data.device)]
        x0 = torch.randn(x1.shape, generator=generator, dtype=x1.dtype).to(data.device)
        xt = (1 - t) * x0 + t * x1
        v = velocity(xt, torch.tensor(t, dtype=x1.dtype, device=x1.device))
        out[float(t)] = float(v.norm(dim=1).mean() / (x1 - x0).norm(dim=1).mean())
    return out


def radii(x: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Distances of the rows of ``x`` to ``center``."""
    return np.linalg.norm(np.asarray(x, dtype=np.float64) - center[None, :], axis=1)


def integration_lag(samples: np.ndarray, reference: np.ndarray) -> float:
    """``1 - rms radius(samples) / rms radius(reference)`` about the reference mean."""
    samples, reference = np.asarray(samples), np.asarray(reference)
    if samples.ndim != 2 or reference.ndim != 2 or samples.shape[1] != reference.shape[1]:
        raise ValueError(f"shape mismatch: samples {samples.shape}, reference {reference.shape}")
    center = reference.mean(0)
    r_gen = np.sqrt(np.mean(radii(samples, center) ** 2))
    r_ref = np.sqrt(np.mean(radii(reference, center) ** 2))
    return float(1.0 - r_gen / r_ref)


def nn_distance(queries: np.ndarray, bank: np.ndarray, *, chunk: int = 1024) -> np.ndarray:
    """Euclidean distance from each query row to its nearest row of ``bank``."""
    q = torch.as_tensor(np.asarray(queries), dtype=torch.float32)
    b = torch.as_tensor(np.asarray(bank), dtype=torch.float32)
    if q.ndim != 2 or b.ndim != 2 or q.shape[1] != b.shape[1]:
        raise ValueError(f"shape mismatch: queries {tuple(q.shape)}, bank {tuple(b.shape)}")
    out = [torch.cdist(q[i : i + chunk], b).min(dim=1).values for i in range(0, len(q), chunk)]
    return torch.cat(out).numpy().astype(np.float64)
