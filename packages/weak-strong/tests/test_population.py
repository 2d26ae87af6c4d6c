"""The two-threshold optimum against brute force over threshold pairs and a generic LP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.weak_strong.population import (
    ScoreLaw,
    optimal_policy,
    policy_risks,
    score_thresholds,
)


def random_law(rng: np.random.Generator, n: int, monotone: bool) -> ScoreLaw:
    atoms = np.sort(rng.choice(np.linspace(0, 1, 501), size=n, replace=False))
    mass = rng.dirichlet(np.ones(n))
    eta = np.sort(rng.random(n)) if monotone else rng.random(n)
    return ScoreLaw(atoms, mass * eta, mass * (1 - eta))


def brute_force(law: ScoreLaw, alpha: float, beta: float, order: np.ndarray) -> float:
    """Smallest P(defer) over every deterministic (accept top-k, reject bottom-m) pair along
    ``order`` (ascending), checking both constraints directly."""
    n = law.atoms.size
    pi0, pi1 = 1 - law.pi1, law.pi1
    best = 1.0
    for k, m in itertools.product(range(n + 1), repeat=2):
        if k + m > n:
            continue
        acc = order[n - k :]
        rej = order[:m]
        if law.p_incorrect[acc].sum() > alpha * pi0 + 1e-12:
            continue
        if law.p_correct[rej].sum() > beta * pi1 + 1e-12:
            continue
        best = min(best, 1.0 - law.mass[acc].sum() - law.mass[rej].sum())
    return best


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 9),
    alpha=st.floats(0.01, 0.5),
    beta=st.floats(0.01, 0.5),
    monotone=st.booleans(),
)
def test_deterministic_optimum_matches_brute_force(seed, n, alpha, beta, monotone) -> None:
    law = random_law(np.random.default_rng(seed), n, monotone)
    for order_name, key in (("score", law.atoms), ("eta", law.eta)):
        order = np.lexsort((np.arange(n), key))
        pol = optimal_policy(law, alpha, beta, order=order_name, randomize=False)
        ours = policy_risks(pol)["strong_freq"]
        if order_name == "eta" and np.unique(key).size < n:
            continue  # ties in eta: brute force along one tie order is not the full search
        assert ours == pytest.approx(brute_force(law, alpha, beta, order), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 30),
    alpha=st.floats(0.01, 0.6),
    beta=st.floats(0.01, 0.6),
)
def test_randomised_optimum_matches_lp(seed, n, alpha, beta) -> None:
    linprog = pytest.importorskip("scipy.optimize").linprog
    law = random_law(np.random.default_rng(seed), n, monotone=False)
    pol = optimal_policy(law, alpha, beta)
    risks = policy_risks(pol)
    assert risks["incorrect_accept"] <= alpha + 1e-9
    assert risks["incorrect_reject"] <= beta + 1e-9
    assert np.all(pol.accept + pol.reject <= 1 + 1e-12)
    m = law.mass
    a_ub = np.zeros((2 + n, 2 * n))
    a_ub[0, :n], a_ub[1, n:] = law.p_incorrect, law.p_correct
    a_ub[2:, :n], a_ub[2:, n:] = np.eye(n), np.eye(n)
    b_ub = np.concatenate([[alpha * (1 - law.pi1), beta * law.pi1], np.ones(n)])
    res = linprog(np.concatenate([-m, -m]), A_ub=a_ub, b_ub=b_ub, bounds=(0, 1), method="highs")
    assert res.success
    assert risks["strong_freq"] == pytest.approx(1 + res.fun, abs=1e-8)


def test_two_threshold_structure_on_calibrated_law() -> None:
    law = ScoreLaw.from_density(lambda s: s, lambda s: np.ones_like(s), grid=501)
    pol = optimal_policy(law, 0.1, 0.1)
    # Accept is an upper set, reject a lower set of the score axis, with at most one mixed atom.
    assert np.all(np.diff(pol.accept) >= -1e-12)
    assert np.all(np.diff(pol.reject) <= 1e-12)
    assert np.sum((pol.accept > 0) & (pol.accept < 1)) <= 1
    # Uniform calibrated scores: P(S > t | H = 0) = (1 - t)^2 = alpha -> t = 1 - sqrt(alpha).
    tau_a, tau_r = score_thresholds(law, 0.1, 0.1)
    assert tau_a == pytest.approx(1 - np.sqrt(0.1), abs=3e-3)
    assert tau_r == pytest.approx(np.sqrt(0.1), abs=3e-3)


def test_sharper_calibrated_verifiers_defer_less() -> None:
    from scipy.stats import beta as beta_dist

    freqs = []
    for kappa in (0.5, 2.0, 8.0):
        law = ScoreLaw.from_density(
            lambda s: s, lambda s, k=kappa: beta_dist.pdf(s, 0.6 * k, 0.4 * k)
        )
        freqs.append(policy_risks(optimal_policy(law, 0.1, 0.1))["strong_freq"])
    assert freqs[0] < freqs[1] < freqs[2]


def test_score_law_validation() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        ScoreLaw(np.array([0.1, 0.5]), np.array([0.2, 0.2]), np.array([0.2, 0.2]))
    with pytest.raises(ValueError, match="strictly increasing"):
        ScoreLaw(np.array([0.5, 0.1]), np.array([0.25, 0.25]), np.array([0.25, 0.25]))
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        optimal_policy(ScoreLaw.from_samples([0.2, 0.8], [0, 1]), 1.5, 0.1)
    with pytest.raises(ValueError, match="beta must"):
        optimal_policy(ScoreLaw.from_samples([0.2, 0.8], [0, 1]), 0.1, 0.0)
