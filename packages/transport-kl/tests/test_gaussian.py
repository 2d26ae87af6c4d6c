"""Closed forms: independent references, invariances, degenerate inputs, bad inputs."""

from __future__ import annotations

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.transport_kl import gaussian, reference

RTOL = 1e-9


def random_spd(rng: np.random.Generator, d: int, floor: float = 0.3) -> np.ndarray:
    x = rng.normal(size=(d, d))
    return x @ x.T / d + floor * np.eye(d)


def _rot(theta: float) -> np.ndarray:
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


def test_kl_matches_textbook_formula(pair) -> None:
    m1, s1, m2, s2 = pair
    np.testing.assert_allclose(
        gaussian.kl(m1, s1, m2, s2), reference.kl_np(m1, s1, m2, s2), rtol=RTOL
    )


def test_w2_matches_pot_batched() -> None:
    rng = np.random.default_rng(1)
    n, d = 5, 3
    m1, m2 = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    s1 = np.stack([random_spd(rng, d) for _ in range(n)])
    s2 = np.stack([random_spd(rng, d) for _ in range(n)])
    ours = np.asarray(gaussian.w2(m1, s1, m2, s2))
    pot = np.array(
        [
            float(ot.gaussian.bures_wasserstein_distance(m1[i], m2[i], s1[i], s2[i]))
            for i in range(n)
        ]
    )
    assert ours.shape == (n,)
    np.testing.assert_allclose(ours, pot, rtol=1e-7)


def test_wkl_matches_scipy_reference(pair) -> None:
    m1, s1, m2, s2 = pair
    np.testing.assert_allclose(
        gaussian.wkl(m1, s1, m2, s2), reference.wkl_np(m1, s1, m2, s2), rtol=1e-8
    )


def test_equal_covariance_formulas_any_scale() -> None:
    rng = np.random.default_rng(2)
    d = 3
    s = random_spd(rng, d)
    m1, m2 = rng.normal(size=d), rng.normal(size=d)
    dm = m2 - m1
    lam = 0.7
    for eps in (1.0, 1e-6, 1e-12):
        se = eps * s
        np.testing.assert_allclose(
            gaussian.kl(m1, se, m2, se), 0.5 * dm @ np.linalg.solve(se, dm), rtol=1e-8
        )
        np.testing.assert_allclose(gaussian.wkl(m1, se, m2, se), 0.5 * dm @ dm, rtol=1e-12)
        np.testing.assert_allclose(
            gaussian.kwkl(m1, se, m2, se, lam),
            0.5 * dm @ np.linalg.solve(se + lam * np.eye(d), dm),
            rtol=1e-10,
        )
        np.testing.assert_allclose(gaussian.w2(m1, se, m2, se), np.linalg.norm(dm), rtol=1e-7)


def test_singular_and_dirac_cases_are_finite_and_nan_free() -> None:
    m1, m2 = np.zeros(2), np.array([3.0, 4.0])
    zero = np.zeros((2, 2))
    rank1 = np.array([[1.0, 1.0], [1.0, 1.0]])
    # two Diracs: WKL = |d|^2 / 2 (Datar & Ay), W2 = |d|, KL infinite
    assert float(gaussian.wkl(m1, zero, m2, zero)) == pytest.approx(12.5)
    assert float(gaussian.w2(m1, zero, m2, zero)) == pytest.approx(5.0)
    assert np.isinf(gaussian.kl(m1, zero, m2, zero))
    assert float(gaussian.kwkl(m1, zero, m2, zero, 2.0)) == pytest.approx(12.5 / 2.0)
    # equal rank-deficient covariances
    assert float(gaussian.wkl(m1, rank1, m2, rank1)) == pytest.approx(12.5)
    # SPD reference (flow start), singular compared law (flow end): finite (reached in the limit)
    val = float(gaussian.wkl(m2, rank1, m1, np.eye(2)))
    assert np.isfinite(val)
    assert val > 0
    # ... and it is the limit of regularised targets
    near = float(gaussian.wkl(m2, rank1 + 1e-9 * np.eye(2), m1, np.eye(2)))
    assert val == pytest.approx(near, rel=1e-6)
    # a degenerate source cannot be inflated by a gradient flow: infinite
    assert np.isinf(gaussian.wkl(m2, np.eye(2), m1, rank1))
    # ill-conditioned (cond 1e12), rotated: no NaN, matches the regularised-in-closed-form value
    q = _rot(0.3)
    ill = q @ np.diag([1.0, 1e-12]) @ q.T
    for fn in (gaussian.wkl, gaussian.w2, gaussian.kl):
        assert np.isfinite(fn(m1, ill, m2, ill))
    assert float(gaussian.wkl(m1, ill, m2, ill)) == pytest.approx(12.5, rel=1e-9)


