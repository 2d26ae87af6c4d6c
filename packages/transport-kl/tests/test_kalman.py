"""The ensemble Kalman reading of KWKL."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.transport_kl import kalman


def test_kwkl_prox_step_is_the_inflated_kalman_step() -> None:
    rng = np.random.default_rng(0)
    ens = rng.normal(size=(4, 8))  # 4 members in 8-D (the smoke profile's shapes): singular C
    c = np.cov(ens.T, bias=True)
    m, g = ens.mean(0), rng.normal(size=8)
    step = kalman.prox_step(m, c, g, lam=0.4, h=0.2)
    np.testing.assert_allclose(step, -0.2 * (c + 0.4 * np.eye(8)) @ g, rtol=1e-7, atol=1e-10)


def test_subspace_property_and_its_cure() -> None:
    problem = kalman.make_inverse_problem(0, dim=8, n_obs=6)
    ens0 = np.random.default_rng(1).normal(size=(4, 8))
    stuck = kalman.ensemble_flow(problem, ens0, lam=0.0, t_end=5.0, steps=200)
    freed = kalman.ensemble_flow(problem, ens0, lam=1.0, t_end=5.0, steps=200)
    assert kalman.span_gap(ens0, stuck.mean(0)) < 1e-10
    err = [np.linalg.norm(e.mean(0) - problem.minimiser) for e in (stuck, freed)]
    assert err[1] < 0.1 * err[0]


def test_bad_inputs() -> None:
    problem = kalman.make_inverse_problem(0, dim=5, n_obs=4)
    with pytest.raises(ValueError, match="ensemble must be"):
        kalman.ensemble_flow(problem, np.zeros((3, 4)), lam=1.0, t_end=1.0, steps=2)
    with pytest.raises(ValueError, match="need lam > 0"):
        kalman.prox_step(np.zeros(2), np.eye(2), np.ones(2), lam=0.0, h=1.0)
