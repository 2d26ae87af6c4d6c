"""Joint training of autoencoder and latent dynamics, with Riemannian steps on biorthogonal weights.

Loss on a batch of windows ``x_{0..K}`` (relative squared errors)::

    L = w_rec  |Ψ(E(x_k)) - x_k|² / s_x                  reconstruction
      + w_lat  |z_k - E(x_k)|² / s_z                     latent rollout, z_0 = E(x_0), z_{k+1} = step(z_k)
      + w_obs  |Ψ(z_k) - x_k|² / s_x                     observed rollout
      + w_energy (H(Ψ(·)) - H(x_k))² / s_H                 energy of the decoded states

The last term (optional: it needs the system's true Hamiltonian ``H``) sees what the L2 terms
do not: a decoded state whose small high-frequency components cost much strain energy. It is
applied to the reconstructions and to the decoded rollouts, with ``s_H`` the mean squared
energy of the window (held constant in the gradient).

with ``s_x`` the mean squared norm of the centred training states and ``s_z`` that of the
encoded window (held constant in the gradient). Optimiser: any ``optax.GradientTransformation``
(default: gradient clipping + Adam with warm-up and cosine decay, :func:`make_optimizer`). For the biorthogonal layers the Euclidean gradient is first projected onto the
tangent space of the manifold, and after each update the pair is retracted onto it
(:mod:`icml26.ro_hnn.manifolds`), so ``Ψᵀ Φ = I`` holds to floating point at every step.

Before the joint loss, ``pretrain_steps`` steps fit the autoencoder alone on the
reconstruction term (plus the energy term on reconstructions when ``w_energy > 0``) of single
training states (:func:`reconstruction_loss`): no latent rollout, so a step costs a fraction of
a joint one, and a nonlinear decoder gets the thousands of steps it needs to bend away from
the linear subspace it starts from (:func:`pretrain_chunk`).

Training runs ``chunk`` steps per compiled call (one ``lax.scan``, static shapes), so it
compiles once per model and system; an orbax checkpoint is written every
``checkpoint_every`` steps and training resumes from it.

With validation trajectories (``Trainer(..., x_val=...)``, drawn from their own seed stream,
never test states) the trainer scores the parameters after pretraining and after every chunk
on :func:`validation_error` (reconstruction plus observed rollout over each whole validation
trajectory, both relative to ``s_x``: the figures the evaluation reports, in the full space, so
comparable across checkpoints) and ends on the best of them (``best_step``): joint training
can trade the decoder's reconstruction for the latent fit and end worse than it began. A run
resumed from an orbax checkpoint restarts this choice at the restored step.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from icml26.ro_hnn.autoencoder import BiorthogonalLayer
from icml26.ro_hnn.integrators import rollout
from icml26.ro_hnn.manifolds import biorthogonal_retraction, biorthogonal_tangent_projection
from icml26.ro_hnn.models import ReducedModel

__all__ = [
    "TrainSettings",
    "Trainer",
    "joint_loss",
    "make_optimizer",
    "make_pretrain_optimizer",
    "pretrain_chunk",
    "project_gradients",
    "reconstruction_loss",
    "retract",
    "sample_windows",
    "train_chunk",
    "validation_error",
]


@dataclass(frozen=True)
class TrainSettings:
    """Optimisation settings of :class:`Trainer`.

    Attributes:
        steps: optimiser steps.
        batch: windows per step.
        window: rollout length of a window.
        lr: peak learning rate of the default optimiser.
        w_rec, w_latent, w_obs, w_energy: loss weights (module doc); ``w_energy`` needs the
            ``energy`` function of the trainer.
        chunk: steps per compiled call.
        checkpoint_every: steps between checkpoints.
        clip: global-norm gradient clipping of the default optimiser.
        pretrain_steps: reconstruction-only steps of the autoencoder before the joint loss
            (0: none; models whose autoencoder has no trainable weights skip it).
        pretrain_batch: states per pretraining step.
        pretrain_lr: peak learning rate of the pretraining (Adam, warm-up, cosine decay).
    """

    steps: int = 300
    batch: int = 16
    window: int = 6
    lr: float = 3e-3
    w_rec: float = 1.0
    w_latent: float = 1.0
    w_obs: float = 1.0
    w_energy: float = 0.0
    chunk: int = 50
    checkpoint_every: int = 200
    clip: float = 1.0
    pretrain_steps: int = 0
    pretrain_batch: int = 64
    pretrain_lr: float = 1e-2

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "window", "chunk", "checkpoint_every", "pretrain_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainSettings.{name} must be >= 1, got {getattr(self, name)}")
        if self.pretrain_steps < 0:
            raise ValueError(
                f"TrainSettings.pretrain_steps must be >= 0, got {self.pretrain_steps}"
            )
        if not (self.lr > 0 and self.pretrain_lr > 0 and self.clip > 0):
            raise ValueError("TrainSettings.lr, pretrain_lr and clip must be > 0")
        if min(self.w_rec, self.w_latent, self.w_obs, self.w_energy) < 0:
            raise ValueError("TrainSettings loss weights must be >= 0")


def _biorthogonal_pairs(model: nnx.Module) -> list[BiorthogonalLayer]:
    return [m for _, m in nnx.iter_modules(model) if isinstance(m, BiorthogonalLayer)]


def project_gradients(graphdef: Any, params: Any, rest: Any, grads: Any) -> Any:
    """Replace the gradients of every biorthogonal pair by their tangent-space projection."""
    model = nnx.merge(graphdef, params, rest)
    gmodel = nnx.merge(graphdef, grads, rest)
    for layer, glayer in zip(_biorthogonal_pairs(model), _biorthogonal_pairs(gmodel), strict=True):
        gx, gy = biorthogonal_tangent_projection(
            layer.phi[...], layer.psi[...], glayer.phi[...], glayer.psi[...]
        )
        glayer.phi[...] = gx
        glayer.psi[...] = gy
    return nnx.split(gmodel, nnx.Param, ...)[1]


def retract(graphdef: Any, params: Any, rest: Any) -> Any:
    """Put every biorthogonal pair back on the manifold (``Ψᵀ Φ = I`` exactly)."""
    model = nnx.merge(graphdef, params, rest)
    for layer in _biorthogonal_pairs(model):
        phi, psi = biorthogonal_retraction(layer.phi[...], layer.psi[...])
        layer.phi[...] = phi
        layer.psi[...] = psi
    return nnx.split(model, nnx.Param, ...)[1]


def make_optimizer(settings: TrainSettings) -> optax.GradientTransformation:
    """Gradient clipping + Adam with warm-up and cosine decay (the trainer's default).

    Args:
        settings: ``lr``, ``steps`` and ``clip`` are read.

    Returns:
        The optax transformation.
    """
    warmup = max(1, settings.steps // 20) if settings.steps > 1 else 0
    schedule = optax.warmup_cosine_decay_schedule(
        0.0, settings.lr, warmup, max(settings.steps, warmup + 1), settings.lr * 0.05
    )
    return optax.chain(optax.clip_by_global_norm(settings.clip), optax.adam(schedule))


def make_pretrain_optimizer(settings: TrainSettings) -> optax.GradientTransformation:
    """Gradient clipping + Adam with warm-up and cosine decay to ``pretrain_lr / 20``."""
    steps = max(1, settings.pretrain_steps)
    warmup = max(1, steps // 20) if steps > 1 else 0
    schedule = optax.warmup_cosine_decay_schedule(
        0.0, settings.pretrain_lr, warmup, max(steps, warmup + 1), settings.pretrain_lr * 0.05
    )
    return optax.chain(optax.clip_by_global_norm(settings.clip), optax.adam(schedule))


def reconstruction_loss(
    graphdef: Any,
    params: Any,
    rest: Any,
    states: jax.Array,
    scale: jax.Array,
    energy: Callable[[jax.Array], jax.Array] | None = None,
    w_energy: jax.Array | float = 0.0,
) -> jax.Array:
    """``|Ψ(E(x)) - x|² / s_x`` (+ ``w_energy (H(Ψ(E(x))) - H(x))² / s_H``) on ``states (B, 2n)``.

    Args:
        graphdef, params, rest: an autoencoder split by ``nnx.split(ae, nnx.Param, ...)``.
        states: ``(B, 2n)`` training states.
        scale: ``s_x``.
        energy: the true Hamiltonian of one state (the energy term is added when given).
        w_energy: the energy term's weight.

    Returns:
        The scalar loss.
    """
    ae = nnx.merge(graphdef, params, rest)
    rec = jax.vmap(lambda x: ae.decode(ae.encode(x)))(states)
    loss = jnp.mean(jnp.sum((rec - states) ** 2, axis=-1)) / scale
    if energy is not None:
        h_true = jax.vmap(energy)(states)
        s_h = jax.lax.stop_gradient(jnp.mean(h_true**2)) + 1e-12
        loss = loss + w_energy * jnp.mean((jax.vmap(energy)(rec) - h_true) ** 2) / s_h
    return loss


@partial(jax.jit, static_argnames=("graphdef", "settings", "energy"))
def pretrain_chunk(
    graphdef: Any,
    settings: TrainSettings,
    params: Any,
    rest: Any,
    keys: jax.Array,
    states: jax.Array,
    scale: jax.Array,
    energy: Callable[[jax.Array], jax.Array] | None = None,
    w_energy: jax.Array | None = None,
) -> tuple[Any, jax.Array]:
    """``len(keys)`` Riemannian steps of :func:`reconstruction_loss` in one ``lax.scan``.

    ``graphdef`` is the autoencoder's; its biorthogonal pairs are projected and retracted as in
    :func:`train_chunk`. Compiled once per (autoencoder structure, settings, energy, shapes).

    Returns:
        ``(params, losses)``.
    """
    tx = make_pretrain_optimizer(settings)
    weight = 0.0 if w_energy is None else w_energy

    def one(carry: tuple[Any, Any], key: jax.Array) -> tuple[tuple[Any, Any], jax.Array]:
        params, opt_state = carry
        idx = jax.random.randint(key, (settings.pretrain_batch,), 0, states.shape[0])
        loss, grads = jax.value_and_grad(reconstruction_loss, argnums=1)(
            graphdef, params, rest, states[idx], scale, energy, weight
        )
        grads = project_gradients(graphdef, params, rest, grads)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = retract(graphdef, optax.apply_updates(params, updates), rest)
        return (params, opt_state), loss

    (params, _), losses = jax.lax.scan(one, (params, tx.init(params)), keys)
    return params, losses


def joint_loss(
    graphdef: Any,
    settings: TrainSettings,
    params: Any,
    rest: Any,
    windows: jax.Array,
    scale: jax.Array,
    energy: Callable[[jax.Array], jax.Array] | None = None,
    w_energy: jax.Array | float | None = None,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The joint loss (module doc) on ``windows (B, K+1, 2n)``.

    Args:
        graphdef, params, rest: the model, split by ``nnx.split(model, nnx.Param, ...)``.
        settings: the loss weights.
        windows: ``(B, K+1, 2n)`` training windows.
        scale: ``s_x``.
        energy: the true Hamiltonian of one state (the energy term is computed when given).
        w_energy: the energy term's weight (default ``settings.w_energy``; an array under jit,
            so models trained with and without the term share one compilation).

    Returns:
        ``(loss, parts)`` with the unweighted terms by name.
    """
    model = nnx.merge(graphdef, params, rest)
    k = windows.shape[1] - 1
    enc = jax.vmap(jax.vmap(model.encode))(windows)
    rec = jax.vmap(jax.vmap(model.decode))(enc)
    z = jax.vmap(lambda z0: rollout(model.latent_step, z0, k))(enc[:, 0])
    pred = jax.vmap(jax.vmap(model.decode))(z)
    centred = enc - enc.mean(axis=(0, 1))
    z_scale = jax.lax.stop_gradient(jnp.mean(jnp.sum(centred**2, axis=-1))) + 1e-12
    parts = {
        "rec": jnp.mean(jnp.sum((rec - windows) ** 2, axis=-1)) / scale,
        "latent": jnp.mean(jnp.sum((z - enc) ** 2, axis=-1)) / z_scale,
        "obs": jnp.mean(jnp.sum((pred - windows) ** 2, axis=-1)) / scale,
    }
    total = (
        settings.w_rec * parts["rec"]
        + settings.w_latent * parts["latent"]
        + settings.w_obs * parts["obs"]
    )
    if energy is not None:
        h = jax.vmap(jax.vmap(energy))
        h_true = h(windows)
        s_h = jax.lax.stop_gradient(jnp.mean(h_true**2)) + 1e-12
        parts["energy"] = (
            jnp.mean((h(rec) - h_true) ** 2) + jnp.mean((h(pred) - h_true) ** 2)
        ) / s_h
        weight = settings.w_energy if w_energy is None else w_energy
        total = total + weight * parts["energy"]
    return total, parts


@partial(jax.jit, static_argnames=("graphdef", "settings"))
def validation_error(
    graphdef: Any,
    settings: TrainSettings,
    params: Any,
    rest: Any,
    x_val: jax.Array,
    scale: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """The checkpoint-selection score on whole validation trajectories (module doc).

    Args:
        graphdef, params, rest: the model, split by ``nnx.split(model, nnx.Param, ...)``.
        settings: the loss settings (only their structure: the weights are not used).
        x_val: ``(N, T+1, 2n)`` validation trajectories.
        scale: ``s_x``.

    Returns:
        ``(score, reconstruction)``: relative reconstruction plus relative observed-rollout
        error, and the reconstruction alone.
    """
    _, parts = joint_loss(graphdef, settings, params, rest, x_val, scale)
    return parts["rec"] + parts["obs"], parts["rec"]


def sample_windows(key: jax.Array, data: jax.Array, batch: int, window: int) -> jax.Array:
    """``batch`` random windows of ``window + 1`` consecutive states from ``data (N, T+1, D)``."""
    n_traj, length = data.shape[:2]
    k1, k2 = jax.random.split(key)
    idx = jax.random.randint(k1, (batch,), 0, n_traj)
    start = jax.random.randint(k2, (batch,), 0, length - window)

    def cut(i: jax.Array, t: jax.Array) -> jax.Array:
        return jax.lax.dynamic_slice_in_dim(data[i], t, window + 1, axis=0)

    return jax.vmap(cut)(idx, start)


@partial(jax.jit, static_argnames=("graphdef", "settings", "tx", "energy"))
def train_chunk(
    graphdef: Any,
    settings: TrainSettings,
    params: Any,
    rest: Any,
    opt_state: Any,
    keys: jax.Array,
    data: jax.Array,
    scale: jax.Array,
    tx: optax.GradientTransformation | None = None,
    energy: Callable[[jax.Array], jax.Array] | None = None,
    w_energy: jax.Array | None = None,
) -> tuple[Any, Any, jax.Array]:
    """``len(keys)`` Riemannian optimiser steps in one compiled ``lax.scan``.

    Compiled once per (model structure, settings, optimiser, energy, shapes): every seed
    reuses it. The Euclidean gradients of the biorthogonal pairs are projected onto the
    manifold's tangent space before ``tx`` and the pairs retracted after it. ``tx=None`` is
    :func:`make_optimizer` of ``settings``, built inside (so every seed shares one compilation;
    a user's transformation is a static argument: reuse the same object to avoid recompiling).
    """
    tx = make_optimizer(settings) if tx is None else tx

    def one(carry: tuple[Any, Any], key: jax.Array) -> tuple[tuple[Any, Any], jax.Array]:
        params, opt_state = carry
        windows = sample_windows(key, data, settings.batch, settings.window)
        grad_fn = jax.value_and_grad(joint_loss, argnums=2, has_aux=True)
        (loss, _), grads = grad_fn(
            graphdef, settings, params, rest, windows, scale, energy, w_energy
        )
        grads = project_gradients(graphdef, params, rest, grads)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = retract(graphdef, optax.apply_updates(params, updates), rest)
        return (params, opt_state), loss

    (params, opt_state), losses = jax.lax.scan(one, (params, opt_state), keys)
    return params, opt_state, losses


class Trainer:
    """Train one :class:`ReducedModel` on trajectories ``x_train (N, T+1, 2n)`` (float64).

    Everything runs under ``jax.enable_x64(True)`` (context-local: the caller's JAX settings
    are left alone), so the model's float64 parameters are never truncated to float32.

    Args:
        model: the model (its parameters are updated in place by :meth:`fit`).
        x_train: training trajectories.
        x_ref: the reference state subtracted before measuring norms.
        settings: optimisation settings.
        seed: seeds the window sampling.
        optimizer: any ``optax.GradientTransformation`` (default :func:`make_optimizer`);
            Riemannian projection and retraction are applied around it.
        energy: the system's Hamiltonian of one state (for ``settings.w_energy``); a function
            that can be hashed (a module-level function or a frozen dataclass's method).
        x_val: validation trajectories ``(N, T+1, 2n)`` (not test data): the trainer ends on
            the parameters that score best on them (module doc; ``best_step``,
            ``val_history``). ``None``: it ends on the last step.

    Raises:
        ValueError: trajectories of the wrong shape or too short for a window, validation
            trajectories of the wrong shape or not finite, or ``w_energy > 0`` without
            ``energy``.
    """

    def __init__(
        self,
        model: ReducedModel,
        x_train: np.ndarray,
        x_ref: np.ndarray,
        settings: TrainSettings,
        *,
        seed: int = 0,
        optimizer: optax.GradientTransformation | None = None,
        energy: Callable[[jax.Array], jax.Array] | None = None,
        x_val: np.ndarray | None = None,
    ) -> None:
        if settings.w_energy > 0 and energy is None:
            raise ValueError(
                "settings.w_energy > 0 needs the system's Hamiltonian: Trainer(..., energy=H)"
            )
        if optimizer is not None and not isinstance(optimizer, optax.GradientTransformation):
            raise TypeError(
                f"optimizer must be an optax.GradientTransformation, got {type(optimizer).__name__}"
            )
        self.optimizer = optimizer  # None: make_optimizer(settings), built inside the jit
        self.tx = optimizer if optimizer is not None else make_optimizer(settings)
        self.energy = energy
        with jax.enable_x64(True):
            self._setup(model, x_train, x_ref, settings, seed)
            self.x_val = None if x_val is None else jnp.asarray(x_val, jnp.float64)
        if x_val is not None and (
            np.ndim(x_val) != 3 or np.shape(x_val)[-1] != model.full_dim or np.shape(x_val)[1] < 2
        ):
            raise ValueError(
                f"x_val must have shape (N, T+1, {model.full_dim}) with T >= 1, got "
                f"{np.shape(x_val)}"
            )
        if x_val is not None and not np.all(np.isfinite(np.asarray(x_val))):
            raise ValueError("x_val has non-finite entries (NaN or inf)")

    def _setup(
        self,
        model: ReducedModel,
        x_train: np.ndarray,
        x_ref: np.ndarray,
        settings: TrainSettings,
        seed: int,
    ) -> None:
        if x_train.ndim != 3 or x_train.shape[-1] != model.full_dim:
            raise ValueError(
                f"x_train must have shape (N, T+1, {model.full_dim}), got {x_train.shape}"
            )
        if x_train.shape[1] < settings.window + 1:
            raise ValueError(
                f"trajectories of {x_train.shape[1]} points are shorter than a window of {settings.window + 1}"
            )
        self.model = model
        self.settings = settings
        self.data = jnp.asarray(x_train)
        self.scale = jnp.mean(jnp.sum((self.data - jnp.asarray(x_ref)) ** 2, axis=-1))
        self.key = jax.random.key(seed)
        parts: tuple[Any, ...] = nnx.split(model, nnx.Param, ...)
        self.graphdef: Any = parts[0]
        self.params: Any = parts[1]
        self.rest: Any = parts[2]
        self.opt_state = self.tx.init(self.params)
        self.step = 0
        self.losses: list[float] = []
        self.pretrain_losses: list[float] = []
        self.val_history: list[tuple[int, float, float]] = []  # (step, score, reconstruction)
        self.best_step: int | None = None

    def loss(self, windows: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
        """The joint loss of the current parameters on ``windows``.

        Args:
            windows: ``(B, K+1, 2n)``.

        Returns:
            ``(loss, parts)``.
        """
        with jax.enable_x64(True):
            return joint_loss(
                self.graphdef,
                self.settings,
                self.params,
                self.rest,
                jnp.asarray(windows),
                self.scale,
                self.energy,
            )

    def fit(
        self,
        *,
        checkpoint_dir: str | os.PathLike[str] | None = None,
        on_chunk: Callable[[int, float], None] | None = None,
    ) -> list[float]:
        """Train to ``settings.steps``, resuming from ``checkpoint_dir`` if it holds a checkpoint.

        Args:
            checkpoint_dir: an orbax checkpoint folder (written every ``checkpoint_every``).
            on_chunk: called with ``(step, last loss)`` after each compiled chunk.

        Returns:
            The loss of every step so far.

        Raises:
            FloatingPointError: a non-finite loss (the step is named).
            ValueError: a checkpoint that does not match the model.
        """
        with jax.enable_x64(True):
            return self._fit(checkpoint_dir, on_chunk)

    def _fit(
        self,
        checkpoint_dir: str | os.PathLike[str] | None,
        on_chunk: Callable[[int, float], None] | None,
    ) -> list[float]:
        s = self.settings
        manager = _CheckpointManager(checkpoint_dir) if checkpoint_dir is not None else None
        if manager is not None:
            restored = manager.restore()
            if restored is not None:
                self._load(restored)
        if self.step == 0 and s.pretrain_steps > 0 and not self.pretrain_losses:
            self._pretrain()
        best = self._score()
        last_saved = self.step
        while self.step < s.steps:
            n = min(s.chunk, s.steps - self.step)
            # keys depend only on the step index, so a resumed run draws the same batches
            keys = jax.vmap(lambda i: jax.random.fold_in(self.key, i))(
                jnp.arange(self.step, self.step + n)
            )
            self.params, self.opt_state, losses = train_chunk(
                self.graphdef,
                replace(s, w_energy=0.0),  # the weight is traced: one compile for any weight
                self.params,
                self.rest,
                self.opt_state,
                keys,
                self.data,
                self.scale,
                self.optimizer,
                self.energy,
                jnp.asarray(s.w_energy),
            )
            losses = np.asarray(losses)
            if not np.all(np.isfinite(losses)):
                first = self.step + int(np.argmin(np.isfinite(losses)))
                raise FloatingPointError(f"{self.model.kind}: non-finite loss at step {first}")
            self.losses.extend(float(v) for v in losses)
            self.step += n
            if on_chunk is not None:
                on_chunk(self.step, float(losses[-1]))
            best = self._score(best)
            if manager is not None and (
                self.step - last_saved >= s.checkpoint_every or self.step >= s.steps
            ):
                manager.save(self.step, self._state())
                last_saved = self.step
        nnx.update(self.model, self.params if best is None else best[1])
        return self.losses

    def _score(self, best: tuple[float, Any] | None = None) -> tuple[float, Any] | None:
        """Score the current parameters on the validation trajectories; the better of them and
        ``best`` (``(score, params)``), or ``None`` without validation data."""
        if self.x_val is None:
            return None
        score, rec = validation_error(
            self.graphdef, self.settings, self.params, self.rest, self.x_val, self.scale
        )
        score = float(score)
        self.val_history.append((self.step, score, float(rec)))
        if best is not None and not (score < best[0] or np.isnan(best[0])):  # NaN never wins
            return best
        self.best_step = self.step
        return score, self.params

    def _pretrain(self) -> None:
        """``pretrain_steps`` reconstruction-only steps of the autoencoder (module doc)."""
        s = self.settings
        nnx.update(self.model, self.params)
        parts: tuple[Any, ...] = nnx.split(self.model.autoencoder, nnx.Param, ...)
        graphdef, params, rest = parts
        if not jax.tree_util.tree_leaves(params):
            return  # a fixed reduction (PSD, identity): nothing to fit
        keys = jax.random.split(jax.random.fold_in(self.key, 2**31 - 1), s.pretrain_steps)
        states = self.data.reshape(-1, self.data.shape[-1])
        params, losses = pretrain_chunk(
            graphdef,
            replace(s, w_energy=0.0),  # the weight is traced, as in train_chunk
            params,
            rest,
            keys,
            states,
            self.scale,
            self.energy,
            jnp.asarray(s.w_energy),
        )
        losses = np.asarray(losses)
        if not np.all(np.isfinite(losses)):
            first = int(np.argmin(np.isfinite(losses)))
            raise FloatingPointError(
                f"{self.model.kind}: non-finite pretraining loss at step {first}"
            )
        nnx.update(self.model.autoencoder, params)
        self.params = nnx.split(self.model, nnx.Param, ...)[1]
        self.opt_state = self.tx.init(self.params)
        self.pretrain_losses = [float(v) for v in losses]

    def _state(self) -> dict[str, Any]:
        return {
            "leaves": [
                np.asarray(v) for v in jax.tree_util.tree_leaves((self.params, self.opt_state))
            ],
            "step": np.asarray(self.step),
            "losses": np.asarray(self.losses if self.losses else [np.nan]),
        }

    def _load(self, state: dict[str, Any]) -> None:
        treedef = jax.tree_util.tree_structure((self.params, self.opt_state))
        leaves = [jnp.asarray(v) for v in state["leaves"]]
        if len(leaves) != len(jax.tree_util.tree_leaves((self.params, self.opt_state))):
            raise ValueError("the checkpoint does not match this model's parameters")
        self.params, self.opt_state = jax.tree_util.tree_unflatten(treedef, leaves)
        self.step = int(state["step"])
        self.losses = [float(v) for v in np.asarray(state["losses"]) if np.isfinite(v)]
        nnx.update(self.model, self.params)


class _CheckpointManager:
    """A thin synchronous wrapper of ``orbax.checkpoint.CheckpointManager`` keeping the last checkpoint."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        import orbax.checkpoint as ocp

        self._ocp = ocp
        self.folder = Path(folder).absolute()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=1, enable_async_checkpointing=False, create=True
        )
        self.manager = ocp.CheckpointManager(self.folder, options=options)

    def save(self, step: int, state: dict[str, Any]) -> None:
        self.manager.save(step, args=self._ocp.args.StandardSave(state))
        self.manager.wait_until_finished()

    def restore(self) -> dict[str, Any] | None:
        step = self.manager.latest_step()
        if step is None:
            return None
        return dict(self.manager.restore(step, args=self._ocp.args.StandardRestore()))
