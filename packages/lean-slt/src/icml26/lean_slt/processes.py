"""Gaussian processes whose expected supremum is known, for checking Dudley's bound.

Each process is centred Gaussian, so it is sub-Gaussian with ``sigma = 1`` for its canonical
metric ``d(t, u) = sqrt(E (X_t - X_u)^2)`` (the hypothesis ``IsSubGaussianProcess μ X 1`` of
``dudley``), and the supremum of every draw is computed exactly. Covering numbers are taken
in a space where the process extends (``R^m`` with the isonormal process ``h -> <h, g>``, or
``[0, 1]`` for Brownian motion), which the theorem allows (centres of a net may lie anywhere in
the ambient pseudo-metric space ``A``).

======================  ==============================  =========================  ==============
process                 index set ``s``                 ``E sup`` (truth)          ``N(eps)``
======================  ==============================  =========================  ==============
``finite_iid``          ``n`` iid ``N(0, 1)``: ``e_i``  ``∫ x dΦ(x)^n``            exact
``euclidean_ball``      ``<t, g>``, ``t in B_2^n(R)``   ``R E||g||_2`` (chi mean)  volumetric bound
``l1_ball``             ``<t, g>``, ``t in B_1^n(R)``   ``R E max |g_i|``          Maurey ∧ volume
``brownian``            ``B_t``, ``t in {0, 1/n, .., 1}``  Spitzer's formula       exact
======================  ==============================  =========================  ==============
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate
from scipy.special import log_ndtr

from icml26.lean_slt._validate import check_dimension, check_positive, chi_mean
from icml26.lean_slt.covering import euclidean_ball_log_covering_bound, l1_ball_log_covering_bound
from icml26.lean_slt.entropy import dudley_bound

__all__ = [
    "PROCESSES",
    "BrownianGrid",
    "EuclideanBallProcess",
    "FiniteIID",
    "GaussianProcess",
    "L1BallProcess",
    "MonteCarloSup",
    "expected_max_iid_gaussian",
    "make_process",
    "monte_carlo_sup",
]

_CHUNK = 4_000_000  # Gaussian draws per chunk when simulating (about 32 MB)


@dataclass(frozen=True)
class MonteCarloSup:
    """A Monte Carlo estimate of ``E sup X_t`` with a normal-approximation interval.

    ``lo``/``hi`` are ``mean -+ z se`` with ``z = 3.29`` (99.9 %), so a check that the truth
    lies inside fails by chance about once in a thousand runs.
    """

    mean: float
    se: float
    lo: float
    hi: float
    draws: int


Z_999 = 3.2905


def expected_max_iid_gaussian(n: int) -> float:
    """``E max_{i <= n} g_i`` for iid standard normals, by quadrature of ``∫ x dΦ(x)^n``.

    Written as ``∫_0^∞ (1 - Φ^n) dx - ∫_{-∞}^0 Φ^n dx`` with ``Φ^n = exp(n log Φ)``.
    """
    n = check_dimension("n", n)

    def upper(x: float) -> float:
        return -math.expm1(n * float(log_ndtr(x)))

    def lower(x: float) -> float:
        return math.exp(n * float(log_ndtr(x)))

    a, _ = integrate.quad(upper, 0, np.inf, epsabs=1e-12, epsrel=1e-10, limit=200)
    b, _ = integrate.quad(lower, -np.inf, 0, epsabs=1e-12, epsrel=1e-10, limit=200)
    return a - b


def _expected_max_abs(n: int) -> float:
    """``E max_{i <= n} |g_i| = ∫_0^∞ 1 - (2Φ(x) - 1)^n dx``."""

    def f(x: float) -> float:
        p = math.erf(x / math.sqrt(2))  # 2Φ(x) - 1
        return -math.expm1(n * math.log(p)) if p > 0 else 1.0

    v, _ = integrate.quad(f, 0, np.inf, epsabs=1e-12, epsrel=1e-10, limit=200)
    return v


@dataclass(frozen=True)
class GaussianProcess(abc.ABC):
    """Base: a centred Gaussian process on a finite or compact index set of size ``n``."""

    n: int
    name: str = field(default="", init=False)

    def __post_init__(self) -> None:
        check_dimension("n", self.n, 2)

    @property
    @abc.abstractmethod
    def diameter(self) -> float:
        """A bound ``D`` on the diameter of the index set in the canonical metric."""

    @abc.abstractmethod
    def log_covering(self, eps: np.ndarray) -> np.ndarray:
        """``log N(eps)`` (exact, or an upper bound: the Dudley bound stays valid)."""

    #: ``N(eps)`` is an exact step function, constant between :meth:`breakpoints`.
    steps: bool = field(default=False, init=False)

    def breakpoints(self) -> np.ndarray | None:
        """The jumps (or kinks) of ``log N(eps)`` on ``(0, D)``, or ``None``."""
        return None

    @abc.abstractmethod
    def expected_sup(self) -> float:
        """The exact ``E sup_t X_t``."""

    @abc.abstractmethod
    def sample_sup(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        """``draws`` independent suprema ``sup_t X_t``, each computed exactly."""

    def dudley_bound(self) -> float:
        """The formalised bound ``12 sqrt(2) ∫_0^D sqrt(log N)`` with ``sigma = 1``."""
        return dudley_bound(
            self.log_covering,
            self.diameter,
            1.0,
            breakpoints=self.breakpoints(),
            steps=self.steps,
        )

    def _chunks(self, draws: int) -> list[int]:
        per = max(1, _CHUNK // self.n)
        sizes = [per] * (draws // per)
        if draws % per:
            sizes.append(draws % per)
        return sizes


@dataclass(frozen=True)
class FiniteIID(GaussianProcess):
    """``n`` iid standard normals; as points, ``e_1 .. e_n`` of ``R^n`` (pairwise ``sqrt 2`` apart).

    ``N(eps)`` is exact: the smallest ball holding ``k`` of the ``e_i`` has radius
    ``sqrt(1 - 1/k)`` (a regular simplex), so ``N(eps) = ceil(n / k(eps))`` with
    ``k(eps) = floor(1 / (1 - eps^2))`` for ``eps < sqrt(1 - 1/n)`` and ``N = 1`` beyond.
    """

    name: str = field(default="finite_iid", init=False)
    steps: bool = field(default=True, init=False)

    @property
    def diameter(self) -> float:
        return math.sqrt(2.0)

    def log_covering(self, eps: np.ndarray) -> np.ndarray:
        e = np.asarray(eps, dtype=float)
        with np.errstate(divide="ignore"):
            k = np.floor(1.0 / np.maximum(1.0 - e**2, 1e-300) + 1e-9)
        k = np.clip(k, 1, self.n)
        N = np.where(e >= math.sqrt(1 - 1 / self.n), 1.0, np.ceil(self.n / k))
        return np.log(N)

    def breakpoints(self) -> np.ndarray:
        k = np.arange(2, self.n + 1, dtype=float)
        return np.sqrt(1 - 1 / k)

    def expected_sup(self) -> float:
        return expected_max_iid_gaussian(self.n)

    def sample_sup(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        out = [rng.standard_normal((m, self.n)).max(axis=1) for m in self._chunks(draws)]
        return np.concatenate(out)


@dataclass(frozen=True)
class EuclideanBallProcess(GaussianProcess):
    """``X_t = <t, g>`` on ``B_2^n(R)``: ``sup = R ||g||_2``, ``E sup = R sqrt 2 Γ((n+1)/2) / Γ(n/2)``."""

    radius: float = 1.0
    name: str = field(default="euclidean_ball", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive("radius", self.radius)

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    def log_covering(self, eps: np.ndarray) -> np.ndarray:
        return euclidean_ball_log_covering_bound(self.radius, eps, self.n)

    def expected_sup(self) -> float:
        n = self.n
        return self.radius * chi_mean(n)

    def sample_sup(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        out = [
            self.radius * np.linalg.norm(rng.standard_normal((m, self.n)), axis=1)
            for m in self._chunks(draws)
        ]
        return np.concatenate(out)


@dataclass(frozen=True)
class L1BallProcess(GaussianProcess):
    """``X_t = <t, g>`` on ``B_1^n(R)``: ``sup = R ||g||_∞``, ``E sup = R E max_i |g_i|``."""

    radius: float = 1.0
    name: str = field(default="l1_ball", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive("radius", self.radius)

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    def log_covering(self, eps: np.ndarray) -> np.ndarray:
        return l1_ball_log_covering_bound(self.radius, eps, self.n)

    def breakpoints(self) -> np.ndarray:
        # Maurey's bound jumps at eps = R / sqrt(k); past k ~ d the volume bound is smaller.
        k = np.arange(1, 4 * self.n + 2, dtype=float)
        return self.radius / np.sqrt(k)

    def expected_sup(self) -> float:
        return self.radius * _expected_max_abs(self.n)

    def sample_sup(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        out = [
            self.radius * np.abs(rng.standard_normal((m, self.n))).max(axis=1)
            for m in self._chunks(draws)
        ]
        return np.concatenate(out)


@dataclass(frozen=True)
class BrownianGrid(GaussianProcess):
    """Brownian motion on the grid ``{0, 1/n, ..., 1}``, metric ``d(t, u) = sqrt|t - u|``.

    A closed ``eps``-ball is an interval of length ``2 eps^2`` of ``[0, 1]``, holding
    ``floor(2 eps^2 n) + 1`` consecutive grid points: ``N(eps) = ceil((n + 1) / (floor(2 eps^2 n)
    + 1))``, exact. ``E max_k S_k = (2 pi n)^{-1/2} sum_{k <= n} k^{-1/2}`` by Spitzer's formula
    ``E max(0, S_1, .., S_n) = sum_k E[S_k^+] / k``.
    """

    name: str = field(default="brownian", init=False)
    steps: bool = field(default=True, init=False)

    @property
    def diameter(self) -> float:
        return 1.0

    def log_covering(self, eps: np.ndarray) -> np.ndarray:
        e = np.asarray(eps, dtype=float)
        per_ball = np.floor(2 * e**2 * self.n + 1e-9) + 1
        return np.log(np.ceil((self.n + 1) / per_ball))

    def breakpoints(self) -> np.ndarray:
        j = np.arange(1, self.n + 1, dtype=float)
        return np.sqrt(j / (2 * self.n))

    def expected_sup(self) -> float:
        k = np.arange(1, self.n + 1, dtype=float)
        return float(np.sum(k**-0.5) / math.sqrt(2 * math.pi * self.n))

    def sample_sup(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        out = []
        for m in self._chunks(draws):
            walk = np.cumsum(rng.standard_normal((m, self.n)), axis=1) / math.sqrt(self.n)
            out.append(np.maximum(walk.max(axis=1), 0.0))  # X_0 = 0 is in the index set
        return np.concatenate(out)


PROCESSES: dict[str, type[GaussianProcess]] = {
    "finite_iid": FiniteIID,
    "euclidean_ball": EuclideanBallProcess,
    "l1_ball": L1BallProcess,
    "brownian": BrownianGrid,
}


def make_process(name: str, n: int) -> GaussianProcess:
    """The process ``name`` (see :data:`PROCESSES`) of size ``n``.

    Args:
        name: ``finite_iid``, ``euclidean_ball``, ``l1_ball`` or ``brownian``.
        n: the size of the index set (points, dimension or grid steps), at least 2.

    Returns:
        The process, with its exact ``expected_sup``, covering numbers and ``dudley_bound``.

    Raises:
        ValueError: an unknown name or ``n < 2``.
    """
    if name not in PROCESSES:
        raise ValueError(f"unknown process {name!r}; processes: {', '.join(PROCESSES)}")
    return PROCESSES[name](n)


def monte_carlo_sup(
    process: GaussianProcess, rng: np.random.Generator, draws: int
) -> MonteCarloSup:
    """Estimate ``E sup X_t`` from ``draws`` simulated suprema.

    Args:
        process: the process.
        rng: the random stream.
        draws: the number of suprema, at least 2.

    Returns:
        The mean, its standard error and a 99.9 % interval (``lo``, ``hi``).

    Raises:
        ValueError: ``draws < 2``.
    """
    m = check_dimension("draws", draws, 2)
    sups = process.sample_sup(rng, m)
    mean = float(sups.mean())
    se = float(sups.std(ddof=1) / math.sqrt(m))
    return MonteCarloSup(mean, se, mean - Z_999 * se, mean + Z_999 * se, m)
