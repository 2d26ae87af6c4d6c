"""The statistics every paper package needs: a mean and its standard error, a paired gap,
binomial intervals, the percentile bootstrap, a log-log slope, a permutation test and a
best-of-N timer.

NumPy and the standard library only (no SciPy): the normal quantile is
:class:`statistics.NormalDist`'s, and the Clopper-Pearson bounds bisect the exact binomial
tail. Every function checks its input and raises :class:`ValueError` naming the problem: an
empty sample, a value that is not finite, samples whose lengths differ, ``successes > n``, a
confidence outside ``(0, 1)``. Random draws come from ``rng``, a required keyword: a NumPy
``Generator`` or an int seed.

Example::

    from icml26.shared.stats import mean_se, paired_difference, wilson_interval

    acc = mean_se([0.81, 0.79, 0.84])  # MeanSE(mean=0.8133..., se=0.01453..., n=3)
    low, high = acc.interval(0.95)  # mean -+ 1.96 se
    gap = paired_difference([0.9, 0.8, 0.7], [0.7, 0.7, 0.6])  # gap.mean, gap.se, gap.z
    wilson_interval(37, 50)  # (0.6042..., 0.8413...)
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "MeanSE",
    "PairedDifference",
    "Slope",
    "Timing",
    "best_of",
    "bootstrap_interval",
    "clopper_pearson_interval",
    "loglog_slope",
    "mean_se",
    "paired_difference",
    "permutation_test",
    "wilson_interval",
    "z_quantile",
]

Alternative = Literal["two-sided", "greater", "less"]
_ALTERNATIVES = ("two-sided", "greater", "less")
_BISECTION_STEPS = 200
_BATCH_ELEMENTS = 1 << 20  # resampled values held at once by permutation_test
_TIE_TOLERANCE = 1e-12  # permuted statistics this close (relative to the data) tie


# ----------------------------------------------------------------------------- input checks
def _sample(values: ArrayLike, name: str = "values") -> np.ndarray:
    """``values`` as a non-empty, finite 1-D float64 array, or a ValueError naming the problem."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numbers, got {values!r:.80}") from exc
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty")
    not_finite = ~np.isfinite(array)
    if not_finite.any():
        i = int(np.argmax(not_finite))
        raise ValueError(f"{name} must be finite, got {array[i]} at index {i}")
    return array


def _same_length(a: np.ndarray, b: np.ndarray, names: str) -> None:
    if a.size != b.size:
        raise ValueError(f"{names} must have the same length, got {a.size} and {b.size}")


