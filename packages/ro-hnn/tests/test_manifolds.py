"""Biorthogonal manifold (retraction, tangent projection) and SPD construction."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.ro_hnn.manifolds import (
    biorthogonal_defect,
    biorthogonal_retraction,
    biorthogonal_tangent_projection,
    random_biorthogonal,
    solve_sylvester_spd,
    spd_from_cholesky,
    tril_size,
)

dims = st.tuples(st.integers(1, 5), st.integers(0, 6)).map(
    lambda t: (t[0] + t[1], t[0])
)  # (n, d), d <= n


def _check_retraction(nd: tuple[int, int], seed: int, eps: float) -> None:
    n, d = nd
    k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
    phi, psi = random_biorthogonal(k1, n, d)
    assert float(biorthogonal_defect(phi, psi)) < 1e-13
    phi = phi + eps * jax.random.normal(k2, phi.shape)
    psi = psi + eps * jax.random.normal(k3, psi.shape)
    phi2, psi2 = biorthogonal_retraction(phi, psi)
    assert float(biorthogonal_defect(phi2, psi2)) < 1e-12
    # identity on the manifold
    _phi3, psi3 = biorthogonal_retraction(phi2, psi2)
    np.testing.assert_allclose(psi3, psi2, atol=1e-12)


# every new (n, d) compiles afresh: a few shapes in the default session, many in the slow one
@settings(max_examples=4, deadline=None)
@given(dims, st.integers(0, 2**31 - 1), st.floats(1e-3, 0.3))
def test_retraction_restores_the_constraint_exactly(
    nd: tuple[int, int], seed: int, eps: float
) -> None:
    _check_retraction(nd, seed, eps)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(dims, st.integers(0, 2**31 - 1), st.floats(1e-3, 0.3))
def test_retraction_restores_the_constraint_exactly_many_shapes(
    nd: tuple[int, int], seed: int, eps: float
) -> None:
    _check_retraction(nd, seed, eps)


def _reference_projection(
    phi: np.ndarray, psi: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Orthogonal projection onto ker C, C(X, Y) = Ψᵀ X + Yᵀ Φ, by brute-force linear algebra."""
    n, d = phi.shape
    cols = []
    for k in range(2 * n * d):
        e = np.zeros(2 * n * d)
        e[k] = 1.0
        ex, ey = e[: n * d].reshape(n, d), e[n * d :].reshape(n, d)
        cols.append((psi.T @ ex + ey.T @ phi).ravel())
    c = np.stack(cols, axis=1)  # (d², 2nd)
    v = np.concatenate([x.ravel(), y.ravel()])
    proj = v - c.T @ np.linalg.lstsq(c @ c.T, c @ v, rcond=None)[0]
    return proj[: n * d].reshape(n, d), proj[n * d :].reshape(n, d)


@settings(max_examples=6, deadline=None)
@given(dims, st.integers(0, 2**31 - 1))
def test_tangent_projection_matches_brute_force(nd: tuple[int, int], seed: int) -> None:
    n, d = nd
    keys = jax.random.split(jax.random.key(seed), 5)
    phi, psi = random_biorthogonal(keys[0], n, d)
    # a generic (non-orthonormal) point of the manifold
    phi = phi @ (jnp.eye(d) + 0.3 * jax.random.normal(keys[1], (d, d)))
    phi, psi = biorthogonal_retraction(phi, psi + 0.2 * jax.random.normal(keys[2], psi.shape))
    x, y = jax.random.normal(keys[3], (n, d)), jax.random.normal(keys[4], (n, d))
    px, py = biorthogonal_tangent_projection(phi, psi, x, y)
    np.testing.assert_allclose(psi.T @ px + py.T @ phi, 0.0, atol=1e-10)
    rx, ry = _reference_projection(*(np.asarray(a) for a in (phi, psi, x, y)))
    np.testing.assert_allclose(px, rx, atol=1e-9)
    np.testing.assert_allclose(py, ry, atol=1e-9)


def test_sylvester_against_scipy(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((3, 3))
    g, f, c = a @ a.T + np.eye(4), b @ b.T + np.eye(3), rng.standard_normal((4, 3))
    np.testing.assert_allclose(
        solve_sylvester_spd(g, f, c), scipy.linalg.solve_sylvester(g, f, c), atol=1e-12
    )


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**31 - 1), st.floats(0.1, 30.0))
def test_cholesky_construction_is_spd_for_any_input(d: int, seed: int, scale: float) -> None:
    raw = scale * jax.random.normal(jax.random.key(seed), (tril_size(d),))
    m = np.asarray(spd_from_cholesky(raw, d))
    np.testing.assert_allclose(m, m.T, atol=1e-12 * max(1.0, np.abs(m).max()))
    assert np.linalg.eigvalsh(m).min() > 0


def test_bad_shapes_raise() -> None:
    with pytest.raises(ValueError, match="Cholesky entries"):
        spd_from_cholesky(jnp.ones(5), 3)
    with pytest.raises(ValueError, match="0 < d <= n"):
        random_biorthogonal(jax.random.key(0), 2, 3)
