"""Geometric HNN, plain HNN: SPD inverse mass, vector field = J ∇H (finite differences), dissipation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.ro_hnn.hamiltonian import GeometricHNN, PlainHNN
from icml26.ro_hnn.integrators import rollout


def _fd_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
    f = jax.jit(f)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(jnp.asarray(x + e))) - float(f(jnp.asarray(x - e)))) / (2 * eps)
    return g


def _j_grad(energy, x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    g = _fd_grad(energy, x)
    d = x.size // 2
    return np.concatenate([g[d:], -g[:d]])


@pytest.mark.parametrize("d", [1, pytest.param(4, marks=pytest.mark.slow)])
def test_inverse_mass_and_damping_are_spd_for_random_inputs(d: int) -> None:
    hnn = GeometricHNN(d, hidden=(8,), damped=True, rngs=nnx.Rngs(d))
    graphdef, state = nnx.split(hnn)

    @jax.jit
    def matrices(state: nnx.State, offset: jax.Array, q: jax.Array) -> tuple[jax.Array, jax.Array]:
        model = nnx.merge(graphdef, state)
        model.inverse_mass.offset[...] = offset  # push the network away from its initialisation
        return model.mass_inverse(q), model.damping_matrix(q)

    @settings(max_examples=25, deadline=None)
    @given(st.integers(0, 10_000), st.floats(0.1, 20.0))
    def check(seed: int, scale: float) -> None:
        k1, k2 = jax.random.split(jax.random.key(seed))
        offset = 3.0 * jax.random.normal(k1, hnn.inverse_mass.offset.shape)
        for m in matrices(state, offset, scale * jax.random.normal(k2, (d,))):
            m = np.asarray(m)
            np.testing.assert_allclose(m, m.T, atol=1e-12 * max(1.0, np.abs(m).max()))
            assert np.linalg.eigvalsh(m).min() > 0

    check()


def test_geometric_hnn_vector_field_is_j_grad_h() -> None:
    hnn = GeometricHNN(3, hidden=(8, 8), rngs=nnx.Rngs(0))
    x = np.random.default_rng(0).standard_normal(6)
    np.testing.assert_allclose(
        jax.jit(hnn.vector_field)(jnp.asarray(x)), _j_grad(hnn.energy, x), rtol=1e-6, atol=1e-8
    )


def test_plain_hnn_vector_field_is_j_grad_h() -> None:
    hnn = PlainHNN(4, hidden=(16,), rngs=nnx.Rngs(1))
    x = np.random.default_rng(1).standard_normal(8)
    np.testing.assert_allclose(
        jax.jit(hnn.vector_field)(jnp.asarray(x)), _j_grad(hnn.energy, x), rtol=1e-6, atol=1e-8
    )


def test_closed_form_velocity_equals_autodiff() -> None:
    hnn = GeometricHNN(3, hidden=(8,), rngs=nnx.Rngs(2))
    q, p = jnp.array([0.1, -0.3, 0.7]), jnp.array([1.0, 0.5, -0.2])
    np.testing.assert_allclose(
        hnn.velocity(q, p), jax.grad(hnn.hamiltonian, argnums=1)(q, p), atol=1e-13
    )


def test_learned_damping_never_creates_energy() -> None:
    hnn = GeometricHNN(3, hidden=(8,), damped=True, rngs=nnx.Rngs(3))
    xs = jax.random.normal(jax.random.key(0), (16, 6))
    # compiled: eager dispatch of the MLPs' gradients costs tens of seconds of small compiles
    dhdt = jax.jit(jax.vmap(lambda x: jax.grad(hnn.energy)(x) @ hnn.vector_field(x)))(xs)
    assert float(jnp.max(dhdt)) <= 1e-12  # = -∂_pHᵀ D ∂_pH
    x = jnp.array([0.3, 0.1, -0.2, 1.0, 0.5, -0.5])
    traj = jax.jit(lambda y: rollout(lambda s: hnn.step(s, 0.05), y, 200))(x)
    energies = np.asarray(jax.jit(jax.vmap(hnn.energy))(traj))
    assert energies[-1] < energies[0]


def test_conservative_latent_rollout_keeps_the_learned_energy() -> None:
    hnn = GeometricHNN(2, hidden=(8,), iterations=10, rngs=nnx.Rngs(4))
    x = jnp.array([0.3, -0.1, 0.4, 0.2])
    traj = jax.jit(lambda y: rollout(lambda s: hnn.step(s, 0.02), y, 500))(x)
    energies = np.asarray(jax.jit(jax.vmap(hnn.energy))(traj))
    assert np.max(np.abs(energies - energies[0])) / abs(energies[0]) < 1e-3
