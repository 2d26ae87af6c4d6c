"""Training: constraints hold exactly after Riemannian steps, all models train, checkpoints resume."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from icml26.ro_hnn.autoencoder import BiorthogonalLayer
from icml26.ro_hnn.config import MODELS, Architecture
from icml26.ro_hnn.evaluate import _defects, _reconstruct
from icml26.ro_hnn.manifolds import biorthogonal_defect
from icml26.ro_hnn.models import build_model
from icml26.ro_hnn.train import Trainer, TrainSettings

SETTINGS = TrainSettings(steps=8, batch=4, window=2, lr=1e-2, chunk=4, checkpoint_every=4)
TINY = Architecture(
    latent_dof=2,
    ae_hidden=(4,),
    hnn_hidden=(8,),
    node_hidden=(8,),
    ae_mlp_hidden=(8,),
    full_hidden=(8,),
    iterations=2,
)


def _model(kind: str, fput_data, seed: int = 0):  # type: ignore[no-untyped-def]
    _system, ds, basis = fput_data
    return build_model(
        kind,
        n=ds.n,
        dt=ds.train.dt,
        damped=False,
        arch=TINY,
        basis=basis,
        q_ref=ds.q_ref,
        seed=seed,
    )


@pytest.fixture(scope="module")
def trained(fput_data, tmp_path_factory):  # type: ignore[no-untyped-def]
    _, ds, _ = fput_data
    model = _model("rohnn", fput_data)
    before = jax.tree_util.tree_map(jnp.copy, nnx.state(model, nnx.Param))
    ckpt = tmp_path_factory.mktemp("ckpt") / "rohnn"
    trainer = Trainer(model, ds.train.x, ds.x_ref, SETTINGS, seed=0)
    trainer.fit(checkpoint_dir=ckpt)
    return model, trainer, before, ckpt


@pytest.mark.slow  # default session: the smoke run and the README train
def test_constraints_hold_exactly_after_training(trained, fput_data) -> None:  # type: ignore[no-untyped-def]
    model, _trainer, before, _ = trained
    _, ds, _ = fput_data
    moved = jax.tree_util.tree_map(
        lambda a, b: float(jnp.max(jnp.abs(a - b))), nnx.state(model, nnx.Param), before
    )
    assert max(jax.tree_util.tree_leaves(moved)) > 1e-4  # the weights did change
    layers = [m for _, m in nnx.iter_modules(model) if isinstance(m, BiorthogonalLayer)]
    assert layers
    for layer in layers:
        assert float(biorthogonal_defect(layer.phi[...], layer.psi[...])) < 1e-12
    # the evaluation's compiled pieces (shared with the evaluation tests): eager dispatch of the
    # Jacobians costs seconds
    graphdef, state = nnx.split(model)
    z, decoded = _reconstruct(graphdef, state, jnp.asarray(ds.test.x[:, 0]))
    assert float(jnp.max(_defects(graphdef, state, z))) < 1e-11
    z_again, _ = _reconstruct(graphdef, state, decoded)  # E(Ψ(z))
    np.testing.assert_allclose(z_again, z, atol=1e-11)


@pytest.mark.slow  # default session: the smoke run and the README train
def test_loss_decreases(trained) -> None:  # type: ignore[no-untyped-def]
    _, trainer, _, _ = trained
    assert len(trainer.losses) == SETTINGS.steps
    assert np.mean(trainer.losses[-3:]) < np.mean(trainer.losses[:3])


@pytest.mark.slow  # default session: the smoke run and the README train
def test_checkpoint_resume_reproduces_an_uninterrupted_run(
    trained, fput_data, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    model, _, _, ckpt = trained
    _, ds, _ = fput_data
    # a finished run restores and does not train further
    again = _model("rohnn", fput_data)
    t2 = Trainer(again, ds.train.x, ds.x_ref, SETTINGS, seed=0)
    t2.fit(checkpoint_dir=ckpt)
    assert t2.step == SETTINGS.steps
    # a run killed after the first checkpoint resumes to the same parameters
    killed = _model("rohnn", fput_data)

    def die(step: int, loss: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Trainer(killed, ds.train.x, ds.x_ref, SETTINGS, seed=0).fit(
            checkpoint_dir=tmp_path / "c", on_chunk=die
        )
    resumed = _model("rohnn", fput_data)
    t3 = Trainer(resumed, ds.train.x, ds.x_ref, SETTINGS, seed=0)
    t3.fit(checkpoint_dir=tmp_path / "c")
    assert t3.step == SETTINGS.steps
    ref = nnx.state(model, nnx.Param)
    got = nnx.state(resumed, nnx.Param)
    diffs = jax.tree_util.tree_map(lambda a, b: float(jnp.max(jnp.abs(a - b))), ref, got)
    assert max(jax.tree_util.tree_leaves(diffs)) < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("kind", [m for m in MODELS if m != "rohnn"])
def test_baselines_train_and_predict(kind: str, fput_data) -> None:  # type: ignore[no-untyped-def]
    _, ds, _ = fput_data
    model = _model(kind, fput_data)
    trainer = Trainer(model, ds.train.x, ds.x_ref, SETTINGS, seed=0)
    trainer.fit()
    assert np.all(np.isfinite(trainer.losses))
    z, x = model.predict(jnp.asarray(ds.test.x[0, 0]), 5)
    assert x.shape == (6, 2 * ds.n)
    assert z.shape == ((6, 2 * TINY.latent_dof) if kind != "full_hnn" else (6, 2 * ds.n))
    assert np.all(np.isfinite(np.asarray(x)))


@pytest.mark.slow  # default session: the smoke run and the README train
def test_pretraining_fits_the_autoencoder_alone_on_the_manifold(fput_data) -> None:  # type: ignore[no-untyped-def]
    _, ds, _ = fput_data
    settings = replace(SETTINGS, steps=1, chunk=1, pretrain_steps=40, pretrain_batch=8)
    model = _model("rohnn", fput_data)
    hnn_before = jax.tree_util.tree_map(jnp.copy, nnx.state(model.dynamics, nnx.Param))
    trainer = Trainer(model, ds.train.x, ds.x_ref, replace(settings, steps=1))
    trainer._pretrain()  # the pretraining alone, before the joint step
    assert len(trainer.pretrain_losses) == 40
    assert np.mean(trainer.pretrain_losses[-5:]) < np.mean(trainer.pretrain_losses[:5])
    same = jax.tree_util.tree_map(
        lambda a, b: bool(jnp.all(a == b)), nnx.state(model.dynamics, nnx.Param), hnn_before
    )
    assert all(jax.tree_util.tree_leaves(same))  # the HNN is untouched
    for layer in (m for _, m in nnx.iter_modules(model) if isinstance(m, BiorthogonalLayer)):
        assert float(biorthogonal_defect(layer.phi[...], layer.psi[...])) < 1e-12
    psd = Trainer(_model("psd_hnn", fput_data), ds.train.x, ds.x_ref, settings)
    psd._pretrain()
    assert psd.pretrain_losses == []  # a fixed reduction has nothing to fit


def test_bad_training_inputs(fput_data) -> None:  # type: ignore[no-untyped-def]
    _, ds, basis = fput_data
    model = _model("rohnn", fput_data)
    with pytest.raises(ValueError, match="x_train must have shape"):
        Trainer(model, ds.train.x[..., :-2], ds.x_ref, SETTINGS)
    with pytest.raises(ValueError, match="shorter than a window"):
        Trainer(model, ds.train.x[:, :2], ds.x_ref, SETTINGS)
    with pytest.raises(ValueError, match="encode takes one state of shape"):
        model.encode(jnp.ones(2 * ds.n + 2))
    with pytest.raises(ValueError, match="unknown model"):
        build_model("lnn", n=ds.n, dt=0.1, damped=False, arch=TINY, basis=basis)
    with pytest.raises(ValueError, match="PSD basis"):
        build_model("psd_hnn", n=ds.n, dt=0.1, damped=False, arch=TINY, basis=None)
    with pytest.raises(ValueError, match="pretrain_steps"):
        TrainSettings(pretrain_steps=-1)
    with pytest.raises(ValueError, match="batch"):
        TrainSettings(batch=0)


def test_trainer_ends_on_the_best_validation_checkpoint(fput_data) -> None:  # type: ignore[no-untyped-def]
    """Review of main, #2: joint training made the decoder worse than its PSD start. With
    validation trajectories the trainer scores the start (after pretraining) and every chunk,
    and the model ends on the best score: recomputed on the final model it is the minimum of
    the history, at ``best_step``."""
    from icml26.ro_hnn.train import validation_error

    _, ds, _ = fput_data
    model = _model("rohnn", fput_data)
    x_val = np.asarray(ds.test.x[:, : ds.horizon + 1])  # any held-out states do for the test
    settings = replace(SETTINGS, steps=12, pretrain_steps=4)
    trainer = Trainer(model, ds.train.x, ds.x_ref, settings, seed=0, x_val=x_val)
    trainer.fit()
    steps = [h[0] for h in trainer.val_history]
    assert steps == [0, 4, 8, 12]
    scores = [h[1] for h in trainer.val_history]
    assert trainer.best_step == steps[int(np.argmin(scores))]
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    with jax.enable_x64(True):
        final, _ = validation_error(
            graphdef, settings, params, rest, jnp.asarray(x_val), trainer.scale
        )
    np.testing.assert_allclose(float(final), min(scores), rtol=1e-10)
    with pytest.raises(ValueError, match="x_val must have shape"):
        Trainer(model, ds.train.x, ds.x_ref, settings, x_val=x_val[..., :-1])
    bad = x_val.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="x_val has non-finite"):
        Trainer(model, ds.train.x, ds.x_ref, settings, x_val=bad)
