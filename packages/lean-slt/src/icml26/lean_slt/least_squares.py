"""Least squares over a class ``F``: estimators, the master error bound, and the rates.

Model (``RegressionModel``, ``SLT/LeastSquares/Defs.lean``): ``y_i = f*(x_i) + sigma w_i`` with
``w ~ N(0, I_n)``; error ``||f_hat - f*||_n^2 = (1/n) sum_i (f_hat(x_i) - f*(x_i))^2``.

* ``master_error_bound`` (``SLT/LeastSquares/MasterErrorBound.lean``): if the shifted class is
  star-shaped and ``delta*`` satisfies the critical inequality ``G_n(delta*) / delta* <=
  delta* / (2 sigma)`` (``G_n`` the local Gaussian complexity), then for ``t >= delta*``,
  ``P(||f_hat - f*||_n^2 <= 16 t delta*) >= 1 - exp(-n t delta* / (2 sigma^2))``.
* ``linear_minimax_rate_rank`` (``.../LinearRegression/MinimaxRate.lean``): for the linear class
  and a design of rank ``r``, ``||f_hat - f*||_n^2 <= C1 sigma^2 r / n`` with probability
  ``>= 1 - exp(-C2 r)``, ``C1 = 16 (192 sqrt 2)^2``, ``C2 = (192 sqrt 2)^2 / 2``.
* the ``l1`` case: ``local_gaussian_complexity_bound`` (Dudley, ``G_n(delta) <= 24 sqrt 2 /
  sqrt n ∫_0^{2 delta} sqrt(log N)``) with Maurey's covering of the ``l1`` image
  (``l1BallImage_coveringNumber_le``, columns ``||X_j||_2 <= sqrt n``) gives ``delta*`` and
  the slow rate ``sigma R sqrt(log d / n)`` up to logarithms; the formalisation proves the
  pieces, the composition into one rate is done here numerically.
* the ``l0`` case (best subset over ``s``-sparse vectors, rate ``sigma^2 s log(ed/s) / n``) is
  textbook (Raskutti, Wainwright & Yu 2011, q = 0), not formalised: the map says so.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from icml26.lean_slt._validate import (
    check_dimension,
    check_nonnegative,
    check_positive,
    chi_mean,
)
from icml26.lean_slt.covering import l1_ball_log_covering_bound
from icml26.lean_slt.entropy import entropy_integral

__all__ = [
    "LINEAR_C1_RANK",
    "LINEAR_C2_RANK",
    "RateFit",
    "best_subset_ls",
    "critical_radius",
    "empirical_error",
    "fit_exponent",
    "formal_linear_rate_bound",
    "l1_constrained_ls",
    "l1_local_complexity_bound",
    "linear_critical_radius",
    "linear_local_complexity",
    "master_error_bound",
    "ols",
    "project_l1_ball",
]

#: ``linear_C₁_rank = 16 (192 sqrt 2)^2`` of ``linear_minimax_rate_rank``.
LINEAR_C1_RANK = 16.0 * (192.0 * math.sqrt(2.0)) ** 2
#: ``linear_C₂_rank = (192 sqrt 2)^2 / 2`` of ``linear_minimax_rate_rank``.
LINEAR_C2_RANK = (192.0 * math.sqrt(2.0)) ** 2 / 2.0


def _check_design(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"need X of shape (n, d) and y of shape (n,), got {X.shape} and {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite (found NaN or inf)")
    return X, y


def empirical_error(X: np.ndarray, theta_hat: np.ndarray, theta_star: np.ndarray) -> float:
    """``||f_hat - f*||_n^2 = ||X (theta_hat - theta*)||_2^2 / n``."""
    r = X @ (np.asarray(theta_hat) - np.asarray(theta_star))
    return float(r @ r / X.shape[0])


# -- estimators ---------------------------------------------------------------------------------


def ols(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares over all linear predictors (minimum-norm solution)."""
    X, y = _check_design(X, y)
    return np.linalg.lstsq(X, y, rcond=None)[0]


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto ``{theta : ||theta||_1 <= R}`` (sort-and-threshold)."""
    R = check_nonnegative("radius", radius)
    v = np.asarray(v, dtype=float)
    if np.abs(v).sum() <= R:
        return v.copy()
    if R == 0:
        return np.zeros_like(v)
    u = np.sort(np.abs(v))[::-1]
    css = np.cumsum(u)
    k = np.arange(1, u.size + 1)
    hits = np.nonzero(u * k > css - R)[0]
    rho = int(hits[-1]) if hits.size else 0
    tau = (css[rho] - R) / (rho + 1)
    return np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)


def _top_singular_value_sq(X: np.ndarray, rng_seed: int = 0, iters: int = 50) -> float:
    """``||X||_op^2`` by power iteration on ``X^T X`` (a full SVD costs far more)."""
    v = np.asarray(np.random.default_rng(rng_seed).standard_normal(X.shape[1]), dtype=float)
    v = v / float(np.linalg.norm(v))
    val = 0.0
    for _ in range(iters):
        w = X.T @ (X @ v)
        val = float(np.linalg.norm(w))
        if val == 0:
            return 0.0
        v = w / val
    return val * 1.01  # a safe step: power iteration approaches from below


def l1_constrained_ls(
    X: np.ndarray, y: np.ndarray, radius: float, *, iters: int = 3000, tol: float = 1e-8
) -> np.ndarray:
    """``argmin_{||theta||_1 <= R} ||y - X theta||^2`` by accelerated projected gradient (FISTA).

    FISTA with gradient-based adaptive restart (momentum reset when it points uphill); stops
    when the relative change of the iterate falls below ``tol`` (or after ``iters``).

    Args:
        X: ``(n, d)`` design.
        y: ``(n,)`` responses.
        radius: ``R >= 0``.
        iters: the most iterations.
        tol: the stopping tolerance.

    Returns:
        ``theta_hat`` with ``||theta_hat||_1 <= R``.

    Raises:
        ValueError: shapes that do not match, NaN or inf in ``X`` or ``y``, ``R < 0``.
    """
    X, y = _check_design(X, y)
    R = check_nonnegative("radius", radius)
    lip = _top_singular_value_sq(X)
    if lip == 0:
        return np.zeros(X.shape[1])
    theta = np.zeros(X.shape[1])
    z, t = theta.copy(), 1.0
    Xty = X.T @ y
    for _ in range(check_dimension("iters", iters)):
        grad = X.T @ (X @ z) - Xty
        new = project_l1_ball(z - grad / lip, R)
        if float((z - new) @ (new - theta)) > 0:  # restart: momentum goes uphill
            t = 1.0
        t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        z = new + ((t - 1) / t_new) * (new - theta)
        change = float(np.linalg.norm(new - theta)) / max(1e-12, float(np.linalg.norm(new)))
        theta, t = new, t_new
        if change < tol:
            break
    return theta


def best_subset_ls(X: np.ndarray, y: np.ndarray, sparsity: int) -> np.ndarray:
    """Least squares over ``{theta : ||theta||_0 <= s}`` by enumerating all supports of size ``s``.

    Exact (every ``C(d, s)`` support is solved through the Gram matrix in one batch), so only
    for small ``d``.
    """
    X, y = _check_design(X, y)
    d = X.shape[1]
    s = check_dimension("sparsity", sparsity)
    if s > d:
        raise ValueError(f"sparsity must be at most d = {d}, got {s}")
    supports = np.asarray(list(itertools.combinations(range(d), s)), dtype=int)
    G, b = X.T @ X, X.T @ y
    Gs = G[supports[:, :, None], supports[:, None, :]]
    bs = b[supports]
    coef = np.linalg.solve(Gs + 1e-12 * np.eye(s), bs[:, :, None])[:, :, 0]
    explained = np.einsum("ki,ki->k", coef, bs)  # b_S^T G_S^{-1} b_S: RSS = ||y||^2 - this
    best = int(np.argmax(explained))
    theta = np.zeros(d)
    theta[supports[best]] = coef[best]
    return theta


# -- the master error bound ---------------------------------------------------------------------


def master_error_bound(delta_star: float, t: float, n: int, sigma: float) -> tuple[float, float]:
    """The radius of ``||f_hat - f*||_n^2`` and the probability that ``master_error_bound`` guarantees.

    Args:
        delta_star: a critical radius ``delta* > 0`` (``G_n(delta*)/delta* <= delta*/(2 sigma)``).
        t: any ``t >= delta*``.
        n: the number of samples.
        sigma: the noise level.

    Returns:
        ``(16 t delta*, 1 - exp(-n t delta* / (2 sigma^2)))``.

    Raises:
        ValueError: ``t < delta*``, or a non-positive argument.
    """
    ds = check_positive("delta_star", delta_star)
    tt = check_positive("t", t)
    if tt < ds:
        raise ValueError(f"master_error_bound needs t >= delta* ({tt} < {ds})")
    nn = check_dimension("n", n)
    s = check_positive("sigma", sigma)
    return 16 * tt * ds, 1.0 - math.exp(-nn * tt * ds / (2 * s * s))


def formal_linear_rate_bound(sigma: float, rank: int, n: int) -> tuple[float, float]:
    """``(C1 sigma^2 r / n, 1 - exp(-C2 r))`` of ``linear_minimax_rate_rank``."""
    s = check_positive("sigma", sigma)
    r, nn = check_dimension("rank", rank), check_dimension("n", n)
    return LINEAR_C1_RANK * s * s * r / nn, 1.0 - math.exp(-LINEAR_C2_RANK * r)


def linear_local_complexity(delta: float, rank: int, n: int) -> float:
    """Exact ``G_n(delta)`` of the linear class: ``delta E||chi_r|| / sqrt n``.

    The localised ball is the Euclidean ball of radius ``delta sqrt n`` in the range of ``X``,
    so ``sup |<w, v>| / n = delta ||P w||_2 / sqrt n`` with ``P`` the projection on the range.
    """
    dl = check_positive("delta", delta)
    return dl * chi_mean(check_dimension("rank", rank)) / math.sqrt(check_dimension("n", n))


def linear_critical_radius(sigma: float, rank: int, n: int) -> float:
    """The exact critical radius of the linear class: ``delta* = 2 sigma E||chi_r|| / sqrt n``."""
    s = check_positive("sigma", sigma)
    return 2 * s * chi_mean(check_dimension("rank", rank)) / math.sqrt(check_dimension("n", n))


def l1_local_complexity_bound(delta: float, radius: float, dim: int, n: int) -> float:
    """The formalised bound on ``G_n(delta)`` of the shifted ``l1`` class (columns ``<= sqrt n``).

    ``local_gaussian_complexity_bound``: ``G_n(delta) <= 24 sqrt 2 / sqrt n ∫_0^{2 delta}
    sqrt(log N(eps))``, with ``N`` the covering number of the localised image, at most that of
    the image of ``B_1(2R)`` (the shift by ``theta*`` doubles the radius), bounded by Maurey
    (``l1BallImage_coveringNumber_le``) and by the volume bound of the ``delta``-ball it sits in
    (``B_2(delta)`` of dimension ``min(n, d)``).
    """
    dl = check_positive("delta", delta)
    R = check_positive("radius", radius)
    d, nn = check_dimension("dim", dim), check_dimension("n", n)
    rank = min(nn, d)

    def log_n(eps: np.ndarray) -> np.ndarray:
        maurey = l1_ball_log_covering_bound(2 * R, eps, d)
        ball = rank * np.log1p(2 * dl / eps)
        return np.where(eps >= dl, 0.0, np.minimum(maurey, ball))

    k = np.arange(1, 4 * d + 2, dtype=float)
    integral = entropy_integral(log_n, 2 * dl, breakpoints=2 * R / np.sqrt(k))
    return 24 * math.sqrt(2) / math.sqrt(nn) * integral


def critical_radius(
    complexity: Callable[[float], float], sigma: float, lo: float = 1e-8, hi: float = 1e3
) -> float:
    """The smallest ``delta`` with ``G(delta) / delta <= delta / (2 sigma)`` (bisection in log).

    ``G(delta) / delta`` must be non-increasing (true for star-shaped classes:
    ``gaussian_complexity_monotone``), so the inequality set is an interval ``[delta*, ∞)``.

    Args:
        complexity: ``delta -> G_n(delta)`` (or an upper bound on it).
        sigma: the noise level.
        lo: the lower end of the search range.
        hi: the upper end of the search range.

    Returns:
        ``delta*``.

    Raises:
        ValueError: ``sigma <= 0``, or no critical radius in the search range.
    """
    s = check_positive("sigma", sigma)

    def ok(d: float) -> bool:
        return complexity(d) / d <= d / (2 * s)

    if not ok(hi):
        raise ValueError(f"the critical inequality fails up to delta = {hi}")
    if ok(lo):
        return lo
    a, b = math.log(lo), math.log(hi)
    for _ in range(80):
        mid = 0.5 * (a + b)
        if ok(math.exp(mid)):
            b = mid
        else:
            a = mid
    return math.exp(b)


# -- rate fitting -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateFit:
    """A power law ``err ~ c x^exponent`` fitted on log-log axes, with the slope's std error."""

    exponent: float
    stderr: float
    intercept: float


def fit_exponent(x: np.ndarray, err: np.ndarray) -> RateFit:
    """Least-squares slope of ``log err`` on ``log x``.

    Args:
        x: sizes (``n`` or ``d``), positive.
        err: the errors at ``x``, positive and finite.

    Returns:
        :class:`RateFit`: the exponent, its regression standard error and the intercept.

    Raises:
        ValueError: fewer than two points, or an error that is not positive and finite.
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(err, dtype=float))
    if lx.size < 2 or not np.all(np.isfinite(ly)):
        raise ValueError("need at least two positive, finite errors to fit an exponent")
    A = np.stack([lx, np.ones_like(lx)], axis=1)
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    dof = max(1, lx.size - 2)
    cov = (resid @ resid / dof) * np.linalg.inv(A.T @ A)
    return RateFit(float(coef[0]), float(math.sqrt(max(cov[0, 0], 0.0))), float(coef[1]))
