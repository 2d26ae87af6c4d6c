"""Dudley's entropy integral and the bound of the formalisation.

``entropyIntegral s D = ∫_{(0, D]} sqrt(log N(eps, s)) d eps`` (``SLT/MetricEntropy.lean``,
with ``log N`` read as 0 when ``N <= 1``) and Dudley's theorem (``dudley``, ``SLT/Dudley.lean``):
for a process that is sub-Gaussian with parameter ``sigma`` for the metric of ``s``,
``E[exp(l (X_t - X_u))] <= exp(l^2 sigma^2 d(t, u)^2 / 2)``, centred at one point of ``s``,
with ``diam(s) <= D``,

    E sup_{t in s} X_t  <=  12 sqrt(2) sigma ∫_0^D sqrt(log N(eps, s)) d eps.

The integrand is non-increasing in ``eps``. A covering function with jumps is integrated
exactly between its jumps when they are given; otherwise adaptive quadrature on a log-spaced
partition handles the integrable ``sqrt(log(1/eps))`` singularity at 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import gamma, gammaincc

from icml26.lean_slt._validate import check_positive

__all__ = [
    "DUDLEY_CONSTANT",
    "dudley_bound",
    "entropy_integral",
    "power_law_entropy_integral",
]

#: The constant of the formalised theorem: ``12 sqrt(2)`` (``dudley``, ``SLT/Dudley.lean``).
DUDLEY_CONSTANT = 12.0 * math.sqrt(2.0)

LogCovering = Callable[[np.ndarray], np.ndarray]


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)
_DYADIC_LEVELS = 80  # pieces [D 2^-(k+1), D 2^-k]; below D 2^-80 the integral is < 1e-20 D


def entropy_integral(
    log_covering: LogCovering,
    diameter: float,
    *,
    breakpoints: Sequence[float] | np.ndarray | None = None,
    steps: bool = False,
) -> float:
    """``∫_0^D sqrt(max(0, log N(eps))) d eps`` for a covering function ``log N``.

    Args:
        log_covering: vectorised ``eps -> log N(eps)`` (natural log), non-increasing.
        diameter: upper limit ``D > 0`` (a bound on the diameter of the set).
        breakpoints: every ``eps`` in ``(0, D)`` where ``log N`` jumps or has a kink.
        steps: ``log N`` is constant between ``breakpoints`` (an exact step function): the
            integral is then an exact sum of rectangles, read at each piece's midpoint.

    Without ``steps``, 48-point Gauss-Legendre on every piece between the breakpoints and the
    dyadic points ``D 2^-k`` (which tame the integrable ``sqrt(log 1/eps)`` singularity at 0);
    all pieces are evaluated in one vectorised call.

    Returns:
        The integral (``log N`` read as 0 where ``N <= 1``, as ``entropyIntegral`` does).

    Raises:
        ValueError: ``diameter`` not finite and > 0, or ``log_covering`` returns a value that is
            not finite (the integral of the formalisation needs ``N(eps)`` finite).
    """
    D = check_positive("diameter", diameter)
    extra = np.asarray([] if breakpoints is None else breakpoints, dtype=float)
    extra = extra[(extra > 0) & (extra < D)]
    if steps:
        if breakpoints is None:
            raise ValueError("steps=True needs the breakpoints of the step function")
        pts = np.unique(np.concatenate([[0.0], extra, [D]]))
        vals = np.asarray(log_covering(0.5 * (pts[1:] + pts[:-1])), dtype=float)
        if not np.all(np.isfinite(vals)):
            raise ValueError("log N is not finite on (0, D]")
        return float(np.sum(np.diff(pts) * np.sqrt(np.maximum(vals, 0.0))))
    dyadic = D * 2.0 ** -np.arange(_DYADIC_LEVELS, -1, -1, dtype=float)
    pts = np.unique(np.concatenate([dyadic, extra]))
    a, b = pts[:-1], pts[1:]
    half, mid = 0.5 * (b - a), 0.5 * (b + a)
    eps = mid[:, None] + half[:, None] * _GL_NODES[None, :]
    vals = np.asarray(log_covering(eps.ravel()), dtype=float).reshape(eps.shape)
    if not np.all(np.isfinite(vals)):
        raise ValueError("log N is not finite on (0, D]")
    return float(np.sum(half[:, None] * _GL_WEIGHTS[None, :] * np.sqrt(np.maximum(vals, 0.0))))


def dudley_bound(
    log_covering: LogCovering,
    diameter: float,
    sigma: float = 1.0,
    *,
    breakpoints: Sequence[float] | np.ndarray | None = None,
    steps: bool = False,
) -> float:
    """The formalised Dudley bound ``12 sqrt(2) sigma ∫_0^D sqrt(log N(eps)) d eps``.

    Mirrors ``dudley`` (``SLT/Dudley.lean``).

    Args:
        log_covering: vectorised ``eps -> log N(eps)`` of the index set (see
            :func:`entropy_integral`).
        diameter: a bound ``D > 0`` on the diameter of the index set.
        sigma: the sub-Gaussian parameter of the process for the metric of ``log_covering``
            (1 for a Gaussian process with its canonical metric ``sqrt(E (X_t - X_u)^2)``).
        breakpoints: jumps or kinks of ``log N`` in ``(0, D)`` (see :func:`entropy_integral`).
        steps: ``log N`` is an exact step function between ``breakpoints``.

    Returns:
        The bound on ``E sup_t X_t``.

    Raises:
        ValueError: ``diameter`` or ``sigma`` not finite and > 0, or a non-finite ``log N``.
    """
    s = check_positive("sigma", sigma)
    return (
        DUDLEY_CONSTANT
        * s
        * entropy_integral(log_covering, diameter, breakpoints=breakpoints, steps=steps)
    )


def power_law_entropy_integral(scale: float, power: float, diameter: float) -> float:
    """Closed form of the integral for ``N(eps) = (A / eps)^p`` on ``(0, D]``, ``D <= A``.

    With ``u = log(A / eps)``: ``∫_0^D sqrt(p log(A/eps)) d eps = sqrt(p) A Γ(3/2, log(A/D))``,
    the upper incomplete gamma function. The reference for the quadrature tests.
    """
    A = check_positive("scale", scale)
    p = check_positive("power", power)
    D = check_positive("diameter", diameter)
    if D > A:
        raise ValueError(f"diameter must be <= scale for a power law with N >= 1, got {D} > {A}")
    x = math.log(A / D)
    return float(math.sqrt(p) * A * gamma(1.5) * gammaincc(1.5, x))