def _confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def _count(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _generator(rng: np.random.Generator | int) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be a numpy Generator or a non-negative int seed, got {rng!r}")


def _alternative(alternative: str) -> str:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    return alternative


# ----------------------------------------------------------------------------- normal quantile
def z_quantile(confidence: float = 0.95) -> float:
    """The two-sided standard normal quantile ``z`` with ``P(|Z| <= z) = confidence``.

    Args:
        confidence: the coverage, in ``(0, 1)``; ``0.95`` gives ``1.959963984540054``.

    Returns:
        ``statistics.NormalDist().inv_cdf((1 + confidence) / 2)``.

    Raises:
        ValueError: ``confidence`` is not a number in ``(0, 1)``.
    """
    return statistics.NormalDist().inv_cdf(0.5 + _confidence(confidence) / 2)


def _normal_interval(centre: float, se: float, confidence: float) -> tuple[float, float]:
    half = z_quantile(confidence) * se
    return centre - half, centre + half


def _standard_error(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan


# ----------------------------------------------------------------------------- mean +- SE
@dataclass(frozen=True)
class MeanSE:
    """A sample mean and its standard error.

    Attributes:
        mean: the sample mean.
        se: the standard error of the mean, ``std(ddof=1) / sqrt(n)``; ``nan`` when ``n == 1``
            (one value says nothing about the spread).
        n: the number of values.
    """

    mean: float
    se: float
    n: int

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """The normal-approximation interval ``mean -+ z_quantile(confidence) * se``.

        Args:
            confidence: the coverage, in ``(0, 1)``.

        Returns:
            ``(low, high)``; both ``nan`` when ``se`` is ``nan``.

        Raises:
            ValueError: ``confidence`` outside ``(0, 1)``.
        """
        return _normal_interval(self.mean, self.se, confidence)


def mean_se(values: ArrayLike) -> MeanSE:
    """The mean of ``values`` and its standard error.

    Args:
        values: a non-empty 1-D sequence of finite numbers (booleans count as 0 and 1).

    Returns:
        :class:`MeanSE`; its ``se`` is ``nan`` for a single value.

    Raises:
        ValueError: ``values`` is empty, not 1-D, or holds a NaN or an infinity.
    """
    x = _sample(values)
    return MeanSE(float(x.mean()), _standard_error(x), int(x.size))


# ----------------------------------------------------------------------------- paired gap
@dataclass(frozen=True)
class PairedDifference:
    """The mean of paired differences ``a - b``, its standard error and ``z = mean / se``.

    Attributes:
        mean: ``mean(a - b)``.
        se: the standard error of that mean (``nan`` when ``n == 1``).
        z: ``mean / se``, the paired t statistic (``scipy.stats.ttest_rel``'s). When every
            difference is the same, ``se == 0`` and ``z`` is ``+-inf`` (or ``nan`` if the
            differences are all zero); ``nan`` when ``n == 1``.
        n: the number of pairs.
    """

    mean: float
    se: float
    z: float
    n: int

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """The normal-approximation interval ``mean -+ z_quantile(confidence) * se``.

        Args:
            confidence: the coverage, in ``(0, 1)``.

        Returns:
            ``(low, high)``; both ``nan`` when ``se`` is ``nan``.

        Raises:
            ValueError: ``confidence`` outside ``(0, 1)``.
        """
        return _normal_interval(self.mean, self.se, confidence)


def _ratio(mean: float, se: float) -> float:
    if math.isnan(se):
        return math.nan
    if se > 0:
        return mean / se
    return math.copysign(math.inf, mean) if mean != 0 else math.nan


def paired_difference(a: ArrayLike, b: ArrayLike) -> PairedDifference:
    """The paired gap between two measurements of the same items (``a[i]`` pairs ``b[i]``).

    Args:
        a: the first measurement per item (say, ours), finite numbers.
        b: the second measurement of the same items (say, the baseline's), same length.

    Returns:
        :class:`PairedDifference` of ``a - b``: mean, standard error, ``z``, number of pairs.

    Raises:
        ValueError: an empty or non-finite sample, or ``a`` and ``b`` of different lengths.
    """
    x, y = _sample(a, "a"), _sample(b, "b")
    _same_length(x, y, "a and b (paired)")
    d = x - y
    mean, se = float(d.mean()), _standard_error(d)
    return PairedDifference(mean, se, _ratio(mean, se), int(d.size))


# ----------------------------------------------------------------------------- binomial
def _counts(successes: float, n: float, *, integer: bool) -> tuple[float, float]:
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if not math.isfinite(value) or (integer and not float(value).is_integer()):
            kind = "a whole number" if integer else "finite"
            raise ValueError(f"{name} must be {kind}, got {value!r}")
    if n <= 0:
        raise ValueError(f"n must be positive, got {n!r}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n], got {successes!r} of n = {n!r}")
    return successes, n


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``successes / n``.

    Args:
        successes: the number of successes, ``0 <= successes <= n``; a fractional count
            (a weighted or averaged one) is allowed.
        n: the number of trials, positive (fractional allowed).
        confidence: the coverage, in ``(0, 1)``.

    Returns:
        ``(low, high)`` inside ``[0, 1]``; ``low`` is exactly 0 when ``successes == 0`` and
        ``high`` exactly 1 when ``successes == n``.

    Raises:
        ValueError: ``n <= 0``, ``successes`` outside ``[0, n]``, a count that is not a
            finite number, or ``confidence`` outside ``(0, 1)``.
    """
    successes, n = _counts(successes, n, integer=False)
    z = z_quantile(confidence)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _log_binomial_tail(n: int, first: int, last: int) -> Callable[[float], float]:
    """``p -> log P(first <= X <= last)`` for ``X ~ Binomial(n, p)``, ``0 < p < 1``."""
    j = np.arange(first, last + 1, dtype=np.float64)
    log_comb = np.array(
        [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in j]
    )

    def log_tail(p: float) -> float:
        terms = log_comb + j * math.log(p) + (n - j) * math.log1p(-p)
        top = float(terms.max())
        return top + math.log(float(np.exp(terms - top).sum()))

    return log_tail


def _solve_increasing(f: Callable[[float], float], target: float) -> float:
    """The ``p`` in ``(0, 1)`` with ``f(p) = target``, for ``f`` increasing, by bisection."""
    low, high = 0.0, 1.0
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if f(middle) < target:
            low = middle
        else:
            high = middle
        if high - low <= 1e-15 * high:
            break
    return 0.5 * (low + high)


def clopper_pearson_interval(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion.

    The lower bound is the ``p`` with ``P(X >= successes | p) = alpha / 2`` and the upper the
    ``p`` with ``P(X <= successes | p) = alpha / 2`` (``alpha = 1 - confidence``), found by
    bisection on the binomial tail summed in log space, the beta quantiles SciPy would give
    (to about 1e-12 relative for ``n`` in the thousands; the cost is linear in ``n``).

    Args:
        successes: the number of successes, a whole number in ``[0, n]``.
        n: the number of trials, a positive whole number.
        confidence: the coverage, in ``(0, 1)``.

    Returns:
        ``(low, high)`` inside ``[0, 1]``: ``low = 0`` when ``successes == 0``, ``high = 1``
        when ``successes == n``.

    Raises:
        ValueError: ``n <= 0``, ``successes`` outside ``[0, n]``, a count that is not a
            whole number, or ``confidence`` outside ``(0, 1)``.
    """
    alpha = 1.0 - _confidence(confidence)
    k, trials = (int(c) for c in _counts(successes, n, integer=True))
    target = math.log(alpha / 2)
    low = 0.0
    if k > 0:
        at_least_k = _log_binomial_tail(trials, k, trials)  # increasing in p
        low = _solve_increasing(at_least_k, target)
    high = 1.0
    if k < trials:
        at_most_k = _log_binomial_tail(trials, 0, k)  # decreasing in p
        high = _solve_increasing(lambda p: -at_most_k(p), -target)
    return low, high


# ----------------------------------------------------------------------------- bootstrap
def bootstrap_interval(
    values: ArrayLike,
    statistic: Callable[[np.ndarray], Any] = np.mean,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    rng: np.random.Generator | int,
) -> tuple[float, float]:
    """The percentile bootstrap interval of ``statistic(values)``.

    Resamples ``values`` with replacement ``n_resamples`` times and returns the
    ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the statistic over the resamples
    (``numpy.quantile``'s linear interpolation), as ``scipy.stats.bootstrap(...,
    method="percentile")`` does.

    Args:
        values: a non-empty 1-D sample of finite numbers.
        statistic: maps one resample (a 1-D array) to a number; ``np.mean`` by default.
        confidence: the coverage, in ``(0, 1)``.
        n_resamples: the number of bootstrap resamples, at least 1.
        rng: a NumPy ``Generator`` or a non-negative int seed (required: the interval is
            random).

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: an empty or non-finite sample, a bad ``confidence``, ``n_resamples`` or
            ``rng``, or a statistic that is not finite on some resample.
    """
    x = _sample(values)
    alpha = 1.0 - _confidence(confidence)
    n_resamples = _count(n_resamples, "n_resamples", 1)
    gen = _generator(rng)
    estimates = np.array(
        [float(statistic(x[gen.integers(0, x.size, x.size)])) for _ in range(n_resamples)]
    )
    if not np.isfinite(estimates).all():
        raise ValueError(f"statistic {statistic!r} is not finite on some bootstrap resample")
    low, high = np.quantile(estimates, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


# ----------------------------------------------------------------------------- log-log slope
@dataclass(frozen=True)
class Slope:
    """An ordinary least-squares fit ``log y = intercept + slope * log x`` (natural logs).

    Attributes:
        slope: the exponent of the power law ``y ~ exp(intercept) * x ** slope``.
        se: the standard error of ``slope`` (``nan`` with two points: no residual freedom).
        intercept: the fitted ``log y`` at ``x = 1`` (natural log).
        n: the number of points.
    """

    slope: float
    se: float
    intercept: float
    n: int


def _log_positive(values: ArrayLike, name: str) -> np.ndarray:
    x = _sample(values, name)
    not_positive = x <= 0
    if not_positive.any():
        i = int(np.argmax(not_positive))
        raise ValueError(f"{name} must be positive for a log-log fit, got {x[i]} at index {i}")
    return np.log(x)


def loglog_slope(x: ArrayLike, y: ArrayLike) -> Slope:
    """The slope of ``log y`` against ``log x`` by ordinary least squares, with its SE.

    The same numbers as ``scipy.stats.linregress(np.log(x), np.log(y))`` (``slope``,
    ``stderr``, ``intercept``); for an exact power law ``y = c * x ** k`` the slope is ``k``.

    Args:
        x: positive, finite numbers, at least two distinct values.
        y: positive, finite numbers, the same length as ``x``.

    Returns:
        :class:`Slope`.

    Raises:
        ValueError: a value that is not positive or not finite, lengths that differ, fewer
            than two points, or ``x`` all equal.
    """
    lx, ly = _log_positive(x, "x"), _log_positive(y, "y")
    _same_length(lx, ly, "x and y")
    if lx.size < 2:
        raise ValueError(f"a slope needs at least two points, got {lx.size}")
    dx = lx - lx.mean()
    sxx = float(dx @ dx)
    if sxx == 0.0:
        raise ValueError("x must take at least two distinct values for a slope")
    slope = float(dx @ (ly - ly.mean())) / sxx
    intercept = float(ly.mean() - slope * lx.mean())
    residuals = ly - (intercept + slope * lx)
    dof = lx.size - 2
    se = math.sqrt(float(residuals @ residuals) / dof / sxx) if dof > 0 else math.nan
    return Slope(slope, se, intercept, int(lx.size))


# ----------------------------------------------------------------------------- permutation
def _batches(total: int, width: int) -> Iterator[int]:
    size = max(1, _BATCH_ELEMENTS // width)
    for start in range(0, total, size):
        yield min(size, total - start)


def _sign_flip_means(d: np.ndarray, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    parts = []
    for rows in _batches(n_resamples, d.size):
        signs = 2.0 * gen.integers(0, 2, size=(rows, d.size)) - 1.0
        parts.append((signs * d).mean(axis=1))
    return np.concatenate(parts)


def _relabelled_gaps(
    x: np.ndarray, y: np.ndarray, n_resamples: int, gen: np.random.Generator
) -> np.ndarray:
    pooled = np.concatenate([x, y])
    parts = []
    for rows in _batches(n_resamples, pooled.size):
        shuffled = gen.permuted(np.tile(pooled, (rows, 1)), axis=1)
        parts.append(shuffled[:, : x.size].mean(axis=1) - shuffled[:, x.size :].mean(axis=1))
    return np.concatenate(parts)


def _p_value(observed: float, null: np.ndarray, alternative: str, scale: float) -> float:
    tie = _TIE_TOLERANCE * scale
    if alternative == "greater":
        count = np.count_nonzero(null >= observed - tie)
    elif alternative == "less":
        count = np.count_nonzero(null <= observed + tie)
    else:
        count = np.count_nonzero(np.abs(null) >= abs(observed) - tie)
    return (int(count) + 1) / (null.size + 1)


def permutation_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    paired: bool = False,
    n_resamples: int = 10000,
    rng: np.random.Generator | int,
    alternative: Alternative = "two-sided",
) -> float:
    """A Monte Carlo permutation test of the difference in means, ``mean(a) - mean(b)``.

    Unpaired, the null shuffles the pooled values between the groups; paired (``a[i]``
    pairs ``b[i]``), it flips the sign of each difference ``a[i] - b[i]``. The p-value
    counts the resampled statistics at least as extreme as the observed one, with the +1
    correction ``(count + 1) / (n_resamples + 1)``, so it is never 0 and the test is valid
    at any number of resamples. Two-sided means ``|statistic| >= |observed|`` (SciPy's
    ``permutation_test`` doubles the smaller one-sided p-value instead: the same for the
    symmetric paired null, close otherwise). Resampled statistics within
    ``1e-12 * max(|values|)`` of the observed one count as ties (rounding).

    Args:
        a: the first sample, non-empty and finite.
        b: the second sample; the same length as ``a`` when ``paired``.
        paired: sign-flip the paired differences instead of relabelling the pooled values.
        n_resamples: the number of random permutations, at least 1.
        rng: a NumPy ``Generator`` or a non-negative int seed (required).
        alternative: ``"two-sided"``, ``"greater"`` (``mean(a) > mean(b)``) or ``"less"``.

    Returns:
        The p-value, in ``(0, 1]``.

    Raises:
        ValueError: an empty or non-finite sample, unpaired lengths when ``paired``, or a
            bad ``n_resamples``, ``rng`` or ``alternative``.
    """
    x, y = _sample(a, "a"), _sample(b, "b")
    side = _alternative(alternative)
    n_resamples = _count(n_resamples, "n_resamples", 1)
    gen = _generator(rng)
    if paired:
        _same_length(x, y, "a and b (paired)")
        d = x - y
        observed, null = float(d.mean()), _sign_flip_means(d, n_resamples, gen)
        scale = float(np.abs(d).max())
    else:
        observed, null = float(x.mean() - y.mean()), _relabelled_gaps(x, y, n_resamples, gen)
        scale = max(float(np.abs(x).max()), float(np.abs(y).max()))
    return _p_value(observed, null, side, scale)


# ----------------------------------------------------------------------------- timing
@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds per call of a timed function.

    Attributes:
        best: the fastest repeat (the least disturbed by other load: report this one).
        median: the median repeat.
        times: every repeat's seconds per call, in order.
    """

    best: float
    median: float
    times: tuple[float, ...]


def best_of(
    fn: Callable[[], object], *, repeats: int = 5, number: int = 1, warmup: int = 1
) -> Timing:
    """Time ``fn()`` with :func:`time.perf_counter`: the best of ``repeats`` repeats.

    Each repeat calls ``fn`` ``number`` times in a row and records the mean seconds per
    call; ``warmup`` untimed calls come first (compilation, caches). ``fn`` must finish its
    work before it returns: with JAX, return ``jax.block_until_ready(...)``; with CUDA
    torch, call ``torch.cuda.synchronize()`` inside.

    Args:
        fn: a function of no arguments.
        repeats: the number of timed repeats, at least 1.
        number: calls per repeat, at least 1 (raise it for calls under a millisecond).
        warmup: untimed calls before the first repeat, at least 0.

    Returns:
        :class:`Timing` with the best and median seconds per call and every repeat's.

    Raises:
        ValueError: ``fn`` is not callable, or a count is not an integer in range.
    """
    if not callable(fn):
        raise ValueError(f"fn must be a function of no arguments, got {fn!r}")
    repeats = _count(repeats, "repeats", 1)
    number = _count(number, "number", 1)
    for _ in range(_count(warmup, "warmup", 0)):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return Timing(min(times), statistics.median(times), tuple(times))
