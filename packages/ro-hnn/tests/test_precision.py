"""float64 by a context-local switch (never a silent float32 model), evaluation compiled once
per shape, and an optax transformation accepted by the trainer."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from icml26.ro_hnn import evaluate as ev
from icml26.ro_hnn.models import build_model
from icml26.ro_hnn.train import Trainer, TrainSettings


def test_float64_inside_a_float32_context(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    """The fast variant of the fresh-process test below: inside the caller's float32
    (``jax.enable_x64(False)``), the model, its predictions and evaluation are float64, no
    truncation warning is raised, the decoder is symplectic to round-off and the caller's setting
    is untouched (the same shapes as ``test_evaluation_compiles_once_per_shape``: no new compile)."""
    system, ds, basis = fput_data
    kw = {"n": ds.n, "dt": system.dt, "damped": False, "arch": tiny, "basis": basis}
    with warnings.catch_warnings(), jax.enable_x64(False):
        warnings.simplefilter("error")  # any truncation warning fails the test
        assert jnp.zeros(1).dtype == jnp.float32
        model = build_model("rohnn", q_ref=ds.q_ref, seed=2, **kw)
        out = ev.evaluate_model(
            model, ds.test.x, ds.train.x, ds.x_ref, ds.horizon, energy=system.hamiltonian
        )
        z, x = model.predict(ds.test.x[0, 0], 3)
        assert z.dtype == x.dtype == np.float64, (z.dtype, x.dtype)
        assert out["symplecticity_defect"] < 1e-12, out["symplecticity_defect"]
        assert jnp.zeros(1).dtype == jnp.float32  # the caller's setting is untouched


@pytest.mark.slow
def test_float64_without_the_global_switch() -> None:
    """In a fresh process with JAX's default float32: data, model, training and evaluation are
    float64, no float64 -> float32 truncation warning is raised, and the decoder is symplectic
    to round-off (float32 gave a defect of ~5e-7)."""
    code = textwrap.dedent(
        """
        import warnings
        warnings.simplefilter("error")  # any truncation warning fails the run
        import jax, numpy as np
        assert not jax.config.jax_enable_x64
        from icml26.ro_hnn.config import Architecture
        from icml26.ro_hnn.data import fit_reduction, make_dataset
        from icml26.ro_hnn.evaluate import evaluate_model
        from icml26.ro_hnn.models import build_model
        from icml26.ro_hnn.systems import FPUTChain
        from icml26.ro_hnn.train import Trainer, TrainSettings
        system = FPUTChain(n=6, modes=2)
        ds = make_dataset(system, n_train=4, n_test=2, horizon=4, seed=0)
        assert ds.train.x.dtype == np.float64
        arch = Architecture(latent_dof=2, ae_hidden=(4,), hnn_hidden=(8,), iterations=1)
        red = fit_reduction(ds, 2, 4)
        model = build_model("rohnn", n=6, dt=system.dt, damped=False, arch=arch,
                            basis=red.basis, q_ref=ds.q_ref, latent_scale=red.latent_scale)
        Trainer(model, ds.train.x, ds.x_ref, TrainSettings(steps=2, chunk=2, batch=2, window=2,
                w_energy=1.0), energy=system.hamiltonian).fit()
        out = evaluate_model(model, ds.test.x, ds.train.x, ds.x_ref, 4, energy=system.hamiltonian)
        z, x = model.predict(ds.test.x[0, 0], 3)
        assert z.dtype == x.dtype == np.float64, (z.dtype, x.dtype)
        assert out["symplecticity_defect"] < 1e-12, out["symplecticity_defect"]
        assert not jax.config.jax_enable_x64  # the caller's setting is untouched
        print("ok")
        """
    )
    env = {"JAX_ENABLE_X64": "0", "ICML26_QUIET": "1", "PATH": "/usr/bin:/bin"}
    cache = jax.config.jax_compilation_cache_dir  # the session's persistent cache (conftest)
    if cache:
        env |= {
            "JAX_COMPILATION_CACHE_DIR": cache,
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5",
        }
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip().endswith("ok")


def test_float32_parameters_are_refused(fput_data, tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from icml26.ro_hnn import models

    system, ds, basis = fput_data
    original = models._build

    def low(*a, **k):  # type: ignore[no-untyped-def]
        m = original(*a, **k)
        layer = m.autoencoder.layers[0]
        layer.b.set_value(layer.b.get_value().astype(np.float32))
        return m

    kw = {"n": ds.n, "dt": system.dt, "damped": False, "arch": tiny, "basis": basis}
    monkeypatch.setattr(models, "_build", low)
    with pytest.raises(TypeError, match="not float64"):
        build_model("rohnn", q_ref=ds.q_ref, **kw)


def _cache_sizes() -> dict[str, int]:
    fns = {
        "predict": ev.predict_batch,
        "reconstruct": ev._reconstruct,
        "defects": ev._defects,
        "true_energy": ev._true_energy,
        "learned_energy": ev._learned_energy,
    }
    return {k: f._cache_size() for k, f in fns.items()}


def test_evaluation_compiles_once_per_shape(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    system, ds, basis = fput_data
    kw = {
        "n": ds.n,
        "dt": system.dt,
        "damped": False,
        "arch": tiny,
        "basis": basis,
        "q_ref": ds.q_ref,
    }
    args = (ds.test.x, ds.train.x, ds.x_ref, ds.horizon)
    first = build_model("rohnn", seed=0, **kw)
    ev.evaluate_model(first, *args, energy=system.hamiltonian)
    before = _cache_sizes()
    second = build_model("rohnn", seed=1, **kw)  # another seed: same structure and shapes
    ev.evaluate_model(second, *args, energy=system.hamiltonian)
    out = ev.evaluate_model(second, *args, energy=system.hamiltonian)
    assert _cache_sizes() == before
    # an untrained learned H is conserved along its latent rollout too (the integrator's
    # property, why ``learned_energy_bounded`` is a test and not a claim: review 42 #4)
    assert out["learned_energy_drift"] <= 0.05, out["learned_energy_drift"]


def test_trainer_refuses_what_is_not_an_optax_transformation(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    """The fast variant of the test below (no training: its compile costs ~8 s; the README
    example trains with ``optax.adamw`` in the default session)."""
    system, ds, basis = fput_data
    model = build_model(
        "rohnn", n=ds.n, dt=system.dt, damped=False, arch=tiny, basis=basis, q_ref=ds.q_ref
    )
    settings = TrainSettings(steps=4, chunk=4, batch=2, window=2)
    with pytest.raises(TypeError, match=r"optax\.GradientTransformation"):
        Trainer(model, ds.train.x, ds.x_ref, settings, optimizer="adam")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="w_energy"):
        Trainer(model, ds.train.x, ds.x_ref, TrainSettings(w_energy=1.0))


@pytest.mark.slow
def test_trainer_takes_an_optax_transformation(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    system, ds, basis = fput_data
    model = build_model(
        "rohnn", n=ds.n, dt=system.dt, damped=False, arch=tiny, basis=basis, q_ref=ds.q_ref
    )
    before = np.asarray(model.autoencoder.layers[-1].phi[...]).copy()
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(1e-2, momentum=0.9))
    settings = TrainSettings(steps=4, chunk=4, batch=2, window=2)
    losses = Trainer(model, ds.train.x, ds.x_ref, settings, optimizer=tx).fit()
    assert len(losses) == 4
    assert np.all(np.isfinite(losses))
    layer = model.autoencoder.layers[-1]
    with jax.enable_x64(True):
        phi, psi = np.asarray(layer.phi[...]), np.asarray(layer.psi[...])
    assert not np.allclose(phi, before)  # trained
    np.testing.assert_allclose(psi.T @ phi, np.eye(phi.shape[1]), atol=1e-12)  # on the manifold
    with pytest.raises(TypeError, match=r"optax\.GradientTransformation"):
        Trainer(model, ds.train.x, ds.x_ref, settings, optimizer="adam")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="w_energy"):
        Trainer(model, ds.train.x, ds.x_ref, TrainSettings(w_energy=1.0))


def test_encode_decode_energy_are_float64_in_a_float32_context(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    """Called directly (outside ``predict``) with x64 off, ``encode``, ``decode`` and the learned
    energy still return float64 with no truncation warning (review 42 #5: they returned float32)."""
    system, ds, basis = fput_data
    kw = {"n": ds.n, "dt": system.dt, "damped": False, "arch": tiny, "basis": basis}
    model = build_model("rohnn", q_ref=ds.q_ref, seed=0, **kw)
    x = np.asarray(ds.test.x[0, 0])
    with warnings.catch_warnings(), jax.enable_x64(False):
        warnings.simplefilter("error")
        z = model.encode(x)
        xh = model.decode(z)
        e = model.dynamics.energy(z)
        assert z.dtype == xh.dtype == e.dtype == jnp.float64, (z.dtype, xh.dtype, e.dtype)
        assert jnp.zeros(1).dtype == jnp.float32  # the caller's setting is untouched
    with jax.enable_x64(True):  # the same numbers as under the global switch
        np.testing.assert_allclose(np.asarray(xh), np.asarray(model.decode(model.encode(x))))
    with pytest.raises(ValueError, match="one latent state of shape"):
        model.decode(np.zeros(model.latent_dim + 1))


def test_predict_refuses_a_batch_and_a_non_finite_state(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    """A batched ``(B, 2n)`` state (a JAX-internal ``dot_general`` TypeError before) and a NaN
    state (a silent NaN rollout before) are refused with errors naming the problem (review 42 #7)."""
    system, ds, basis = fput_data
    kw = {"n": ds.n, "dt": system.dt, "damped": False, "arch": tiny, "basis": basis}
    model = build_model("rohnn", q_ref=ds.q_ref, seed=0, **kw)
    batch = np.asarray(ds.test.x[:, 0])
    with pytest.raises(ValueError, match=r"one state of shape \(12,\), got shape \(2, 12\).*vmap"):
        model.predict(batch, 3)
    with pytest.raises(ValueError, match=r"shape \(12,\), got shape \(5,\)"):
        model.predict(np.zeros(5), 3)
    bad = batch[0].copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        model.predict(bad, 3)
    bad[3] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        model.predict(bad, 3)


def test_encode_decode_refuse_a_batch_and_a_non_finite_state(fput_data, tiny) -> None:  # type: ignore[no-untyped-def]
    """``encode`` on a ``(B, 2n)`` batch died in a JAX-internal ``dot_general`` TypeError and a
    NaN state encoded to NaN silently (review of main, #5): both are refused by name now, and
    ``jax.vmap(model.encode)`` (the documented batch path) still works."""
    system, ds, basis = fput_data
    kw = {"n": ds.n, "dt": system.dt, "damped": False, "arch": tiny, "basis": basis}
    model = build_model("rohnn", q_ref=ds.q_ref, seed=0, **kw)
    batch = np.asarray(ds.test.x[:, 0])
    with pytest.raises(
        ValueError, match=r"encode takes one state of shape \(12,\), got shape \(2, 12\).*vmap"
    ):
        model.encode(batch)
    bad = batch[0].copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="encode got a non-finite state"):
        model.encode(bad)
    z = np.array(model.encode(batch[0]))
    with pytest.raises(ValueError, match=r"decode takes one latent state.*vmap"):
        model.decode(np.stack([z, z]))
    z[0] = np.inf
    with pytest.raises(ValueError, match="decode got a non-finite latent state"):
        model.decode(z)
    with jax.enable_x64(True):
        zs = jax.vmap(model.encode)(jnp.asarray(batch))
    np.testing.assert_allclose(np.asarray(zs[0]), np.asarray(model.encode(batch[0])), atol=1e-12)
