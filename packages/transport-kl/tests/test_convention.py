"""One argument convention: ``D(N1, N2)`` is the analog of ``KL(N1 || N2)``, checked against
each divergence's definition (not against another closed form of this package)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from icml26.transport_kl import flow, gaussian

N1 = (np.array([0.0, 0.0]), np.array([[1.0, 0.3], [0.3, 0.5]]))
N2 = (np.array([1.0, -0.5]), np.array([[2.0, -0.4], [-0.4, 1.5]]))


def _kl_monte_carlo(p: tuple, q: tuple, n: int = 400_000) -> tuple[float, float]:
    """``E_p[log p - log q]`` with SciPy densities: the definition of ``KL(p || q)``."""
    rng = np.random.default_rng(0)
    dp, dq = stats.multivariate_normal(*p), stats.multivariate_normal(*q)
    x = dp.rvs(size=n, random_state=rng)
    diff = dp.logpdf(x) - dq.logpdf(x)
    return float(diff.mean()), float(diff.std() / np.sqrt(n))


@pytest.mark.parametrize(("p", "q"), [(N1, N2), (N2, N1)])
def test_kl_is_the_expectation_under_its_first_argument(p: tuple, q: tuple) -> None:
    mc, se = _kl_monte_carlo(p, q)
    assert abs(float(gaussian.kl(*p, *q)) - mc) < 5 * se
    # and the Fisher-Rao flow from the second law to the first integrates to the same number
    assert flow.fisher_rao_divergence(*p, *q) == pytest.approx(
        float(gaussian.kl(*p, *q)), rel=1e-10
    )


@pytest.mark.parametrize(("p", "q"), [(N1, N2), (N2, N1)])
@pytest.mark.parametrize("geometry", ["wasserstein", "kalman_wasserstein"])
def test_transport_divergences_flow_from_the_second_argument(p, q, geometry) -> None:
    res = flow.flow_divergence(*p, *q, geometry=geometry, lam=0.0, steps=128)
    closed = gaussian.wkl(*p, *q) if geometry == "wasserstein" else gaussian.kwkl(*p, *q, 0.0)
    assert res.value == pytest.approx(float(closed), rel=1e-7)
    # the potential's flow starts at q: its time-1 map pushes q's mean to p's
    a, b = res.A, res.b
    w, v = np.linalg.eigh(a)
    if geometry == "wasserstein":  # x' = A x + b is affine: check the end mean in closed form
        end = (v * np.exp(w)) @ v.T @ q[0] + (
            v * np.where(np.abs(w) > 1e-12, np.expm1(w) / np.where(np.abs(w) > 1e-12, w, 1.0), 1.0)
        ) @ v.T @ b
        np.testing.assert_allclose(end, p[0], atol=1e-8)


def test_the_asymmetry_points_the_same_way() -> None:
    """``kl(N1, N2) != kl(N2, N1)``: the transport analogs put the compared law first too,
    so swapping the arguments of every divergence swaps the same pair of numbers."""
    kl12, kl21 = float(gaussian.kl(*N1, *N2)), float(gaussian.kl(*N2, *N1))
    assert kl12 != pytest.approx(kl21, rel=0.05)
    for fn in (gaussian.wkl, lambda *a: gaussian.kwkl(*a, 0.0)):
        assert float(fn(*N1, *N2)) == pytest.approx(
            flow.flow_divergence(
                *N1,
                *N2,
                geometry="kalman_wasserstein" if fn is not gaussian.wkl else "wasserstein",
                steps=128,  # the compilation the test above made
            ).value,
            rel=1e-7,
        )
    # singular compared law against a full reference: finite for WKL (flow reaches it in the
    # limit), infinite in the other order, like the support condition of KL(N1 || N2)
    rank1 = np.array([[1.0, 1.0], [1.0, 1.0]])
    assert np.isfinite(float(gaussian.wkl(N1[0], rank1, *N2)))
    assert np.isinf(float(gaussian.wkl(*N2, N1[0], rank1)))
