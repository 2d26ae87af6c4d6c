"""Student-t closed forms against particle flows; KL growth under degeneration."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from scipy import stats

from icml26.transport_kl import elliptic, flow, gaussian

DOF = 6.0
N = 2000  # one particle count for both tests: one compilation


def test_student_t_closed_form_against_scipy_particles(pair) -> None:
    """Not circular: particles from ``scipy.stats.multivariate_t`` (not our sampler, no moment
    matching), the flow shot between the two samples' empirical moments (no ``kappa`` used),
    then run on the particles; the closed form's ``kappa = dof / (dof - 2)`` must agree."""
    m1, s1, m2, s2 = pair
    n = 20_000
    start = stats.multivariate_t(loc=m2, shape=s2, df=DOF).rvs(n, random_state=0)
    end = stats.multivariate_t(loc=m1, shape=s1, df=DOF).rvs(n, random_state=1)
    pot = flow.flow_divergence(
        end.mean(0), np.cov(end.T), start.mean(0), np.cov(start.T), geometry="wasserstein", steps=64
    )
    res = elliptic.particle_flow_divergence(start, pot.A, pot.b, steps=64)
    closed = float(elliptic.wkl_student_t(m1, s1, m2, s2, DOF))
    gaussian_kappa = float(gaussian.wkl(m1, s1, m2, s2))  # a wrong kappa (1) for comparison
    assert abs(res.value - closed) < 0.05 * closed
    assert abs(res.value - gaussian_kappa) > 2 * abs(res.value - closed)
    np.testing.assert_allclose(res.final_mean, end.mean(0), atol=1e-6)


@pytest.mark.slow
def test_raw_monte_carlo_agrees_within_error(pair) -> None:
    """Without moment matching the particle estimate is noisy but unbiased-ish."""
    m1, s1, m2, s2 = pair
    k = elliptic.student_t_kappa(DOF)
    pot = flow.flow_divergence(m1, k * s1, m2, k * s2, geometry="wasserstein", steps=64)
    x0 = elliptic.sample_student_t(jax.random.key(1), m2, s2, DOF, N)
    res = elliptic.particle_flow_divergence(x0, pot.A, pot.b, steps=64)
    closed = float(elliptic.wkl_student_t(m1, s1, m2, s2, DOF))
    assert abs(res.value - closed) < 0.1 * closed


def test_student_t_degeneration_transport_finite_kl_grows() -> None:
    m1, m2 = np.zeros(2), np.ones(2)
    vals = []
    for eps in (1.0, 1e-6):
        s = eps * np.eye(2)
        vals.append(
            (
                elliptic.kl_student_t_mc(m1, s, m2, s, DOF, n=2000, seed=0)[0],
                float(elliptic.wkl_student_t(m1, s, m2, s, DOF)),
            )
        )
    assert vals[1][0] > 5 * vals[0][0]  # KL grows (logarithmically for Student-t)
    assert vals[0][1] == pytest.approx(1.0)
    assert vals[1][1] == pytest.approx(1.0)


def test_student_t_reduces_to_scaled_gaussian(pair) -> None:
    m1, s1, m2, s2 = pair
    k = DOF / (DOF - 2)
    assert float(elliptic.w2_student_t(m1, s1, m2, s2, DOF)) == pytest.approx(
        float(gaussian.w2(m1, k * s1, m2, k * s2))
    )


@pytest.mark.parametrize("dof", [2.0, 1.0, float("nan")])
def test_bad_dof(dof: float) -> None:
    with pytest.raises(ValueError, match="dof must be > 2"):
        elliptic.student_t_kappa(dof)
