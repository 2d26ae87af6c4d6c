"""ODE samplers for ``dx/dt = v(x, t)`` from t = 0 (noise) to t = 1 (data).

Euler (order 1, one evaluation per step), Heun (explicit trapezoid, order 2, two) and the
explicit midpoint rule (order 2, two). The number of function evaluations (NFE) is
``steps * evals_per_step``; the time grid is uniform, a power grid ``t_i = (i / N)^rho``, or
any increasing sequence the caller passes (it must start at 0 and end at 1, a common source
of silently wrong samples when it does not).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Literal

import torch

__all__ = ["EVALS_PER_STEP", "Method", "VelocityFn", "integrate", "steps_for_nfe", "time_grid"]

Method = Literal["euler", "heun", "midpoint"]
VelocityFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
EVALS_PER_STEP: dict[str, int] = {"euler": 1, "heun": 2, "midpoint": 2}


def steps_for_nfe(nfe: int, method: str) -> int:
    """Steps of ``method`` that spend exactly ``nfe`` evaluations (error if impossible)."""
    if method not in EVALS_PER_STEP:
        raise ValueError(f"unknown sampler {method!r}; choose from {', '.join(EVALS_PER_STEP)}")
    if isinstance(nfe, bool) or not isinstance(nfe, int) or nfe < 1:
        raise ValueError(f"NFE must be an integer >= 1, got {nfe!r}")
    per = EVALS_PER_STEP[method]
    if nfe % per:
        raise ValueError(f"{method} spends {per} evaluations per step: NFE {nfe} is not a multiple")
    return nfe // per


def time_grid(
    steps: int, kind: Literal["uniform", "power"] = "uniform", rho: float = 2.0
) -> torch.Tensor:
    """``steps + 1`` increasing times from 0 to 1 (float64)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    s = torch.linspace(0.0, 1.0, steps + 1, dtype=torch.float64)
    if kind == "uniform":
        return s
    if kind == "power":
        if rho <= 0:
            raise ValueError(f"rho must be > 0, got {rho}")
        return s**rho
    raise ValueError(f"unknown time grid {kind!r}; choose uniform or power")


def _check_grid(grid: torch.Tensor | Sequence[float]) -> torch.Tensor:
    g = torch.as_tensor(grid, dtype=torch.float64).reshape(-1)
    if g.numel() < 2:
        raise ValueError("a time grid needs at least two points")
    if not torch.all(torch.isfinite(g)) or not torch.all(g[1:] > g[:-1]):
        raise ValueError("the time grid must be finite and strictly increasing")
    if abs(float(g[0])) > 1e-12 or abs(float(g[-1]) - 1.0) > 1e-12:
        raise ValueError(
            f"the time grid must run from 0 (noise) to 1 (data), got {float(g[0])} .. {float(g[-1])}"
        )
    return g


@torch.no_grad()
def integrate(
    velocity: VelocityFn,
    x0: torch.Tensor,
    *,
    steps: int | None = None,
    method: Method = "euler",
    grid: torch.Tensor | Sequence[float] | None = None,
    return_path: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
    """Integrate ``dx/dt = velocity(x, t)`` from ``x0`` at t = 0 to t = 1.

    Args:
        velocity: ``(x, t) -> v`` with ``t`` a 0-d tensor of ``x``'s dtype.
        x0: ``(n, ...)`` starting points (noise): vectors or images.
        steps: number of uniform steps (ignored when ``grid`` is given).
        method: ``euler``, ``heun`` or ``midpoint``.
        grid: explicit times ``0 = t_0 < ... < t_N = 1``.
        return_path: also return the states at every grid time.

    Returns:
        the state at t = 1 (and the list of states when ``return_path``).

    Raises:
        ValueError: an unknown method, neither ``steps`` nor ``grid``, a grid that does not run
            from 0 to 1, NaN in ``x0``, or a velocity of another shape than ``x``.
    """
    if method not in EVALS_PER_STEP:
        raise ValueError(f"unknown sampler {method!r}; choose from {', '.join(EVALS_PER_STEP)}")
    if grid is None:
        if steps is None:
            raise ValueError("give steps or grid")
        grid = time_grid(steps)
    g = _check_grid(grid)
    if not torch.all(torch.isfinite(x0)):
        raise ValueError("x0 contains NaN or infinite values")
    times = [torch.tensor(float(t), dtype=x0.dtype, device=x0.device) for t in g]
    x = x0
    path = [x0] if return_path else []
    for t0, t1 in itertools.pairwise(times):
        h = t1 - t0
        v0 = velocity(x, t0)
        if v0.shape != x.shape:
            raise ValueError(
                f"velocity returned shape {tuple(v0.shape)} for x of shape {tuple(x.shape)}"
            )
        if method == "euler":
            x = x + h * v0
        elif method == "heun":
            v1 = velocity(x + h * v0, t1)
            x = x + 0.5 * h * (v0 + v1)
        else:  # midpoint
            x = x + h * velocity(x + 0.5 * h * v0, t0 + 0.5 * h)
        if return_path:
            path.append(x)
    return (x, path) if return_path else x
