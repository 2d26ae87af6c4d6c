"""Gaussian processes: exact E sup, exact covering numbers, Monte Carlo intervals, Dudley."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml26.lean_slt.processes import (
    PROCESSES,
    BrownianGrid,
    FiniteIID,
    expected_max_iid_gaussian,
    make_process,
    monte_carlo_sup,
)


def test_expected_max_small_n_closed_forms() -> None:
    assert expected_max_iid_gaussian(2) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-8)
    assert expected_max_iid_gaussian(3) == pytest.approx(1.5 / math.sqrt(math.pi), rel=1e-8)


def test_expected_max_asymptotics() -> None:
    # E max ~ sqrt(2 log n) - (log log n + log 4 pi - 2 gamma) / (2 sqrt(2 log n))
    for n in (10**4, 10**6):
        a = math.sqrt(2 * math.log(n))
        approx = a - (math.log(math.log(n)) + math.log(4 * math.pi) - 2 * 0.5772156649) / (2 * a)
        assert expected_max_iid_gaussian(n) == pytest.approx(approx, abs=0.03)
        assert expected_max_iid_gaussian(n) < a


def test_finite_max_bound() -> None:
    # subGaussian_finite_max_bound: E max <= sigma diam sqrt(2 log |T|), here sigma = 1, diam = sqrt 2
    for n in (2, 10, 1000):
        assert expected_max_iid_gaussian(n) <= math.sqrt(2) * math.sqrt(2 * math.log(n))


def test_finite_iid_covering_is_the_simplex_radius() -> None:
    p = FiniteIID(7)
    e = np.eye(7)
    for k in range(1, 8):
        radius = float(np.linalg.norm(e[:k].mean(axis=0) - e[0]))
        assert radius == pytest.approx(math.sqrt(1 - 1 / k))
        eps = math.sqrt(1 - 1 / k) + 1e-9
        assert math.exp(p.log_covering(np.asarray([eps]))[0]) == pytest.approx(math.ceil(7 / k))


def test_brownian_covering_exact() -> None:
    p = BrownianGrid(50)
    t = np.linspace(0, 1, 51)[:, None]
    for eps in (0.05, 0.1, 0.2, 0.5):
        # greedy on sorted points of a line is optimal for intervals of length 2 eps^2
        n = 0
        i = 0
        while i < len(t):
            n += 1
            i = int(np.searchsorted(t[:, 0], t[i, 0] + 2 * eps**2 + 1e-12, side="right"))
        assert math.exp(p.log_covering(np.asarray([eps]))[0]) == pytest.approx(n)
        # a greedy net in the metric sqrt|t - u| is an eps-net, so it is at least as large
        centres: list[float] = []
        for x in t[:, 0]:
            if not any(math.sqrt(abs(x - c)) <= eps for c in centres):
                centres.append(x)
        assert n <= len(centres)


def test_brownian_spitzer_formula() -> None:
    p = BrownianGrid(5)
    rng = np.random.default_rng(0)
    draws = p.sample_sup(rng, 400_000)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - p.expected_sup()) < 5 * se


@pytest.mark.parametrize("name", list(PROCESSES))
def test_interval_covers_truth_and_bound_holds(name: str) -> None:
    rng = np.random.default_rng(7)
    for n in (10, 200):
        p = make_process(name, n)
        mc = monte_carlo_sup(p, rng, 3000)
        assert mc.lo <= p.expected_sup() <= mc.hi
        assert p.dudley_bound() >= p.expected_sup()  # the theorem, as a test


def test_bad_process() -> None:
    with pytest.raises(ValueError, match="unknown process"):
        make_process("levy", 10)
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        FiniteIID(1)
    with pytest.raises(ValueError, match="draws"):
        monte_carlo_sup(FiniteIID(3), np.random.default_rng(0), 1)