def test_scaled_kwkl_tends_to_wkl(pair) -> None:
    """Velocity (C + lam I) grad f ~ lam grad f: lam * KWKL_lam -> WKL as lam -> infinity."""
    m1, s1, m2, s2 = pair
    d1, d2 = np.diag(np.diag(s1)), np.diag(np.diag(s2))
    wkl = float(gaussian.wkl(m1, d1, m2, d2))
    errs = [abs(lam * float(gaussian.kwkl(m1, d1, m2, d2, lam)) - wkl) for lam in (1e2, 1e4)]
    assert errs[1] < errs[0] / 50
    assert errs[1] < 1e-3 * wkl


def test_kwkl_lam0_is_affine_invariant(pair) -> None:
    m1, s1, m2, s2 = pair
    a = np.array([[2.0, 0.7], [-0.3, 0.5]])
    c = np.array([1.0, -2.0])
    before = float(gaussian.kwkl(m1, s1, m2, s2, 0.0))
    after = float(gaussian.kwkl(a @ m1 + c, a @ s1 @ a.T, a @ m2 + c, a @ s2 @ a.T, 0.0))
    assert after == pytest.approx(before, rel=1e-9)
    # WKL is not affine invariant (it sees the sample-space geometry)
    w_before = float(gaussian.wkl(m1, s1, m2, s2))
    w_after = float(gaussian.wkl(a @ m1 + c, a @ s1 @ a.T, a @ m2 + c, a @ s2 @ a.T))
    assert abs(w_after - w_before) > 1e-2


def test_asymmetry_where_the_theory_says(pair) -> None:
    m1, s1, m2, s2 = pair
    assert float(gaussian.w2(m1, s1, m2, s2)) == pytest.approx(float(gaussian.w2(m2, s2, m1, s1)))
    for fn in (gaussian.kl, gaussian.wkl):
        assert abs(float(fn(m1, s1, m2, s2)) - float(fn(m2, s2, m1, s1))) > 1e-3
    # ... and symmetric for equal covariances
    for fn in (gaussian.kl, gaussian.wkl):
        assert float(fn(m1, s1, m2, s1)) == pytest.approx(float(fn(m2, s1, m1, s1)))


