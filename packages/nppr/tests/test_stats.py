"""The design-effect interval of a mean of per-input rates: coverage by simulation, the
clean-correct restriction, sample sizes (Wilson's formula itself is tested in icml26.shared)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml26.nppr.stats import estimate_from_rates, inputs_for_halfwidth, samples_for_halfwidth
from icml26.shared.stats import bootstrap_interval, wilson_interval


def test_binary_rates_give_the_plain_wilson_interval() -> None:
    rates = np.array([1.0] * 70 + [0.0] * 30)
    est = estimate_from_rates(rates, 1)
    assert (est.lo, est.hi) == pytest.approx(wilson_interval(70, 100), abs=1e-9)


def test_constant_rates_fall_back_to_all_draws() -> None:
    est = estimate_from_rates(np.ones(50), 20)
    assert est.hi == 1.0
    assert est.lo == pytest.approx(wilson_interval(1000, 1000)[0])
    assert est.lo > 0.99


def test_wilson_coverage_in_repeated_simulation() -> None:
    """Coverage of a known rate over 4000 simulated binomial experiments is ~95%
    (standard error of the coverage ~0.0035)."""
    rng = np.random.default_rng(0)
    p, n, reps = 0.3, 120, 4000
    ks = rng.binomial(n, p, size=reps)
    covered = np.mean([lo <= p <= hi for lo, hi in (wilson_interval(k, n) for k in ks)])
    assert 0.93 <= covered <= 0.97


def test_clustered_interval_covers_the_population_mean() -> None:
    """Per-input rates p_i ~ Beta(2, 1) (mean 2/3), m = 16 draws each, n = 100 inputs: the
    design-effect interval covers 2/3 in about 95% of 1500 repetitions, where treating the
    1600 draws as independent would under-cover badly."""
    rng = np.random.default_rng(1)
    n, m, reps, truth = 100, 16, 1500, 2 / 3
    hits, naive = 0, 0
    for _ in range(reps):
        p_i = rng.beta(2.0, 1.0, size=n)
        rates = rng.binomial(m, p_i) / m
        est = estimate_from_rates(rates, m)
        hits += est.lo <= truth <= est.hi
        lo, hi = wilson_interval(rates.sum() * m, n * m)
        naive += lo <= truth <= hi
    assert 0.92 <= hits / reps <= 0.975
    assert naive / reps < 0.85


def test_bootstrap_agrees_with_the_analytic_interval() -> None:
    rates = np.random.default_rng(2).beta(3, 2, size=400)
    est = estimate_from_rates(rates, 50)
    lo, hi = bootstrap_interval(rates, rng=0)
    assert lo == pytest.approx(est.lo, abs=0.01)
    assert hi == pytest.approx(est.hi, abs=0.01)


def test_sample_sizes_for_a_halfwidth() -> None:
    assert samples_for_halfwidth(0.05) == math.ceil(1.959963984540054**2 * 0.25 / 0.05**2)  # 385
    assert samples_for_halfwidth(0.05) == 385
    rates = np.random.default_rng(3).uniform(0, 1, size=1000)
    est = estimate_from_rates(rates, 10)
    n = inputs_for_halfwidth(est, 0.01)
    assert n == pytest.approx(1.96**2 * rates.var(ddof=1) / 0.01**2, rel=0.01)
    # achieved half-width at the current n scales as 1/sqrt(n)
    assert est.halfwidth == pytest.approx(0.01 * math.sqrt(n / 1000), rel=0.05)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: estimate_from_rates(np.array([0.5, np.nan]), 4), "finite"),
        (lambda: estimate_from_rates(np.array([1.5]), 4), "in \\[0, 1\\]"),
        (lambda: samples_for_halfwidth(0.0), "halfwidth"),
        (lambda: estimate_from_rates(np.array([0.5]), 4, level=1.0), "confidence"),
    ],
)
def test_bad_arguments(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()


def test_clean_correct_restriction() -> None:
    rates = np.array([1.0, 0.5, 0.0, 0.25])
    clean = np.array([True, True, False, True])
    est = estimate_from_rates(rates, 4, forward_passes=16)
    cc = est.on(clean)
    assert cc.value == pytest.approx(np.mean([1.0, 0.5, 0.25]))
    assert cc.n_inputs == 3
    assert cc.forward_passes == 16
    with pytest.raises(ValueError, match="no input"):
        est.on(np.zeros(4, bool))
    with pytest.raises(ValueError, match="shape"):
        est.on(np.ones(3, bool))
