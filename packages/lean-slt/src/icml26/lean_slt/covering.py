"""Covering numbers and metric entropy ``log N(eps)`` of the sets the formalisation uses.

Conventions follow ``SLT/CoveringNumber.lean``: an ``eps``-net of ``s`` is a finite set whose
*closed* ``eps``-balls cover ``s`` (centres anywhere in the ambient space), ``N(eps, s)`` is the
smallest size of such a net, an ``eps``-packing is a subset of ``s`` whose points are pairwise
*more than* ``eps`` apart, and the metric entropy is ``log N`` (0 when ``N <= 1``, as
``metricEntropyOfNat``). Everything here returns natural logarithms, so huge covering numbers
such as ``(2d + 1)^{ceil(R^2/eps^2)}`` stay finite floats.

Two facts tie samples to covering numbers (both used by the checks):

* a packing bounds covering from below: if ``P`` is ``2 eps``-separated, no closed
  ``eps``-ball holds two of its points, so ``N(eps, s) >= |P|``;
* a greedy net of a sample ``S`` is ``eps``-separated, so ``N(eps, S) <= |greedy| <=
  M(eps, S) <= N(eps / 2, s)``: greedy counts sit between the covering numbers at ``eps`` and
  ``eps / 2`` of the sample, never above the set's covering number at ``eps / 2``.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import gammaln

from icml26.lean_slt._validate import (
    as_positive_array,
    check_dimension,
    check_nonnegative,
    check_positive,
)

__all__ = [
    "euclidean_ball_log_covering_bound",
    "euclidean_ball_log_covering_lower",
    "greedy_net",
    "interval_covering_number",
    "l1_ball_log_covering_bound",
    "l1_ball_log_packing_gv",
    "l1_ball_log_packing_lower",
    "l1_ball_log_volume_lower",
    "linear_class_log_covering_bound",
    "lipschitz_class_log_covering_bounds",
    "log_binomial",
    "maurey_log_covering_bound",
    "sample_l1_ball",
    "sample_lipschitz_functions",
    "sample_sparse_sign_vectors",
]

Metric = Literal["l2", "linf"]


def log_binomial(n: float | np.ndarray, k: float | np.ndarray) -> np.ndarray:
    """``log C(n, k)`` through log-gamma, ``-inf`` outside ``0 <= k <= n``."""
    n_arr, k_arr = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    ok = (k_arr >= 0) & (k_arr <= n_arr)
    with np.errstate(invalid="ignore"):
        val = gammaln(n_arr + 1) - gammaln(k_arr + 1) - gammaln(n_arr - k_arr + 1)
    return np.where(ok, val, -np.inf)


# -- intervals and Euclidean balls ---------------------------------------------------------------


def interval_covering_number(length: float, eps: float | np.ndarray) -> np.ndarray:
    """Exact ``N(eps, [a, a + length])`` on the real line: ``max(1, ceil(length / (2 eps)))``.

    A closed ``eps``-ball is an interval of length ``2 eps``; ``k`` of them cover at most length
    ``2 k eps``, and ``ceil(length / (2 eps))`` abutting balls suffice.
    """
    ell = check_nonnegative("length", length)
    e = as_positive_array("eps", eps)
    return np.maximum(1, np.ceil(ell / (2 * e) - 1e-12)).astype(float)


def euclidean_ball_log_covering_bound(
    radius: float, eps: float | np.ndarray, dim: int
) -> np.ndarray:
    """``log`` of the volumetric bound ``N(eps, B_2^d(R)) <= (1 + 2R/eps)^d``.

    Mirrors ``coveringNumber_euclideanBall_le`` (``SLT/CoveringNumber.lean``). For
    ``eps >= R`` the single centre ``0`` covers the ball, so ``log N = 0`` there.
    """
    R = check_nonnegative("radius", radius)
    e = as_positive_array("eps", eps)
    d = check_dimension("dim", dim)
    bound = d * np.log1p(2 * R / e)
    return np.where(e >= R, 0.0, bound)


def euclidean_ball_log_covering_lower(
    radius: float, eps: float | np.ndarray, dim: int
) -> np.ndarray:
    """``log`` of the volume lower bound ``N(eps, B_2^d(R)) >= (R/eps)^d`` (Vershynin, Cor. 4.2.13)."""
    R = check_nonnegative("radius", radius)
    e = as_positive_array("eps", eps)
    d = check_dimension("dim", dim)
    with np.errstate(divide="ignore"):
        return np.maximum(0.0, d * np.log(np.maximum(R, 1e-300) / e))


def linear_class_log_covering_bound(delta: float, eps: float | np.ndarray, rank: int) -> np.ndarray:
    """Entropy of the localised linear class ``{x -> <theta, x> : ||X theta||_n <= delta}``.

    In the empirical norm the class is a Euclidean ball of radius ``delta`` inside the
    ``rank``-dimensional range of the design, so ``log N(eps) <= r log(1 + 2 delta / eps)``
    (``linearCoveringNumber_le_euclideanBall_rank`` then ``coveringNumber_euclideanBall_le``).
    """
    return euclidean_ball_log_covering_bound(delta, eps, rank)


# -- l1 balls ---------------------------------------------------------------------------------


def maurey_log_covering_bound(radius: float, eps: float | np.ndarray, dim: int) -> np.ndarray:
    """``log`` of Maurey's bound ``N(eps, B_1^d(R), ||.||_2) <= (2d + 1)^{ceil(R^2/eps^2)}``.

    Mirrors ``coveringNumber_l1Ball_le`` (``SLT/CoveringNumber.lean``): every point of the
    ``l1`` ball is within ``eps`` of an average of ``k = ceil(R^2/eps^2)`` points of
    ``{0, +-R e_1, ..., +-R e_d}``, and there are at most ``(2d + 1)^k`` such averages.

    Args:
        radius: ``R >= 0``.
        eps: one radius or an array of radii, each > 0.
        dim: ``d >= 1``.

    Returns:
        ``ceil(R^2 / eps^2) log(2d + 1)``, shaped like ``eps``.

    Raises:
        ValueError: ``R < 0``, an ``eps <= 0`` or ``d < 1``.
    """
    R = check_nonnegative("radius", radius)
    e = as_positive_array("eps", eps)
    d = check_dimension("dim", dim)
    if R == 0:
        return np.zeros_like(e)
    k = np.ceil(R**2 / e**2 - 1e-12)
    return k * math.log(2 * d + 1)


def l1_ball_log_covering_bound(radius: float, eps: float | np.ndarray, dim: int) -> np.ndarray:
    """The best of the bounds we can prove for ``log N(eps, B_1^d(R), ||.||_2)``.

    ``min`` of Maurey's bound and the volumetric bound of the Euclidean ball of the same radius
    (``B_1 ⊂ B_2``, and covering numbers are monotone in the set:
    ``coveringNumber_mono_set``); ``0`` once ``eps >= R``. Maurey wins for large ``eps`` or
    large ``d``; the volumetric bound near ``eps -> 0``, where Maurey's blows up like
    ``1/eps^2`` and would make Dudley's integral diverge.
    """
    maurey = maurey_log_covering_bound(radius, eps, dim)
    volume = euclidean_ball_log_covering_bound(radius, eps, dim)
    return np.minimum(maurey, volume)


def l1_ball_log_volume_lower(radius: float, eps: float | np.ndarray, dim: int) -> np.ndarray:
    """``log`` of ``vol(B_1^d(R)) / vol(B_2^d(eps))``, a lower bound on ``N(eps, B_1^d(R))``.

    ``vol(B_1^d(R)) = (2R)^d / d!`` and ``vol(B_2^d(eps)) = pi^{d/2} eps^d / Gamma(d/2 + 1)``;
    ``N`` balls of volume ``vol(B_2(eps))`` cover the ``l1`` ball only if their total volume
    is at least its volume.
    """
    R = check_positive("radius", radius)
    e = as_positive_array("eps", eps)
    d = check_dimension("dim", dim)
    log_l1 = d * math.log(2 * R) - float(gammaln(d + 1))
    log_l2 = 0.5 * d * math.log(math.pi) + d * np.log(e) - float(gammaln(0.5 * d + 1))
    return np.maximum(0.0, log_l1 - log_l2)


def _gv_log_size(radius: float, eps: float, dim: int, k: int) -> float:
    """Gilbert-Varshamov count of a ``2 eps``-separated family of ``k``-sparse sign vectors.

    The family ``(R/k) a`` with ``a in {-1, 0, 1}^d`` of exactly ``k`` non-zeros lies on the
    ``l1`` sphere of radius ``R``. For two such ``a, b`` with ``j`` common support positions of
    which ``m`` carry opposite signs, ``||a - b||_2^2 = 2(k - j) + 4m =: H``. The points are
    more than ``2 eps`` apart iff ``H > h0 = 4 eps^2 k^2 / R^2``. Greedily keeping a point and
    discarding its ``h0``-neighbourhood leaves at least ``W / B`` points, with
    ``W = C(d, k) 2^k`` vectors and ``B = sum_{2(k-j)+4m <= h0} C(k, j) C(j, m) C(d-k, k-j)
    2^{k-j}`` in each neighbourhood (the same for every centre, by symmetry).
    """
    h0 = 4.0 * eps**2 * k**2 / radius**2
    log_w = float(log_binomial(dim, k)) + k * math.log(2)
    j = np.arange(0, k + 1)[:, None].astype(float)
    m = np.arange(0, k + 1)[None, :].astype(float)
    valid = (m <= j) & (2 * (k - j) + 4 * m <= h0 + 1e-12)
    terms = (
        log_binomial(k, j)
        + log_binomial(j, m)
        + log_binomial(dim - k, k - j)
        + (k - j) * math.log(2)
    )
    terms = np.where(valid, terms, -np.inf)
    finite = terms[np.isfinite(terms)]
    log_b = float(np.logaddexp.reduce(finite)) if finite.size else 0.0
    return max(0.0, log_w - log_b)


def l1_ball_log_packing_gv(radius: float, eps: float, dim: int, k_max: int = 400) -> float:
    """The best Gilbert-Varshamov lower bound on ``log N(eps, B_1^d(R))`` over sparsity ``k``.

    Each ``k`` gives a ``2 eps``-separated subset of the ball (see :func:`_gv_log_size`), hence
    a lower bound on the covering number at ``eps``. Of the same order as the truth,
    ``(R/eps)^2 log(d eps^2 / R^2)``, in the regime where Maurey's bound is used.
    """
    R = check_positive("radius", radius)
    e = check_positive("eps", eps)
    d = check_dimension("dim", dim)
    best = 0.0
    for k in range(1, min(d, k_max) + 1):
        if 4.0 * e**2 * k**2 / R**2 >= 4 * k:  # no two vectors can be separated any more
            break
        best = max(best, _gv_log_size(R, e, d, k))
    return best


def l1_ball_log_packing_lower(radius: float, eps: float, dim: int) -> float:
    """A certified lower bound on ``log N(eps, B_1^d(R))``: the larger of volume and GV bounds."""
    volume = float(l1_ball_log_volume_lower(radius, eps, dim))
    return max(volume, l1_ball_log_packing_gv(radius, eps, dim))


# -- Lipschitz classes ------------------------------------------------------------------------


def lipschitz_class_log_covering_bounds(lipschitz: float, eps: float) -> tuple[float, float]:
    """``(lower, upper)`` bounds on ``log N(eps)`` of ``F_L = {f: [0,1] -> R, f(0) = 0, L-Lipschitz}``
    in the sup norm (Wainwright 2019, Example 5.10: ``log N ~ L / eps``).

    Lower: on ``m = ceil(L/eps) - 1`` equal intervals the ``2^m`` zig-zags of slope ``+-L``
    differ by ``2L/m > 2 eps`` where they first part, a ``2 eps``-separated family.
    Upper: with grid spacing ``eta / L``, zig-zags with slopes in ``{-L, 0, L}`` chosen step by
    step track any ``f`` within ``eta`` at the grid and ``2 eta`` in between, so
    ``N(2 eta) <= 3^{ceil(L / eta)}``, i.e. ``log N(eps) <= ceil(2L/eps) log 3``. For
    ``eps >= L`` the zero function covers the class.
    """
    L = check_positive("lipschitz", lipschitz)
    e = check_positive("eps", eps)
    if e >= L:
        return 0.0, 0.0
    lower = (math.ceil(L / e - 1e-12) - 1) * math.log(2)
    upper = math.ceil(2 * L / e - 1e-12) * math.log(3)
    return lower, upper


# -- samples and greedy nets --------------------------------------------------------------------


def sample_l1_ball(
    rng: np.random.Generator, size: int, dim: int, radius: float = 1.0
) -> np.ndarray:
    """``size`` points uniform in ``B_1^d(R)`` (exponential spacings with random signs)."""
    m, d = check_dimension("size", size), check_dimension("dim", dim)
    R = check_positive("radius", radius)
    e = rng.exponential(size=(m, d + 1))
    x = e[:, :d] / e.sum(axis=1, keepdims=True)
    return R * x * rng.choice([-1.0, 1.0], size=(m, d))


def sample_sparse_sign_vectors(
    rng: np.random.Generator, size: int, dim: int, sparsity: int, radius: float = 1.0
) -> np.ndarray:
    """``size`` vectors ``(R/k) a`` with ``a`` uniform among ``k``-sparse sign vectors (on the sphere)."""
    m, d = check_dimension("size", size), check_dimension("dim", dim)
    k = check_dimension("sparsity", sparsity)
    if k > d:
        raise ValueError(f"sparsity must be at most dim = {d}, got {k}")
    out = np.zeros((m, d))
    idx = np.argsort(rng.random((m, d)), axis=1)[:, :k]
    signs = rng.choice([-1.0, 1.0], size=(m, k))
    np.put_along_axis(out, idx, signs * (radius / k), axis=1)
    return out


def sample_lipschitz_functions(
    rng: np.random.Generator, size: int, lipschitz: float, grid: int = 256
) -> np.ndarray:
    """``size`` random members of ``F_L`` on ``grid + 1`` points of ``[0, 1]`` (slopes in ``[-L, L]``).

    Slopes are piecewise constant on a few random blocks, so the samples spread over the class
    instead of concentrating near 0 as a fine random walk would.
    """
    m, g = check_dimension("size", size), check_dimension("grid", grid, 2)
    L = check_positive("lipschitz", lipschitz)
    blocks = rng.integers(1, 17, size=m)
    out = np.zeros((m, g + 1))
    for i in range(m):
        cuts = np.sort(rng.integers(0, g, size=blocks[i] - 1))
        slopes = rng.uniform(-L, L, size=blocks[i])
        per_step = slopes[np.searchsorted(cuts, np.arange(g), side="right")]
        out[i, 1:] = np.cumsum(per_step) / g
    return out


def greedy_net(points: np.ndarray, eps: float, metric: Metric = "l2") -> np.ndarray:
    """Indices of a greedy ``eps``-net of the rows of ``points`` (centres among the points).

    Scans the points; each one not yet within ``eps`` of a centre becomes a centre. The result
    covers every row (so it bounds the sample's ``N(eps)`` from above) and its centres are
    pairwise more than ``eps`` apart (so it is an ``eps``-packing of the sample, bounded by
    ``N(eps / 2)`` of any set containing the sample). Work: ``O(rows x centres x dim)``.

    Args:
        points: ``(m, d)`` array, scanned in order.
        eps: the net's radius, >= 0.
        metric: ``"l2"`` or ``"linf"``.

    Returns:
        The indices of the centres, in scan order.

    Raises:
        ValueError: ``points`` not 2-D or not finite, ``eps < 0``, or an unknown metric.
    """
    x = np.asarray(points, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"points must be a non-empty (rows, dim) array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("points must be finite (found NaN or inf)")
    e = check_positive("eps", eps)
    if metric not in ("l2", "linf"):
        raise ValueError(f"metric must be 'l2' or 'linf', got {metric!r}")
    uncovered = np.ones(x.shape[0], dtype=bool)
    sq = np.einsum("ij,ij->i", x, x) if metric == "l2" else None
    centres: list[int] = []
    while True:
        rest = np.flatnonzero(uncovered)
        if rest.size == 0:
            break
        c = int(rest[0])
        centres.append(c)
        cand = x[rest]
        if metric == "l2":
            assert sq is not None
            d2 = sq[rest] - 2 * cand @ x[c] + sq[c]
            near = d2 <= e * e * (1 + 1e-12) + 1e-15
        else:
            near = np.max(np.abs(cand - x[c]), axis=1) <= e * (1 + 1e-12)
        uncovered[rest[near]] = False
    return np.asarray(centres, dtype=int)