_floats = st.floats(-2.0, 2.0, allow_nan=False)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shift=st.tuples(_floats, _floats),
    angle=st.floats(0.0, 2 * np.pi),
)
def test_properties_nonneg_invariances_identity(seed: int, shift: tuple, angle: float) -> None:
    rng = np.random.default_rng(seed)
    m1, m2 = rng.normal(size=2), rng.normal(size=2)
    s1, s2 = random_spd(rng, 2), random_spd(rng, 2)
    c, q = np.asarray(shift), _rot(angle)
    lam = 0.5
    d1, d2 = np.diag(np.diag(s1)), np.diag(np.diag(s2))
    cases = {
        "kl": (gaussian.kl, (s1, s2)),
        "wkl": (gaussian.wkl, (s1, s2)),
        "w2": (lambda *a: gaussian.w2(*a, squared=True), (s1, s2)),
        "kwkl0": (lambda *a: gaussian.kwkl(*a, 0.0), (s1, s2)),
        "kwkl": (lambda *a: gaussian.kwkl(*a, lam), (d1, d2)),
    }
    for name, (fn, (a1, a2)) in cases.items():
        val = float(fn(m1, a1, m2, a2))
        assert val > 0, name
        # zero iff equal
        assert float(fn(m1, a1, m1, a1)) == pytest.approx(0.0, abs=1e-12), name
        # translation invariance
        assert float(fn(m1 + c, a1, m2 + c, a2)) == pytest.approx(val, rel=1e-9), name
        # rotation invariance (KWKL with lam > 0: rotating the commuting pair keeps it commuting)
        rot = float(fn(q @ m1, q @ a1 @ q.T, q @ m2, q @ a2 @ q.T))
        assert rot == pytest.approx(val, rel=1e-8), name


def test_batching_and_broadcasting() -> None:
    rng = np.random.default_rng(3)
    m1 = rng.normal(size=(4, 3, 2))
    s = random_spd(rng, 2)
    out = gaussian.wkl(m1, s, np.zeros(2), np.eye(2))
    assert out.shape == (4, 3)
    single = gaussian.wkl(m1[2, 1], s, np.zeros(2), np.eye(2))
    assert float(out[2, 1]) == pytest.approx(float(single))
    assert out.dtype == np.float64


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.zeros(2), np.eye(2), np.zeros(3), np.eye(3)), "dimension mismatch"),
        ((np.zeros(2), np.eye(3), np.zeros(2), np.eye(2)), "cov1 must have shape"),
        (
            (np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]), np.zeros(2), np.eye(2)),
            "not positive semi-definite",
        ),
        (
            (np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]]), np.zeros(2), np.eye(2)),
            "not symmetric",
        ),
        ((np.array([np.nan, 0.0]), np.eye(2), np.zeros(2), np.eye(2)), "mean1 contains NaN"),
        (
            (np.zeros(2), np.eye(2), np.zeros(2), np.full((2, 2), np.inf)),
            "cov2 contains NaN or inf",
        ),
    ],
)
def test_bad_inputs_raise_clear_errors(args: tuple, message: str) -> None:
    for fn in (gaussian.kl, gaussian.wkl, gaussian.w2):
        with pytest.raises(ValueError, match=message):
            fn(*args)


def test_kwkl_refuses_non_commuting_pairs_without_closed_form(pair) -> None:
    m1, s1, m2, s2 = pair
    with pytest.raises(ValueError, match="commuting"):
        gaussian.kwkl(m1, s1, m2, s2, 1.0)
    with pytest.raises(ValueError, match="lam must be finite and >= 0"):
        gaussian.kwkl(m1, s1, m2, s2, -1.0)


@pytest.mark.parametrize("name", ["wkl", "kwkl0"])
def test_gradients_match_finite_differences(pair, name: str) -> None:
    """Autodiff through the closed forms (eigh, svd, guarded branches) vs central differences."""
    import jax

    m1, s1, m2, s2 = pair
    fns = {
        "kl": gaussian.kl,
        "wkl": gaussian.wkl,
        "kwkl0": lambda *a: gaussian.kwkl(*a, 0.0),
        "w2sq": lambda *a: gaussian.w2(*a, squared=True),
    }
    fn = fns[name]
    sym = np.array([[0.3, -0.5], [-0.5, 0.8]])  # a symmetric direction for the covariance

    def scalar(t: np.ndarray) -> jax.Array:
        return fn(m1, s1, m2 + t[:2], s2 + t[2] * sym)

    with jax.enable_x64(True):
        grad = np.asarray(jax.grad(scalar)(np.zeros(3)))
    h = 1e-6
    fd = np.array([(float(scalar(h * e)) - float(scalar(-h * e))) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
