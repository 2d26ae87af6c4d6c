"""Statistics against SciPy and statsmodels as independent references, properties, bad input."""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from icml26.shared.stats import (
    best_of,
    bootstrap_interval,
    clopper_pearson_interval,
    loglog_slope,
    mean_se,
    paired_difference,
    permutation_test,
    wilson_interval,
    z_quantile,
)

RTOL = 1e-10


def _scipy_seed(function: Callable[..., Any], seed: int) -> dict[str, Any]:
    """SciPy's seed keyword: ``rng`` from 1.15, ``random_state`` before."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


# ----------------------------------------------------------------------------- references
def test_z_quantile_matches_scipy() -> None:
    for confidence in (0.5, 0.9, 0.95, 0.99, 0.999999):
        assert z_quantile(confidence) == pytest.approx(
            sps.norm.ppf(0.5 + confidence / 2), rel=1e-12
        )
    assert z_quantile() == pytest.approx(1.959963984540054, rel=1e-15)


def test_mean_se_matches_scipy_sem() -> None:
    x = np.random.default_rng(0).normal(3.0, 2.0, size=25)
    result = mean_se(x)
    assert result.n == 25
    assert result.mean == pytest.approx(x.mean(), rel=RTOL)
    assert result.se == pytest.approx(sps.sem(x), rel=RTOL)
    low, high = result.interval(0.9)
    assert (high - low) / 2 == pytest.approx(sps.norm.ppf(0.95) * sps.sem(x), rel=RTOL)


def test_mean_se_of_one_value_and_of_booleans() -> None:
    single = mean_se([4.0])
    assert (single.mean, single.n) == (4.0, 1)
    assert math.isnan(single.se)
    assert all(math.isnan(b) for b in single.interval())
    assert mean_se([True, False, True, True]).mean == 0.75


def test_paired_difference_matches_ttest_rel() -> None:
    rng = np.random.default_rng(1)
    b = rng.normal(size=30)
    a = b + 0.3 + rng.normal(scale=0.5, size=30)
    gap = paired_difference(a, b)
    assert gap.n == 30
    assert gap.mean == pytest.approx(np.mean(a - b), rel=RTOL)
    assert gap.se == pytest.approx(sps.sem(a - b), rel=RTOL)
    assert gap.z == pytest.approx(sps.ttest_rel(a, b).statistic, rel=RTOL)
    low, high = gap.interval()
    assert low < gap.mean < high


def test_paired_difference_without_spread() -> None:
    assert paired_difference([2.0, 3.0], [1.0, 2.0]).z == math.inf
    assert paired_difference([1.0, 2.0], [2.0, 3.0]).z == -math.inf
    assert math.isnan(paired_difference([1.0, 2.0], [1.0, 2.0]).z)
    one = paired_difference([1.0], [0.0])
    assert math.isnan(one.se)
    assert math.isnan(one.z)


COUNTS = [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (37, 50), (1, 1000), (999, 1000)]


@pytest.mark.parametrize(("successes", "n"), COUNTS)
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.999])
def test_wilson_matches_statsmodels(successes: int, n: int, confidence: float) -> None:
    ours = wilson_interval(successes, n, confidence)
    ref = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize(("successes", "n"), [*COUNTS, (500, 2000), (5, 20000)])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.999])
def test_clopper_pearson_matches_statsmodels_beta(
    successes: int, n: int, confidence: float
) -> None:
    ours = clopper_pearson_interval(successes, n, confidence)
    ref = proportion_confint(successes, n, alpha=1 - confidence, method="beta")
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-14)


def test_fractional_counts_in_wilson() -> None:
    low, high = wilson_interval(2.5, 7.5)
    assert low < 1 / 3 < high


def test_bootstrap_matches_scipy_percentile_loosely() -> None:
    x = np.random.default_rng(2).exponential(size=40)
    ours = bootstrap_interval(x, confidence=0.9, n_resamples=10000, rng=0)
    ref = sps.bootstrap(
        (x,),
        np.mean,
        confidence_level=0.9,
        n_resamples=10000,
        method="percentile",
        **_scipy_seed(sps.bootstrap, 0),
    ).confidence_interval
    # Two independent Monte Carlo estimates of each quantile: their sd is ~0.04 standard errors.
    np.testing.assert_allclose(ours, (ref.low, ref.high), atol=0.2 * sps.sem(x))


def test_bootstrap_takes_any_statistic_and_is_reproducible() -> None:
    x = np.arange(21.0)
    low, high = bootstrap_interval(x, np.median, n_resamples=500, rng=3)
    assert low <= 10 <= high
    assert bootstrap_interval(x, rng=np.random.default_rng(3)) == bootstrap_interval(x, rng=3)
    assert bootstrap_interval([5.0], rng=0) == (5.0, 5.0)


def test_loglog_slope_matches_linregress() -> None:
    rng = np.random.default_rng(4)
    x = np.geomspace(1, 1000, 12)
    y = 3.0 * x**-0.7 * np.exp(rng.normal(scale=0.1, size=x.size))
    fit, ref = loglog_slope(x, y), sps.linregress(np.log(x), np.log(y))
    assert fit.n == 12
    assert fit.slope == pytest.approx(ref.slope, rel=RTOL)
    assert fit.se == pytest.approx(ref.stderr, rel=1e-8)
    assert fit.intercept == pytest.approx(ref.intercept, rel=1e-8)


def test_loglog_slope_through_two_points_has_no_se() -> None:
    fit = loglog_slope([1.0, 10.0], [2.0, 200.0])
    assert fit.slope == pytest.approx(2.0)
    assert math.isnan(fit.se)


def test_permutation_test_matches_scipy_loosely() -> None:
    # Normal quantiles, shifted: p-values between 0.05 and 0.35 by construction.
    q = sps.norm.ppf((np.arange(15) + 0.5) / 15)
    rng = np.random.default_rng(5)
    a, b = rng.permutation(q) + 0.5, rng.permutation(q)
    c = q[::2] + 0.3

    def gap(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    cases = [
        (dict(paired=False), (a, b), dict(permutation_type="independent")),
        (dict(paired=True), (a, b), dict(permutation_type="samples")),
        (dict(paired=False, alternative="greater"), (a, c), dict(alternative="greater")),
        (
            dict(paired=True, alternative="less"),
            (b, a),
            dict(permutation_type="samples", alternative="less"),
        ),
    ]
    for ours_kw, data, ref_kw in cases:
        ours = permutation_test(*data, n_resamples=20000, rng=6, **ours_kw)
        ref = sps.permutation_test(
            data,
            gap,
            n_resamples=20000,
            vectorized=True,
            **ref_kw,
            **_scipy_seed(sps.permutation_test, 6),
        ).pvalue
        # Two independent Monte Carlo p-values: each has sd <= 0.0036 at 20000 resamples.
        assert 0.02 < ref < 0.5, "the data should give a p-value worth comparing"
        assert ours == pytest.approx(ref, abs=0.02), ours_kw


def test_permutation_test_extremes() -> None:
    same = [1.0, 2.0, 3.0, 4.0]
    assert permutation_test(same, same, paired=True, n_resamples=100, rng=0) == 1.0
    # Only 2 of the C(40, 20) ~ 1.4e11 relabellings are as extreme: the p-value is the +1
    # correction alone.
    far = permutation_test(np.arange(20.0) + 100, np.arange(20.0), n_resamples=999, rng=0)
    assert far == 1 / 1000


def test_best_of_times_each_call() -> None:
    calls = []

    def nap() -> None:
        calls.append(None)
        time.sleep(0.002)

    timing = best_of(nap, repeats=3, number=2, warmup=1)
    assert len(calls) == 1 + 3 * 2
    assert len(timing.times) == 3
    assert timing.best == min(timing.times)
    assert timing.best <= timing.median <= max(timing.times)
    assert timing.best >= 0.002  # sleep sleeps at least that long; per call, not per repeat
    assert len(best_of(lambda: None, warmup=0).times) == 5


# ----------------------------------------------------------------------------- properties
@st.composite
def counts(draw: st.DrawFn, max_n: int = 300) -> tuple[int, int]:
    n = draw(st.integers(1, max_n))
    return draw(st.integers(0, n)), n


confidences = st.floats(0.5, 0.999)


@given(counts(), confidences)
def test_binomial_intervals_contain_the_estimate(kn: tuple[int, int], confidence: float) -> None:
    k, n = kn
    for interval in (wilson_interval, clopper_pearson_interval):
        low, high = interval(k, n, confidence)
        assert 0.0 <= low <= k / n <= high <= 1.0


@given(counts(), confidences, confidences)
def test_clopper_pearson_widens_with_confidence(kn: tuple[int, int], c1: float, c2: float) -> None:
    (l1, h1), (l2, h2) = (clopper_pearson_interval(*kn, c) for c in sorted((c1, c2)))
    assert l2 <= l1 + 1e-12
    assert h1 <= h2 + 1e-12


samples = st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=20)


@settings(max_examples=50)
@given(samples, samples, st.booleans(), st.sampled_from(["two-sided", "greater", "less"]))
def test_permutation_p_value_is_a_probability(
    a: list[float], b: list[float], paired: bool, alternative: str
) -> None:
    if paired:
        a, b = a[: len(b)], b[: len(a)]
    p = permutation_test(a, b, paired=paired, n_resamples=99, rng=0, alternative=alternative)  # type: ignore[arg-type]
    assert 0.0 < p <= 1.0
    assert p >= 1 / 100


@settings(max_examples=50)
@given(samples, st.integers(0, 2**32 - 1))
def test_bootstrap_of_the_mean_stays_inside_the_data(values: list[float], seed: int) -> None:
    low, high = bootstrap_interval(values, n_resamples=50, rng=seed)
    slack = 1e-12 * max(1.0, *map(abs, values))  # a mean of equal floats may round past them
    assert min(values) - slack <= low <= high <= max(values) + slack


@given(
    st.lists(st.floats(1e-3, 1e3), min_size=2, max_size=12, unique=True),
    st.floats(-3.0, 3.0),
    st.floats(1e-2, 1e2),
)
def test_slope_of_an_exact_power_law_is_its_exponent(
    x: list[float], exponent: float, scale: float
) -> None:
    xs = np.asarray(x)
    assume(np.ptp(np.log(xs)) >= 1e-3)  # nearly equal x: an ill-conditioned slope
    fit = loglog_slope(xs, scale * xs**exponent)
    assert fit.slope == pytest.approx(exponent, abs=1e-8)
    assert fit.intercept == pytest.approx(math.log(scale), abs=1e-6)


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=30))
def test_mean_interval_contains_the_mean(values: list[float]) -> None:
    result = mean_se(values)
    low, high = result.interval()
    assert low <= result.mean <= high


# ----------------------------------------------------------------------------- bad input
BAD_INPUT = [
    (lambda: mean_se([]), "values is empty"),
    (lambda: mean_se([1.0, math.nan]), "must be finite, got nan at index 1"),
    (lambda: mean_se([1.0, math.inf]), "must be finite"),
    (lambda: mean_se([[1.0, 2.0]]), "one-dimensional"),
    (lambda: mean_se(["a"]), "must be numbers"),
    (lambda: paired_difference([1.0, 2.0], [1.0]), "same length, got 2 and 1"),
    (lambda: paired_difference([], []), "a is empty"),
    (lambda: wilson_interval(11, 10), "successes must be in \\[0, n\\]"),
    (lambda: wilson_interval(-1, 10), "successes must be in"),
    (lambda: wilson_interval(0, 0), "n must be positive"),
    (lambda: wilson_interval(1, math.nan), "n must be finite"),
    (lambda: wilson_interval(True, 2), "successes must be a number"),
    (lambda: wilson_interval(1, 2, confidence=1.0), "confidence must be in \\(0, 1\\)"),
    (lambda: wilson_interval(1, 2, confidence=0), "confidence must be in"),
    (lambda: clopper_pearson_interval(1.5, 10), "successes must be a whole number"),
    (lambda: clopper_pearson_interval(11, 10), "successes must be in"),
    (lambda: clopper_pearson_interval(1, 10, confidence=math.nan), "confidence must be in"),
    (lambda: z_quantile(95), "confidence must be in"),
    (lambda: bootstrap_interval([1.0], rng=-1), "rng must be a numpy Generator"),
    (lambda: bootstrap_interval([1.0], rng=None), "rng must be"),  # type: ignore[arg-type]
    (lambda: bootstrap_interval([1.0], n_resamples=0, rng=0), "n_resamples must be an integer"),
    (lambda: bootstrap_interval([1.0], confidence=1.5, rng=0), "confidence must be in"),
    (
        lambda: bootstrap_interval([1.0, 2.0], lambda s: math.nan, rng=0),
        "not finite on some bootstrap resample",
    ),
    (lambda: loglog_slope([1.0, 2.0], [1.0, 0.0]), "y must be positive .* at index 1"),
    (lambda: loglog_slope([1.0, -2.0], [1.0, 1.0]), "x must be positive"),
    (lambda: loglog_slope([1.0, 2.0], [1.0]), "same length"),
    (lambda: loglog_slope([1.0], [1.0]), "at least two points"),
    (lambda: loglog_slope([3.0, 3.0], [1.0, 2.0]), "two distinct values"),
    (lambda: permutation_test([1.0], [2.0, 3.0], paired=True, rng=0), "same length"),
    (lambda: permutation_test([1.0], [2.0], rng=0, alternative="both"), "alternative must be"),  # type: ignore[arg-type]
    (lambda: permutation_test([1.0], [math.nan], rng=0), "b must be finite"),
    (lambda: permutation_test([1.0], [2.0], rng=0, n_resamples=2.5), "n_resamples must be"),  # type: ignore[arg-type]
    (lambda: best_of(3), "fn must be a function"),  # type: ignore[arg-type]
    (lambda: best_of(lambda: None, repeats=0), "repeats must be an integer >= 1"),
    (lambda: best_of(lambda: None, number=True), "number must be an integer >= 1"),
    (lambda: best_of(lambda: None, warmup=-1), "warmup must be an integer >= 0"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUT)
def test_bad_input_names_the_problem(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_permutation_test_and_bootstrap_need_rng() -> None:
    with pytest.raises(TypeError, match="rng"):
        permutation_test([1.0], [2.0])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="rng"):
        bootstrap_interval([1.0])  # type: ignore[call-arg]
