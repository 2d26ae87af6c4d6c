"""Closed forms against the dynamical (flow) definition, computed numerically."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg

from icml26.transport_kl import flow, gaussian

STEPS = 64  # RK4 error ~ 1e-9 relative at this step count for the pairs below


def test_fisher_rao_flow_gives_reverse_kl(pair) -> None:
    m1, s1, m2, s2 = pair
    assert flow.fisher_rao_divergence(m1, s1, m2, s2) == pytest.approx(
        float(gaussian.kl(m1, s1, m2, s2)), rel=1e-10
    )


def test_wasserstein_flow_matches_wkl(pair) -> None:
    m1, s1, m2, s2 = pair
    # the flow starts at the second law: here N(m1, s1)
    res = flow.flow_divergence(m2, s2, m1, s1, geometry="wasserstein", steps=STEPS)
    assert res.residual < 1e-9
    assert res.value == pytest.approx(float(gaussian.wkl(m2, s2, m1, s1)), rel=1e-7)
    # the potential's time-1 map is the OT map: exp(A) = T
    w, v = np.linalg.eigh(res.A)
    r1 = linalg.sqrtm(s1).real
    r1_inv = np.linalg.inv(r1)
    t_map = r1_inv @ linalg.sqrtm(r1 @ s2 @ r1).real @ r1_inv
    np.testing.assert_allclose((v * np.exp(w)) @ v.T, t_map, atol=1e-6)


@pytest.mark.parametrize("lam", [0.0, 0.8])
def test_kalman_wasserstein_flow_matches_kwkl(pair, lam: float) -> None:
    m1, s1, m2, s2 = pair
    if lam > 0:  # closed form for lam > 0 needs commuting covariances
        s1, s2 = np.diag([1.5, 0.4]), np.diag([0.5, 1.2])
    res = flow.flow_divergence(m1, s1, m2, s2, geometry="kalman_wasserstein", lam=lam, steps=STEPS)
    assert res.value == pytest.approx(float(gaussian.kwkl(m1, s1, m2, s2, lam)), rel=1e-7)


def test_coupling_search_matches_bures(pair) -> None:
    m1, s1, m2, s2 = pair
    assert flow.w2_by_coupling_search(m1, s1, m2, s2, iters=60) == pytest.approx(
        float(gaussian.w2(m1, s1, m2, s2, squared=True)), rel=1e-9
    )


def test_flow_rejects_bad_geometry(pair) -> None:
    with pytest.raises(ValueError, match="geometry must be"):
        flow.flow_divergence(*pair, geometry="fisher")  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_3d_pairs_all_geometries(seed: int) -> None:
    rng = np.random.default_rng(seed)

    def spd() -> np.ndarray:
        x = rng.normal(size=(3, 3))
        return x @ x.T / 3 + 0.3 * np.eye(3)

    m1, m2, s1, s2 = rng.normal(size=3), rng.normal(size=3), spd(), spd()
    res = flow.flow_divergence(m1, s1, m2, s2, geometry="wasserstein", steps=256)
    assert res.value == pytest.approx(float(gaussian.wkl(m1, s1, m2, s2)), rel=1e-8)
    res = flow.flow_divergence(m1, s1, m2, s2, geometry="kalman_wasserstein", steps=256)
    assert res.value == pytest.approx(float(gaussian.kwkl(m1, s1, m2, s2, 0.0)), rel=1e-7)
    assert flow.fisher_rao_divergence(m1, s1, m2, s2) == pytest.approx(
        float(gaussian.kl(m1, s1, m2, s2)), rel=1e-10
    )
