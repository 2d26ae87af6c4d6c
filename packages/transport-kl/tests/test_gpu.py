"""Device consistency on a JAX GPU (skipped without one, e.g. without ``jax[cuda12]``;
``nox -s gpu`` runs them on a GPU machine).

Each computation runs twice, under ``jax.default_device(cpu)`` with CPU inputs and under the
GPU with inputs put there (``jax.device_put``). The JAX results (the closed-form divergences,
the Student-t samples) must be committed to the GPU (``.devices()``); every result must equal
the CPU's. Everything is float64 (the package's ``x64`` decorator), where the two XLA backends
differ only in reduction order and transcendental ulps: ``rtol=1e-9`` for closed forms,
``1e-7`` for iterated solves and rollouts (shooting, Riccati doubling, RK4, closed loops).
JAX's counter-based PRNG draws the same numbers on every backend, so the Monte-Carlo parts are
compared like the rest. Functions that return NumPy (control, Kalman flows) convert at that
boundary by design.

The package has no ``device`` setting: ``icml26 run transport-kl`` runs on JAX's default
device (the GPU when ``jax[cuda12]`` is installed) and records it in ``env.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

from icml26.transport_kl import cartpole, control, elliptic, flow, gaussian, kalman

pytestmark = pytest.mark.gpu

M1, M2 = np.array([0.2, -0.4]), np.array([1.0, 0.7])
S1 = np.array([[1.5, 0.4], [0.4, 0.8]])
S2 = np.array([[0.6, -0.2], [-0.2, 1.1]])
D1, D2 = np.diag([1.5, 0.3]), np.diag([0.4, 2.0])  # commuting: kwkl has a closed form


def _cpu() -> jax.Device:
    return jax.devices("cpu")[0]


def _on(x: Any, device: jax.Device) -> None:
    assert isinstance(x, jax.Array), f"expected a JAX array, got {type(x).__name__}"
    assert x.devices() == {device}, f"array on {x.devices()}, expected {device}"


def _both(fn: Callable[..., Any], gpu: jax.Device, *args: Any) -> tuple[Any, Any]:
    """``fn(*args)`` on the GPU (inputs put there) and on the CPU, inputs kept float64."""
    with jax.enable_x64(True), jax.default_device(gpu):
        on_gpu = fn(*(jax.device_put(a, gpu) for a in args))
    with jax.enable_x64(True), jax.default_device(_cpu()):
        on_cpu = fn(*(jax.device_put(a, _cpu()) for a in args))
    return on_gpu, on_cpu


def _close(a: Any, b: Any, rtol: float) -> None:
    a, b = np.asarray(jax.device_get(a)), np.asarray(jax.device_get(b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(float(np.abs(b).max()), 1e-300))


@pytest.mark.parametrize(
    ("name", "fn", "covs"),
    [
        ("kl", gaussian.kl, (S1, S2)),
        ("wkl", gaussian.wkl, (S1, S2)),
        ("w2", gaussian.w2, (S1, S2)),
        ("kwkl_lam0", lambda m1, s1, m2, s2: gaussian.kwkl(m1, s1, m2, s2, 0.0), (S1, S2)),
        ("kwkl_commuting", lambda m1, s1, m2, s2: gaussian.kwkl(m1, s1, m2, s2, 0.7), (D1, D2)),
    ],
)
def test_closed_forms_on_gpu_match_cpu(name: str, fn: Callable[..., Any], covs, jax_gpu) -> None:  # type: ignore[no-untyped-def]
    got, want = _both(fn, jax_gpu, M1, covs[0], M2, covs[1])
    _on(got, jax_gpu)
    assert got.dtype == np.float64
    _close(got, want, rtol=1e-9)
    # a batch of pairs (leading axes broadcast) stays on the GPU too
    batch = (np.stack([M1, M2]), np.stack(covs), np.stack([M2, M1]), np.stack(covs[::-1]))
    got_b, want_b = _both(fn, jax_gpu, *batch)
    _on(got_b, jax_gpu)
    assert got_b.shape == (2,)
    _close(got_b, want_b, rtol=1e-9)


@pytest.mark.parametrize("geometry", ["wasserstein", "kalman_wasserstein"])
def test_flow_divergence_on_gpu_matches_cpu(geometry: str, jax_gpu) -> None:  # type: ignore[no-untyped-def]
    lam = 0.5 if geometry == "kalman_wasserstein" else 0.0
    covs = (D1, D2) if lam else (S1, S2)

    def run(m1, s1, m2, s2):  # type: ignore[no-untyped-def]
        return flow.flow_divergence(m1, s1, m2, s2, geometry=geometry, lam=lam, steps=64)  # type: ignore[arg-type]

    got, want = _both(run, jax_gpu, M1, covs[0], M2, covs[1])
    assert got.value == pytest.approx(want.value, rel=1e-7)
    _close(got.A, want.A, rtol=1e-7)
    closed = gaussian.kwkl(M1, covs[0], M2, covs[1], lam) if lam else gaussian.wkl(M1, S1, M2, S2)
    assert got.value == pytest.approx(float(closed), rel=1e-6)  # the flow definition, on the GPU


def test_student_t_particles_on_gpu_match_cpu(jax_gpu) -> None:  # type: ignore[no-untyped-def]
    def sample(m, s):  # type: ignore[no-untyped-def]
        return elliptic.sample_student_t(jax.random.key(0), m, s, 5.0, 256, moment_match=True)

    got, want = _both(sample, jax_gpu, M1, S1)
    _on(got, jax_gpu)
    _close(got, want, rtol=1e-9)
    k = elliptic.student_t_kappa(5.0)
    pot = flow.flow_divergence(M1, k * S1, M2, k * S2, geometry="wasserstein", steps=64)
    res_g, res_c = _both(
        lambda x, a, b: elliptic.particle_flow_divergence(x, a, b, steps=32),
        jax_gpu,
        want,
        pot.A,
        pot.b,
    )
    assert res_g.value == pytest.approx(res_c.value, rel=1e-7)
    _close(res_g.final_cov, res_c.final_cov, rtol=1e-7)


def test_lqr_and_monte_carlo_costs_on_gpu_match_cpu(jax_gpu) -> None:  # type: ignore[no-untyped-def]
    a, b = control.double_integrator(0.1)
    sw = 0.01 * np.eye(4)
    x0 = np.random.default_rng(0).normal(size=(64, 4))
    kw = {"q_eval": np.eye(4), "r_eval": np.eye(2), "gamma": 0.95, "horizon": 100}
    results = {}
    for name, device in (("gpu", jax_gpu), ("cpu", _cpu())):
        with jax.default_device(device):
            r = control.penalty_matrix("wkl", b, sw, lam=0.5)
            sol = control.solve_discounted_riccati(a, b, np.eye(4), r + 0.1 * np.eye(2), 0.95)
            cost = control.simulate_linear(a, b, sol.K, sw, x0=x0, key=jax.random.key(0), **kw)
        assert sol.ok
        results[name] = (sol, cost)
    (sg, cg), (sc, cc) = results["gpu"], results["cpu"]
    _close(sg.P, sc.P, rtol=1e-7)
    _close(sg.K, sc.K, rtol=1e-7)
    _close(cg, cc, rtol=1e-7)


def test_cartpole_rollouts_on_gpu_match_cpu(jax_gpu) -> None:  # type: ignore[no-untyped-def]
    p = cartpole.CartPole()
    a, b = cartpole.linearise(p)
    sol = control.solve_discounted_riccati(a, b, np.eye(4), np.eye(1), 0.99)
    x0 = np.array([[0.1, 0.0, 0.1, 0.0], [-0.2, 0.1, -0.1, 0.0]] * 2)
    kw = {"noise_cov": 1e-4 * np.eye(4), "horizon": 50, "q": np.eye(4), "r": 0.01}
    kw |= {"gamma": 0.99, "force_limit": 50.0}
    outs = {}
    for name, device in (("gpu", jax_gpu), ("cpu", _cpu())):
        with jax.default_device(device):
            outs[name] = cartpole.rollouts(p, sol.K, x0=x0, key=jax.random.key(3), **kw)
    for key in ("cost", "theta", "x"):
        _close(outs["gpu"][key], outs["cpu"][key], rtol=1e-7)


def test_ensemble_kalman_flow_on_gpu_matches_cpu(jax_gpu) -> None:  # type: ignore[no-untyped-def]
    problem = kalman.make_inverse_problem(0)
    ens = np.random.default_rng(1).normal(size=(16, problem.H.shape[1]))
    outs = {}
    for name, device in (("gpu", jax_gpu), ("cpu", _cpu())):
        with jax.default_device(device):
            outs[name] = kalman.ensemble_flow(problem, ens, lam=0.5, t_end=2.0, steps=50)
    _close(outs["gpu"], outs["cpu"], rtol=1e-7)
