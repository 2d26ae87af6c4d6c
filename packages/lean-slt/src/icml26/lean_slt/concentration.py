"""Gaussian Lipschitz concentration, checked by simulation.

``gaussian_lipschitz_concentration`` (``SLT/GaussianLipConcen.lean``): for ``X ~ N(0, I_n)``
and ``f`` ``L``-Lipschitz for the Euclidean norm (``L > 0``, ``n > 0``), for every ``t > 0``

    P(|f(X) - E f(X)| >= t)  <=  2 exp(-t^2 / (2 L^2)).

:func:`tail_check` draws ``f(X)`` and compares the empirical two-sided tail with the bound on
a grid of ``t``; the excess must stay below a simultaneous Monte Carlo error (DKW at level
``alpha`` plus the effect of an estimated mean). :func:`effective_variance_ratio` measures how
tight the bound is for a given ``f``: 1 when the tail decays like the bound, small when ``f``
concentrates much better than its Lipschitz constant says (the maximum of many Gaussians).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from icml26.lean_slt._validate import check_dimension, check_positive, chi_mean
from icml26.lean_slt.processes import expected_max_iid_gaussian

__all__ = [
    "LIPSCHITZ_FUNCTIONS",
    "LipschitzFunction",
    "TailCheck",
    "check_lipschitz",
    "concentration_bound",
    "effective_variance_ratio",
    "estimate_lipschitz",
    "tail_check",
]

ArrayFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class LipschitzFunction:
    """A function of ``x in R^n`` (rows of an array), its Lipschitz constant, its mean if known.

    Attributes:
        name: a short name.
        fn: vectorised ``(m, n) -> (m,)``.
        lipschitz: the constant ``L`` (Euclidean norm) the concentration bound uses.
        mean: ``n -> E f(X)`` when known exactly (else estimated by simulation).
        description: a formula for tables.
    """

    name: str
    fn: ArrayFn
    lipschitz: float
    mean: Callable[[int], float] | None = None
    description: str = ""


def _norm(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x, axis=1)


def _max(x: np.ndarray) -> np.ndarray:
    return x.max(axis=1)


def _log_sum_exp(beta: float) -> ArrayFn:
    def f(x: np.ndarray) -> np.ndarray:
        z = beta * x
        top = z.max(axis=1, keepdims=True)
        return (top[:, 0] + np.log(np.exp(z - top).sum(axis=1))) / beta

    return f


def _dist_to_orthant(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.minimum(x, 0.0), axis=1)


def _linear(x: np.ndarray) -> np.ndarray:
    # <a, x> with a = (1, .., 1) / sqrt(n): exactly N(0, 1), the case where the bound is sharpest.
    return x.sum(axis=1) / math.sqrt(x.shape[1])


#: The Lipschitz functions of the main job (all 1-Lipschitz for the Euclidean norm).
LIPSCHITZ_FUNCTIONS: dict[str, LipschitzFunction] = {
    "norm": LipschitzFunction("norm", _norm, 1.0, chi_mean, "||x||_2"),
    "max": LipschitzFunction("max", _max, 1.0, expected_max_iid_gaussian, "max_i x_i"),
    "softmax": LipschitzFunction(
        "softmax",
        _log_sum_exp(2.0),
        1.0,
        None,
        "(1/beta) log sum_i exp(beta x_i), beta = 2 (gradient = softmax weights, l2 norm <= 1)",
    ),
    "dist_to_set": LipschitzFunction(
        "dist_to_set", _dist_to_orthant, 1.0, None, "distance to the non-negative orthant"
    ),
    "linear": LipschitzFunction(
        "linear", _linear, 1.0, lambda n: 0.0, "<a, x>, ||a||_2 = 1 (exactly N(0, 1))"
    ),
}


def concentration_bound(t: np.ndarray | float, lipschitz: float) -> np.ndarray:
    """``min(1, 2 exp(-t^2 / (2 L^2)))`` (the theorem's right-hand side, capped at 1)."""
    L = check_positive("lipschitz", lipschitz)
    tt = np.asarray(t, dtype=float)
    return np.minimum(1.0, 2.0 * np.exp(-(tt**2) / (2 * L**2)))


def estimate_lipschitz(
    fn: ArrayFn,
    dim: int,
    rng: np.random.Generator,
    pairs: int = 2000,
    scales: tuple[float, ...] = (1.0, 1e-2, 1e-4),
) -> float:
    """A lower estimate of the Lipschitz constant: the largest ``|f(x) - f(y)| / ||x - y||``
    over random Gaussian ``x`` and ``y = x + s u`` (``u`` a random unit direction, ``s`` in
    ``scales``), plus random far pairs."""
    n = check_dimension("dim", dim)
    best = 0.0
    x = rng.standard_normal((pairs, n))
    for s in scales:
        u = rng.standard_normal((pairs, n))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        y = x + s * u
        best = max(best, float(np.max(np.abs(fn(x) - fn(y)) / s)))
    y = rng.standard_normal((pairs, n)) * 3
    dist = np.linalg.norm(x - y, axis=1)
    best = max(best, float(np.max(np.abs(fn(x) - fn(y)) / dist)))
    return best


def check_lipschitz(
    fn: ArrayFn, lipschitz: float, dim: int, rng: np.random.Generator, tol: float = 1e-6
) -> float:
    """Raise ``ValueError`` when a numerical check finds ``f`` is not ``L``-Lipschitz.

    The check can only refute (a difference quotient above ``L``), never prove, the
    Lipschitz property the theorem assumes.

    Args:
        fn: vectorised ``(m, dim) -> (m,)``.
        lipschitz: the claimed constant ``L > 0``.
        dim: dimension of the inputs.
        rng: the random stream for the probe points.
        tol: relative slack for rounding.

    Returns:
        The largest difference quotient found.

    Raises:
        ValueError: a quotient above ``L (1 + tol)`` (``f`` is not ``L``-Lipschitz), or
            ``L <= 0``.
    """
    L = check_positive("lipschitz", lipschitz)
    est = estimate_lipschitz(fn, dim, rng)
    if not math.isfinite(est) or est > L * (1 + tol):
        raise ValueError(
            f"f is not {L:g}-Lipschitz: a difference quotient of {est:.4g} was found "
            "(Gaussian Lipschitz concentration needs LipschitzWith L f)"
        )
    return est


@dataclass(frozen=True)
class TailCheck:
    """The empirical two-sided tail of ``f(X) - E f(X)`` against the bound.

    Attributes:
        t: the grid of deviations.
        tail: empirical ``P(|f - mean| >= t)``.
        bound: ``min(1, 2 exp(-t^2 / 2L^2))``.
        max_excess: ``max_t (tail - bound)`` (negative when the tail is below the bound).
        mc_error: a simultaneous error bar for the excess (see :func:`tail_check`).
        variance_ratio: :func:`effective_variance_ratio` of the empirical tail.
        mean: the mean used, ``mean_se`` its standard error (0 when exact).
    """

    t: np.ndarray
    tail: np.ndarray
    bound: np.ndarray
    max_excess: float
    mc_error: float
    variance_ratio: float
    mean: float
    mean_se: float
    draws: int


def effective_variance_ratio(
    t: np.ndarray, tail: np.ndarray, lipschitz: float, draws: int, min_count: int = 100
) -> float:
    """``L_eff^2 / L^2`` with ``L_eff^2 = max_t t^2 / (2 log(2 / P(t)))`` over ``t`` where at
    least ``min_count`` draws exceed ``t``: the smallest variance proxy for which the
    empirical tail still sits under ``2 exp(-t^2 / 2 L_eff^2)``. The theorem says <= 1."""
    L = check_positive("lipschitz", lipschitz)
    keep = (tail * draws >= min_count) & (t > 0) & (tail < 1)
    if not np.any(keep):
        return float("nan")
    proxy = t[keep] ** 2 / (2 * np.log(2 / tail[keep]))
    return float(proxy.max() / L**2)


def _simulate(
    f: LipschitzFunction, dim: int, draws: int, rng: np.random.Generator, chunk: int
) -> np.ndarray:
    """``f.fn`` on ``draws`` rows of ``N(0, I_dim)``, checked: finite, one value per row."""
    out = []
    for i in range(0, draws, chunk):
        rows = min(chunk, draws - i)
        v = np.asarray(f.fn(rng.standard_normal((rows, dim))))
        if v.shape != (rows,):
            raise ValueError(
                f"f {f.name!r} must map an (m, {dim}) array to shape (m,), got shape {v.shape} "
                f"for m = {rows}"
            )
        if not np.all(np.isfinite(v)):
            raise ValueError(f"f {f.name!r} returned NaN or inf on Gaussian inputs")
        out.append(v.astype(float))
    return np.concatenate(out)


def tail_check(
    f: LipschitzFunction,
    dim: int,
    rng: np.random.Generator,
    draws: int,
    *,
    mean_draws: int | None = None,
    alpha: float = 1e-3,
    grid: int = 120,
    chunk: int = 20_000,
    verify_lipschitz: bool = True,
) -> TailCheck:
    """Simulate ``f(X)``, ``X ~ N(0, I_dim)``, and compare its tail with the theorem's bound.

    The mean is exact when ``f.mean`` is known, else estimated on ``mean_draws`` independent
    draws (standard error ``se``). Monte Carlo error of the excess: DKW gives
    ``sup_t |P_hat(t) - P(t)| <= sqrt(log(2/alpha) / 2m)`` with probability ``1 - alpha``, and
    a mean off by ``delta = 3.29 se`` at most moves a tail from ``t`` to ``t - delta``, so
    ``P_hat(t) - B(t) <= DKW + max_t (B(t - delta) - B(t))``: that sum is ``mc_error``.

    Args:
        f: the function (its ``lipschitz`` constant is the bound's ``L``).
        dim: dimension of ``X``.
        rng: the random stream.
        draws: draws of ``f(X)``, at least 10.
        mean_draws: draws for an unknown mean (default ``draws``).
        alpha: the DKW band's level.
        grid: points of the ``t`` grid on ``(0, 5L]``.
        chunk: draws simulated at once.
        verify_lipschitz: first run :func:`check_lipschitz` on ``f`` (a difference-quotient
            search that refutes a wrong ``f.lipschitz``; it cannot prove one right).

    Returns:
        :class:`TailCheck`: tail, bound, excess, Monte Carlo error and variance-proxy ratio.

    Raises:
        ValueError: ``dim < 1`` or ``draws < 10``; ``f`` not ``f.lipschitz``-Lipschitz by a
            difference quotient (with ``verify_lipschitz``); ``f.fn`` returning anything but
            a finite array of shape ``(m,)`` for ``m`` rows.
    """
    n = check_dimension("dim", dim)
    m = check_dimension("draws", draws, 10)
    vals = _simulate(f, n, m, rng, chunk)  # refuses bad output before the Lipschitz search
    if verify_lipschitz:
        check_lipschitz(f.fn, f.lipschitz, n, rng)
    if f.mean is not None:
        mean, se = float(f.mean(n)), 0.0
    else:
        mm = check_dimension("mean_draws", mean_draws or m, 10)
        mv = _simulate(f, n, mm, rng, chunk)
        mean, se = float(mv.mean()), float(mv.std(ddof=1) / math.sqrt(mm))
    dev = np.sort(np.abs(vals - mean))
    t = np.linspace(0.02, 5.0, grid) * f.lipschitz
    tail = 1.0 - np.searchsorted(dev, t, side="left") / m  # P(|f - mean| >= t)
    bound = concentration_bound(t, f.lipschitz)
    delta = 3.2905 * se
    shift = float(np.max(concentration_bound(np.maximum(t - delta, 0.0), f.lipschitz) - bound))
    dkw = math.sqrt(math.log(2 / alpha) / (2 * m))
    return TailCheck(
        t=t,
        tail=tail,
        bound=bound,
        max_excess=float(np.max(tail - bound)),
        mc_error=dkw + shift,
        variance_ratio=effective_variance_ratio(t, tail, f.lipschitz, m),
        mean=mean,
        mean_se=se,
        draws=m,
    )
