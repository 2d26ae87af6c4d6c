"""Geometric HNN, plain HNN: SPD inverse mass, vector field = J ∇H (finite differences), dissipation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.ro_hnn.hamiltonian import GeometricHNN, PlainHNN


def _fd_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
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


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 5), st.integers(0, 10_000), st.floats(0.1, 20.0))
def test_inverse_mass_is_spd_for_random_inputs(d: int, seed: int, scale: float) -> None:
    hnn = GeometricHNN(d, hidden=(8,), rngs=nnx.Rngs(seed))
    # push the network away from its initialisation
    hnn.inverse_mass.offset[...] = jax.random.normal(jax.random.key(seed), hnn.inverse_mass.offset.shape)
    q = scale * jax.random.normal(jax.random.key(seed + 1), (d,))
    m = np.asarray(hnn.inverse_mass(q))
    np.testing.assert_allclose(m, m.T, atol=1e-12 * max(1.0, np.abs(m).max()))
    assert np.linalg.eigvalsh(m).min() > 0


def test_geometric_hnn_vector_field_is_j_grad_h() -> None:
    hnn = GeometricHNN(3, hidden=(8, 8), rngs=nnx.Rngs(0))
    x = np.random.default_rng(0).standard_normal(6)
    np.testing.assert_allclose(hnn.vector_field(jnp.asarray(x)), _j_grad(hnn.energy, x), rtol=1e-6, atol=1e-8)


def test_plain_hnn_vector_field_is_j_grad_h() -> None:
    hnn = PlainHNN(4, hidden=(16,), rngs=nnx.Rngs(1))
    x = np.random.default_rng(1).standard_normal(8)
    np.testing.assert_allclose(hnn.vector_field(jnp.asarray(x)), _j_grad(hnn.energy, x), rtol=1e-6, atol=1e-8)


def test_closed_form_velocity_equals_autodiff() -> None:
    hnn = GeometricHNN(3, hidden=(8,), rngs=nnx.Rngs(2))
    q, p = jnp.array([0.1, -0.3, 0.7]), jnp.array([1.0, 0.5, -0.2])
    np.testing.assert_allclose(hnn.velocity(q, p), jax.grad(hnn.hamiltonian, argnums=1)(q, p), atol=1e-13)


def test_learned_damping_never_creates_energy() -> None:
    hnn = GeometricHNN(3, hidden=(8,), damped=True, rngs=nnx.Rngs(3))
    for seed in range(5):
        x = jax.random.normal(jax.random.key(seed), (6,))
        dhdt = jax.grad(hnn.energy)(x) @ hnn.vector_field(x)  # = -∂_pHᵀ D ∂_pH
        assert float(dhdt) <= 1e-12
    x = jnp.array([0.3, 0.1, -0.2, 1.0, 0.5, -0.5])
    traj = [x]
    for _ in range(200):
        traj.append(hnn.step(traj[-1], 0.05))
    energies = np.asarray([hnn.energy(y) for y in traj])
    assert energies[-1] < energies[0]


def test_conservative_latent_rollout_keeps_the_learned_energy() -> None:
    hnn = GeometricHNN(2, hidden=(8,), iterations=20, rngs=nnx.Rngs(4))
    step = jax.jit(lambda y: hnn.step(y, 0.02))
    x = jnp.array([0.3, -0.1, 0.4, 0.2])
    e0 = float(hnn.energy(x))
    worst = 0.0
    for _ in range(500):
        x = step(x)
        worst = max(worst, abs(float(hnn.energy(x)) - e0) / abs(e0))
    assert worst < 1e-3
