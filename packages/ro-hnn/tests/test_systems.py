"""The benchmark systems against independent formulas, and the reference solver."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from icml26.ro_hnn.systems import DampedCloth, FPUTChain, WaveEquation, make_system, simulate


def test_fput_potential_matches_a_loop(rng: np.random.Generator) -> None:
    sys = FPUTChain(n=7, beta=0.7)
    q = rng.standard_normal(7) * 0.1
    k = ((7 + 1) / np.pi) ** 2
    ext = np.concatenate([[0.0], q, [0.0]])
    expected = sum(
        k * (0.5 * (ext[i + 1] - ext[i]) ** 2 + 0.25 * 0.7 * k * (ext[i + 1] - ext[i]) ** 4)
        for i in range(8)
    )
    assert abs(float(sys.potential(jnp.asarray(q))) - expected) < 1e-12


@pytest.mark.parametrize("system", [FPUTChain(n=10, beta=0.0), WaveEquation(n=10)])
def test_linear_frequencies_are_the_textbook_ones(system) -> None:  # type: ignore[no-untyped-def]
    hess = np.asarray(jax.hessian(system.potential)(jnp.zeros(10)))
    omega = np.sqrt(np.sort(np.linalg.eigvalsh(hess)))
    k = np.arange(1, 11)
    expected = 2.0 * np.sqrt(system.kappa) * np.sin(k * np.pi / 22)
    np.testing.assert_allclose(omega, expected, rtol=1e-10)
    assert system.max_frequency >= omega.max()


def test_reference_solver_conserves_energy_and_is_accurate() -> None:
    sys = FPUTChain(n=8)
    x0 = sys.sample_initial_conditions(np.random.default_rng(0), 3)
    traj = np.asarray(simulate(sys, x0, 100))
    energy = np.asarray(jax.vmap(jax.vmap(sys.hamiltonian))(jnp.asarray(traj)))
    assert np.max(np.abs(energy - energy[:, :1]) / energy[:, :1]) < 1e-4
    fine = np.asarray(simulate(sys, x0, 100, substeps=4 * sys.substeps()))
    assert np.max(np.abs(fine - traj)) < 1e-3 * np.max(np.abs(traj))


def test_cloth_is_damped_and_springs_are_right() -> None:
    cloth = DampedCloth(nx=3, ny=3)
    a, _b, rest = cloth._springs
    assert len(a) == 6 + 6 + 8  # structural + shear
    np.testing.assert_allclose(sorted(set(np.round(rest, 12))), [0.5, np.sqrt(0.5)])
    assert cloth.dof == 3 * 7
    x0 = cloth.sample_initial_conditions(np.random.default_rng(0), 2)
    traj = simulate(cloth, x0, 200)
    energy = np.asarray(jax.vmap(jax.vmap(cloth.hamiltonian))(traj))
    assert np.all(energy > 0)
    assert np.all(
        np.diff(energy, axis=1) < 1e-4 * energy[:, :1]
    )  # never gains energy (beyond O(h²) wiggle)
    assert np.all(energy[:, -1] < 0.8 * energy[:, 0])


def test_initial_condition_families() -> None:
    rng = np.random.default_rng(0)
    low = FPUTChain(n=8, amplitude=0.3).sample_initial_conditions(np.random.default_rng(0), 4)
    np.testing.assert_allclose(low, 0.3 * FPUTChain(n=8).sample_initial_conditions(rng, 4))
    cloth = make_system("cloth", 3, velocity_std=0.0, tilt_max=0.5, damping=2.0)
    assert isinstance(cloth, DampedCloth)
    assert cloth.damping == 2.0
    x0 = cloth.sample_initial_conditions(np.random.default_rng(1), 5)
    assert np.all(x0[:, cloth.dof :] == 0.0)  # tilt-only family: at rest
    z = x0[:, : cloth.dof].reshape(5, -1, 3)[..., 2]  # heights: -y sin(theta) <= 0
    assert np.all(z <= 1e-12)
    assert np.all(z >= -np.sin(0.5) - 1e-12)


def test_bad_system_inputs_raise() -> None:
    with pytest.raises(ValueError, match="unknown system"):
        make_system("pendulum", 4)
    with pytest.raises(ValueError, match="n >= 2"):
        FPUTChain(n=1)
    with pytest.raises(ValueError, match="shape"):
        simulate(FPUTChain(n=4), np.zeros((2, 7)), 3)
    with pytest.raises(ValueError, match="amplitude"):
        FPUTChain(n=4, amplitude=0.0)
    with pytest.raises(ValueError, match="velocity_std"):
        DampedCloth(nx=3, ny=3, velocity_std=-1.0)
