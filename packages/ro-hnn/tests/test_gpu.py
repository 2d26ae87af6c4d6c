"""Device consistency on a JAX GPU (skipped without one, e.g. without ``jax[cuda12]``;
``nox -s gpu`` runs them on a GPU machine).

Every model is built twice from one seed, once under ``jax.default_device(cpu)`` and once under
the GPU, and fed the same data (``jax.device_put``): outputs must be committed to the GPU
(``.devices()``) and equal the CPU's. The tests run in float64 (``conftest.py``), where XLA's
different reduction orders on the two backends leave ~1e-13 relative differences: ``rtol=1e-8``
for forward passes and short rollouts, ``1e-6`` after a few Adam and Riemannian steps (the
retraction's solves compound them a little).

The package has no ``device`` setting: like every JAX program, ``icml26 run ro-hnn`` runs on
JAX's default device (the GPU when ``jax[cuda12]`` is installed); ``nox -s gpu`` runs its
smoke job that way, and ``env.json`` records the backend.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from icml26.ro_hnn.autoencoder import symplecticity_defect
from icml26.ro_hnn.config import MODELS, Architecture
from icml26.ro_hnn.integrators import rk4_step, rollout, stormer_verlet_step
from icml26.ro_hnn.models import build_model
from icml26.ro_hnn.systems import FPUTChain, simulate
from icml26.ro_hnn.train import Trainer, TrainSettings

pytestmark = pytest.mark.gpu

TINY = Architecture(
    latent_dof=2,
    ae_hidden=(4,),
    hnn_hidden=(8,),
    node_hidden=(8,),
    ae_mlp_hidden=(8,),
    full_hidden=(8,),
    iterations=2,
)
SETTINGS = TrainSettings(steps=6, batch=4, window=2, lr=1e-2, chunk=3, checkpoint_every=100)


def _cpu() -> jax.Device:
    return jax.devices("cpu")[0]


def _on(x: jax.Array, device: jax.Device) -> None:
    assert x.devices() == {device}, f"array on {x.devices()}, expected {device}"


def _close(a: jax.Array, b: jax.Array, rtol: float = 1e-8) -> None:
    a, b = np.asarray(jax.device_get(a)), np.asarray(jax.device_get(b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(float(np.abs(b).max()), 1.0))


def _build(kind: str, fput_data, device: jax.Device):  # type: ignore[no-untyped-def]
    _, ds, basis = fput_data
    with jax.default_device(device):
        return build_model(
            kind,
            n=ds.n,
            dt=ds.train.dt,
            damped=False,
            arch=TINY,
            basis=jnp.asarray(basis),
            q_ref=jnp.asarray(ds.q_ref),
            seed=0,
        )


@pytest.mark.parametrize("kind", MODELS)
def test_model_rollout_on_gpu_matches_cpu(kind: str, fput_data, jax_gpu) -> None:  # type: ignore[no-untyped-def]
    _, ds, _ = fput_data
    on_gpu, on_cpu = _build(kind, fput_data, jax_gpu), _build(kind, fput_data, _cpu())
    x0 = np.asarray(ds.test.x[0, 0])
    z_g, x_g = on_gpu.predict(jax.device_put(x0, jax_gpu), 6)
    z_c, x_c = on_cpu.predict(jax.device_put(x0, _cpu()), 6)
    _on(z_g, jax_gpu)
    _on(x_g, jax_gpu)
    _close(z_g, z_c)
    _close(x_g, x_c)
    if kind == "rohnn":  # the exact symplectic structure holds on the GPU too
        assert float(symplecticity_defect(on_gpu.decode, z_g[0])) < 1e-11


def test_training_on_gpu_matches_cpu(fput_data, jax_gpu) -> None:  # type: ignore[no-untyped-def]
    _, ds, _ = fput_data
    losses = {}
    models = {}
    for name, device in (("gpu", jax_gpu), ("cpu", _cpu())):
        model = _build("rohnn", fput_data, device)
        with jax.default_device(device):
            trainer = Trainer(model, ds.train.x, ds.x_ref, SETTINGS, seed=0)
            losses[name] = trainer.fit()
        _on(trainer.data, device)
        models[name] = model
    np.testing.assert_allclose(losses["gpu"], losses["cpu"], rtol=1e-6)
    x0 = np.asarray(ds.test.x[0, 0])
    _, xg = models["gpu"].predict(jax.device_put(x0, jax_gpu), 4)
    _, xc = models["cpu"].predict(jax.device_put(x0, _cpu()), 4)
    _on(xg, jax_gpu)
    _close(xg, xc, rtol=1e-6)


def test_reference_simulation_on_gpu_matches_cpu(jax_gpu) -> None:  # type: ignore[no-untyped-def]
    system = FPUTChain(n=6, modes=2)
    x0 = np.random.default_rng(0).normal(scale=0.1, size=(3, 12))
    got = simulate(system, jax.device_put(x0, jax_gpu), 5)
    _on(got, jax_gpu)
    _close(got, simulate(system, jax.device_put(x0, _cpu()), 5))


def test_integrators_on_gpu_match_cpu(jax_gpu) -> None:  # type: ignore[no-untyped-def]
    def field(x: jax.Array) -> jax.Array:  # a pendulum: (q, p) -> (p, -sin q)
        q, p = jnp.split(x, 2)
        return jnp.concatenate([p, -jnp.sin(q)])

    def verlet(x: jax.Array) -> jax.Array:
        q, p = jnp.split(x, 2)
        qn, pn = stormer_verlet_step(
            lambda q_, p_: 0.5 * jnp.sum(p_**2) - jnp.sum(jnp.cos(q_)), q, p, 0.05
        )
        return jnp.concatenate([qn, pn])

    x0 = np.array([0.4, -0.2, 0.1, 0.3])
    for step in (lambda x: rk4_step(field, x, 0.05), verlet):
        got = rollout(step, jax.device_put(x0, jax_gpu), 20)
        _on(got, jax_gpu)
        _close(got, rollout(step, jax.device_put(x0, _cpu()), 20))
