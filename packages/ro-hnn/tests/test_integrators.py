"""Störmer-Verlet / Strang / RK4 against closed forms and structural properties."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from icml26.ro_hnn.integrators import (
    cayley_damping,
    rk4_step,
    rollout,
    stormer_verlet_step,
    strang_step,
)

# A non-separable quadratic Hamiltonian H = ½ xᵀ S x (S SPD with q-p coupling).
_S = np.array(
    [
        [2.0, 0.3, 0.2, 0.1],
        [0.3, 1.0, 0.0, 0.2],
        [0.2, 0.0, 1.0, 0.1],
        [0.1, 0.2, 0.1, 0.5],
    ]
)


def quad_h(q: jax.Array, p: jax.Array) -> jax.Array:
    x = jnp.concatenate([q, p])
    return 0.5 * x @ jnp.asarray(_S) @ x


def separable_h(q: jax.Array, p: jax.Array) -> jax.Array:
    return 0.5 * p @ p + 0.25 * jnp.sum(q**4) + 0.5 * q @ q


def _step(h_fn, h, iterations):  # type: ignore[no-untyped-def]
    return lambda x: strang_step(h_fn, None, x, h, iterations=iterations)


def test_energy_of_quadratic_hamiltonian_is_preserved_over_long_runs() -> None:
    x0 = jnp.array([1.0, -0.5, 0.3, 0.8])
    traj = jax.jit(lambda x: rollout(_step(quad_h, 0.05, 30), x, 20_000))(x0)
    energy = jax.vmap(lambda x: quad_h(x[:2], x[2:]))(traj)
    rel = np.abs(np.asarray(energy) - float(energy[0])) / float(energy[0])
    assert rel.max() < 2e-3  # O(h²) oscillation, bounded
    # no secular drift: the last thousand steps are no worse than the first thousand
    assert rel[-1000:].max() < 1.5 * rel[:1000].max() + 1e-12


def test_matches_the_exact_flow_of_a_linear_system_to_second_order() -> None:
    x0 = np.array([1.0, -0.5, 0.3, 0.8])
    j = np.block([[np.zeros((2, 2)), np.eye(2)], [-np.eye(2), np.zeros((2, 2))]])
    exact = scipy.linalg.expm(j @ _S * 1.0) @ x0
    errors = []
    for steps in (20, 40):
        x = jax.jit(lambda x, s=steps: rollout(_step(quad_h, 1.0 / s, 40), x, s)[-1])(
            jnp.asarray(x0)
        )
        errors.append(np.linalg.norm(np.asarray(x) - exact))
    assert 3.5 < errors[0] / errors[1] < 4.5  # second order


def test_time_reversible() -> None:
    x0 = jnp.array([0.7, -0.2, 0.1, 0.4])

    @jax.jit
    def there_and_back(x: jax.Array) -> tuple[jax.Array, jax.Array]:
        fwd = strang_step(quad_h, None, x, 0.1, iterations=60)
        sep = strang_step(separable_h, None, x, 0.1, iterations=1)
        return (
            strang_step(quad_h, None, fwd, -0.1, iterations=60),
            strang_step(separable_h, None, sep, -0.1, iterations=1),
        )

    back, back_sep = there_and_back(x0)
    np.testing.assert_allclose(back, x0, atol=1e-12)
    np.testing.assert_allclose(back_sep, x0, atol=1e-14)


def test_step_map_is_symplectic() -> None:
    x0 = jnp.array([0.7, -0.2, 0.1, 0.4])
    jac = jax.jit(jax.jacfwd(lambda x: strang_step(quad_h, None, x, 0.1, iterations=60)))(x0)
    j = jnp.block([[jnp.zeros((2, 2)), jnp.eye(2)], [-jnp.eye(2), jnp.zeros((2, 2))]])
    np.testing.assert_allclose(jac.T @ j @ jac, j, atol=1e-12)


def test_separable_case_is_explicit_leapfrog() -> None:
    q, p, h = jnp.array([0.3, -0.4]), jnp.array([0.2, 0.5]), 0.1

    def force(q: jax.Array) -> jax.Array:
        return -(q**3) - q

    p_half = p + 0.5 * h * force(q)
    q1 = q + h * p_half
    p1 = p_half + 0.5 * h * force(q1)
    q_sv, p_sv = stormer_verlet_step(separable_h, q, p, h, iterations=1)
    np.testing.assert_allclose(q_sv, q1, atol=1e-15)
    np.testing.assert_allclose(p_sv, p1, atol=1e-15)


def test_cayley_damping_contracts_and_approximates_the_exponential() -> None:
    b = jnp.array([[1.0, 0.2], [0.1, 0.5]]) @ jnp.array([[2.0, 0.0], [0.0, 1.0]])  # D M^{-1}
    p = jnp.array([1.0, -1.0])
    for h in (0.1, 0.05):
        exact = scipy.linalg.expm(-np.asarray(b) * h) @ np.asarray(p)
        approx = np.asarray(cayley_damping(b, p, h))
        assert np.linalg.norm(approx - exact) < 0.1 * h**3 * 10
    assert float(jnp.linalg.norm(cayley_damping(b, p, 10.0))) < float(jnp.linalg.norm(p))
    np.testing.assert_allclose(
        cayley_damping(jnp.array([1.0, 2.0]), p, 0.1),
        cayley_damping(jnp.diag(jnp.array([1.0, 2.0])), p, 0.1),
    )


def test_damped_strang_step_dissipates_energy() -> None:
    def damping(q: jax.Array) -> jax.Array:
        return 0.3 * jnp.eye(2)

    x = jnp.array([1.0, 0.0, 0.0, 1.0])
    traj = jax.jit(
        lambda x: rollout(
            lambda y: strang_step(separable_h, damping, y, 0.05, iterations=1), x, 400
        )
    )(x)
    energy = np.asarray(jax.vmap(lambda y: separable_h(y[:2], y[2:]))(traj))
    assert energy[-1] < 0.1 * energy[0]


def test_rk4_is_fourth_order() -> None:
    a = jnp.array([[0.0, 1.0], [-1.0, -0.1]])
    x0 = jnp.array([1.0, 0.0])
    exact = scipy.linalg.expm(np.asarray(a)) @ np.asarray(x0)
    errs = [
        np.linalg.norm(
            np.asarray(rollout(lambda x, s=s: rk4_step(lambda y: a @ y, x, 1.0 / s), x0, s)[-1])
            - exact
        )
        for s in (10, 20)
    ]
    assert 14 < errs[0] / errs[1] < 18


def test_odd_state_and_bad_iterations_raise() -> None:
    with pytest.raises(ValueError, match="even length"):
        strang_step(quad_h, None, jnp.ones(3), 0.1)
    with pytest.raises(ValueError, match="iterations"):
        stormer_verlet_step(quad_h, jnp.ones(2), jnp.ones(2), 0.1, iterations=0)
