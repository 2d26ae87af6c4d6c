"""PSD-Galerkin against the exact reduced linear flow, and the data's frequency scale."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from icml26.ro_hnn.data import Dataset, Trajectories, fit_reduction
from icml26.ro_hnn.hamiltonian import GeometricHNN
from icml26.ro_hnn.models import psd_galerkin
from icml26.ro_hnn.systems import WaveEquation


def test_galerkin_step_is_the_exact_flow_of_the_projected_linear_wave() -> None:
    system = WaveEquation(n=8, dt=0.05)
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.standard_normal((8, 3)))[0]
    stiffness = (8 + 1) ** 2 * (2 * np.eye(8) - np.eye(8, k=1) - np.eye(8, k=-1))
    k_r = basis.T @ stiffness @ basis  # H(Vq, Vp) = ½|p|² + ½ qᵀ Vᵀ K V q (M = I)
    generator = np.block([[np.zeros((3, 3)), np.eye(3)], [-k_r, np.zeros((3, 3))]])
    z0 = rng.standard_normal(6)
    with jax.enable_x64(True):
        exact = np.asarray(jax.scipy.linalg.expm(jnp.asarray(system.dt * generator))) @ z0
    with jax.enable_x64(True):
        model = psd_galerkin(system.hamiltonian, basis, np.zeros(8), dt=system.dt, substeps=64)
        z1 = np.asarray(model.latent_step(jnp.asarray(z0)))
    # Störmer-Verlet is second order: 64 substeps of 0.05 / 64 leave an error ~1e-5
    np.testing.assert_allclose(z1, exact, atol=1e-4 * np.abs(exact).max())
    assert not np.allclose(z1, z0, atol=1e-2)  # it moved


def test_reduction_frequency_is_rms_p_over_rms_q_of_a_harmonic_mode() -> None:
    n, omega, dt = 6, 3.0, 2 * np.pi / 3.0 / 40  # 40 samples per period
    t = dt * np.arange(41)
    shape = np.sin(np.pi * np.arange(1, n + 1) / (n + 1))
    shape /= np.linalg.norm(shape)
    amplitudes = np.array([0.5, 1.0, 2.0])[:, None]
    q = amplitudes[..., None] * np.cos(omega * t)[None, :, None] * shape
    p = -omega * amplitudes[..., None] * np.sin(omega * t)[None, :, None] * shape
    x = np.concatenate([q, p], axis=-1)
    ds = Dataset("mode", Trajectories(x[:, :40], dt), Trajectories(x, dt), 4, False)
    red = fit_reduction(ds, 1)
    # q_ref (the mean training configuration) is 0 over whole periods
    assert red.frequency == pytest.approx(omega, rel=1e-9)


def test_potential_scales_with_the_frequency_squared() -> None:
    q = jnp.asarray([0.3, -0.2])
    slow = GeometricHNN(2, hidden=(8,), rngs=nnx.Rngs(5))
    fast = GeometricHNN(2, hidden=(8,), frequency=7.0, rngs=nnx.Rngs(5))
    assert float(fast.potential(q)) == pytest.approx(49.0 * float(slow.potential(q)), rel=1e-12)
    with pytest.raises(ValueError, match="frequency"):
        GeometricHNN(2, frequency=0.0, rngs=nnx.Rngs(0))
