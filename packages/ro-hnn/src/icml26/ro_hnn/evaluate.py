"""Evaluation: rollouts from held-out initial conditions and the metrics of the issue.

* rollout error at horizon ``h`` steps: per test trajectory
  ``sqrt(Σ_{t<=h} |x̂_t - x_t|²) / sqrt(Σ_{t<=h} |x_t - x_ref|²)`` (relative L2 over the window,
  ``x_ref`` the mean training state), median over trajectories; a trajectory that diverges
  (non-finite prediction) counts as infinite error;
* energy drift: ``max_t |H(x̂_t) - H_ref(t)| / |H(x_0)|`` with the *true* Hamiltonian on decoded
  states, ``H_ref(t) = H(x_0)`` for conservative systems and ``H(x_t)`` (the reference
  trajectory's energy) for damped ones; median over trajectories;
* symplecticity defect: ``max_z |DΨ(z)ᵀ J_{2n} DΨ(z) - J_{2d}|_F`` over encoded test states;
* projection error: ``|x - Ψ(E(x))| / |x - x_ref|`` over all test states (relative L2 per
  trajectory, median); ``projection_error_h1``: the same over the test states of the training
  horizon (the time span the training trajectories cover).
* learned-energy drift (models with a learned Hamiltonian ``H_θ``): along the latent rollout
  ``z_t``, ``max_t |H_θ(z_t) - H_θ(z_0)| / (H_θ(z_0) - e_min)`` for conservative systems and
  ``max_t max(0, H_θ(z_t) - H_θ(z_0)) / (H_θ(z_0) - e_min)`` (energy gained) for damped ones,
  ``e_min`` the lowest learned energy over the encoded test states and the reference state
  (``H_θ`` is defined up to a constant, so the drift is measured against the learned energy
  above that floor); median over trajectories.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from icml26.ro_hnn.autoencoder import symplecticity_defect
from icml26.ro_hnn.models import ReducedModel

__all__ = [
    "energy_drift",
    "error_curve",
    "evaluate_model",
    "learned_energy_drift",
    "predict_batch",
    "rollout_error",
]


@partial(jax.jit, static_argnames=("graphdef", "steps"))
def predict_batch(
    graphdef: Any, state: Any, x0: jax.Array, steps: int
) -> tuple[jax.Array, jax.Array]:
    """Latent ``(B, steps+1, 2d)`` and decoded ``(B, steps+1, 2n)`` rollouts from ``x0 (B, 2n)``."""
    model = nnx.merge(graphdef, state)
    return jax.vmap(lambda x: model.predict(x, steps))(x0)


@partial(jax.jit, static_argnames=("graphdef",))
def _reconstruct(graphdef: Any, state: Any, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    model = nnx.merge(graphdef, state)
    z = jax.vmap(model.encode)(x)
    return z, jax.vmap(model.decode)(z)


@partial(jax.jit, static_argnames=("graphdef",))
def _defects(graphdef: Any, state: Any, z: jax.Array) -> jax.Array:
    model = nnx.merge(graphdef, state)
    return jax.vmap(lambda zz: symplecticity_defect(model.decode, zz))(z)


def _per_trajectory_relative(
    pred: np.ndarray, ref: np.ndarray, x_ref: np.ndarray, steps: int
) -> np.ndarray:
    diff = np.sum((pred[:, : steps + 1] - ref[:, : steps + 1]) ** 2, axis=(1, 2))
    norm = np.sum((ref[:, : steps + 1] - x_ref) ** 2, axis=(1, 2))
    err = np.sqrt(diff / np.maximum(norm, 1e-300))
    finite = np.all(np.isfinite(pred[:, : steps + 1]), axis=(1, 2))
    return np.where(finite, err, np.inf)


def rollout_error(pred: np.ndarray, ref: np.ndarray, x_ref: np.ndarray, steps: int) -> float:
    """Median over trajectories of the relative L2 error over the first ``steps`` steps."""
    if pred.shape != ref.shape or pred.ndim != 3:
        raise ValueError(
            f"prediction {pred.shape} and reference {ref.shape} must both be (B, T, D)"
        )
    if not 0 < steps < ref.shape[1]:
        raise ValueError(f"steps must be in [1, {ref.shape[1] - 1}], got {steps}")
    return float(np.median(_per_trajectory_relative(pred, ref, x_ref, steps)))


def error_curve(pred: np.ndarray, ref: np.ndarray, x_ref: np.ndarray) -> np.ndarray:
    """Median over trajectories of ``|x̂_t - x_t| / rms_t |x_t - x_ref|`` at every time ``t``."""
    rms = np.sqrt(np.mean(np.sum((ref - x_ref) ** 2, axis=-1), axis=1, keepdims=True))
    err = np.linalg.norm(pred - ref, axis=-1) / np.maximum(rms, 1e-300)
    return np.median(np.where(np.isfinite(err), err, np.inf), axis=0)


def energy_drift(h_pred: np.ndarray, h_ref: np.ndarray) -> float:
    """Median over trajectories of ``max_t |H(x̂_t) - h_ref(t)| / |h_ref(0)|`` (``(B, T)`` arrays)."""
    rel = np.abs(h_pred - h_ref) / np.maximum(np.abs(h_ref[:, :1]), 1e-300)
    worst = np.where(np.all(np.isfinite(h_pred), axis=1), np.max(rel, axis=1), np.inf)
    return float(np.median(worst))


def learned_energy_drift(h_rollout: np.ndarray, floor: float, *, damped: bool) -> float:
    """Median over trajectories of the learned Hamiltonian's drift (module doc).

    Args:
        h_rollout: ``H_θ(z_t)`` along the latent rollouts, shape ``(B, T)``.
        floor: ``e_min``, the lowest learned energy on the data.
        damped: count only energy gained (a damped system may lose energy, never gain it).
    """
    if h_rollout.ndim != 2:
        raise ValueError(f"h_rollout must be (trajectories, time), got shape {h_rollout.shape}")
    change = h_rollout - h_rollout[:, :1]
    change = np.maximum(change, 0.0) if damped else np.abs(change)
    scale = np.maximum(h_rollout[:, 0] - floor, 1e-300)
    worst = np.max(change, axis=1) / scale
    worst = np.where(np.all(np.isfinite(h_rollout), axis=1), worst, np.inf)
    return float(np.median(worst))


@partial(jax.jit, static_argnames=("energy",))
def _true_energy(energy: Callable[[jax.Array], jax.Array], x: jax.Array) -> jax.Array:
    """``H`` on ``(B, T, 2n)`` states; non-finite states give NaN (compiled once per shape)."""
    finite = jnp.all(jnp.isfinite(x), axis=-1)
    h = jax.vmap(jax.vmap(energy))(jnp.where(jnp.isfinite(x), x, 0.0))
    return jnp.where(finite, h, jnp.nan)


@partial(jax.jit, static_argnames=("graphdef",))
def _learned_energy(graphdef: Any, state: Any, z: jax.Array) -> jax.Array:
    model = nnx.merge(graphdef, state)
    return jax.vmap(model.dynamics.energy)(z)


def evaluate_model(
    model: ReducedModel,
    x_test: np.ndarray,
    x_train: np.ndarray,
    x_ref: np.ndarray,
    horizon: int,
    *,
    energy: Callable[[jax.Array], jax.Array] | None = None,
    damped: bool = False,
) -> dict[str, Any]:
    """All metrics of one trained model (see the module doc) plus curves for the plots.

    Runs under ``jax.enable_x64(True)``; every jitted piece is a module-level function,
    compiled once per model structure and shape (a second call compiles nothing).

    Args:
        model: the trained model.
        x_test: held-out trajectories ``(B, 10·horizon + 1, 2n)``.
        x_train: training trajectories (``h1`` error on them gives the generalisation gap).
        x_ref: reference state for the relative norms.
        horizon: training horizon in steps.
        energy: the true Hamiltonian of one state, if known (a hashable function).
        damped: the system is dissipative (energy compared with the reference trajectory).

    Returns:
        The metrics by name (``h1``, ``h5``, ``h10``, ``projection_error``, ...) and curves.

    Raises:
        ValueError: test trajectories shorter than ``10 * horizon`` steps.
    """
    with jax.enable_x64(True):
        return _evaluate(model, x_test, x_train, x_ref, horizon, energy, damped)


def _rollout_in_batches(
    graphdef: Any, state: Any, x0: np.ndarray, batch: int, steps: int
) -> np.ndarray:
    """Decoded rollouts of ``x0 (N, 2n)`` in batches of ``batch`` states (the last one padded by
    repeating its first state), so they reuse :func:`predict_batch`'s compilation for the test
    batch (same batch size, same length) instead of compiling another shape; the steps past
    the caller's horizon are computed and dropped (cheaper here than a second compile)."""
    out = []
    for start in range(0, x0.shape[0], batch):
        chunk = x0[start : start + batch]
        pad = batch - chunk.shape[0]
        if pad:
            chunk = np.concatenate([chunk, np.repeat(chunk[:1], pad, axis=0)])
        _, pred = predict_batch(graphdef, state, jnp.asarray(chunk), steps)
        out.append(np.asarray(pred)[: batch - pad])
    return np.concatenate(out)


def _evaluate(
    model: ReducedModel,
    x_test: np.ndarray,
    x_train: np.ndarray,
    x_ref: np.ndarray,
    horizon: int,
    energy: Callable[[jax.Array], jax.Array] | None,
    damped: bool,
) -> dict[str, Any]:
    steps = x_test.shape[1] - 1
    if steps < 10 * horizon:
        raise ValueError(
            f"test trajectories have {steps} steps, need 10 x horizon = {10 * horizon}"
        )
    graphdef, state = nnx.split(model)
    x0 = jnp.asarray(x_test[:, 0])
    z, pred = predict_batch(graphdef, state, x0, steps)  # compiles
    jax.block_until_ready(pred)
    start = time.perf_counter()
    z, pred = predict_batch(graphdef, state, x0, steps)
    jax.block_until_ready(pred)
    seconds = time.perf_counter() - start
    z, pred = np.asarray(z), np.asarray(pred)
    out: dict[str, Any] = {"rollout_seconds": seconds}
    for k in (1, 5, 10):
        out[f"h{k}"] = rollout_error(pred, x_test, x_ref, k * horizon)
    train_pred = _rollout_in_batches(graphdef, state, x_train[:, 0], x0.shape[0], steps)
    out["train_h1"] = rollout_error(
        train_pred[:, : horizon + 1], x_train[:, : horizon + 1], x_ref, horizon
    )
    out["error_curve"] = error_curve(pred, x_test, x_ref)
    # the test states and the reference state in one call (one compilation)
    flat = jnp.asarray(
        np.concatenate([x_test.reshape(-1, x_test.shape[-1]), np.asarray(x_ref)[None]])
    )
    z_all, recon_all = _reconstruct(graphdef, state, flat)
    z_true, z_ref = z_all[:-1], z_all[-1:]
    recon = np.asarray(recon_all[:-1]).reshape(x_test.shape)
    full = model.kind == "full_hnn"
    out["projection_error"] = 0.0 if full else rollout_error(recon, x_test, x_ref, steps)
    out["projection_error_h1"] = 0.0 if full else rollout_error(recon, x_test, x_ref, horizon)
    if model.kind != "full_hnn":
        sample = z_true[:: max(1, z_true.shape[0] // 64)]
        out["symplecticity_defect"] = float(jnp.max(_defects(graphdef, state, sample)))
    if energy is not None:
        h_pred = np.asarray(_true_energy(energy, jnp.asarray(pred)))
        h_true = np.asarray(_true_energy(energy, jnp.asarray(x_test)))
        h_ref = h_true if damped else np.repeat(h_true[:, :1], h_true.shape[1], axis=1)
        out["energy_drift"] = energy_drift(h_pred, h_ref)
        out["energy_curve"] = h_pred[0]
        out["energy_reference"] = h_true[0]
    if hasattr(model.dynamics, "energy"):
        rolled = jnp.asarray(z.reshape(-1, z.shape[-1]))
        h_all = np.asarray(
            _learned_energy(graphdef, state, jnp.concatenate([rolled, z_true, z_ref]))
        )
        h_roll, h_data = h_all[: rolled.shape[0]], h_all[rolled.shape[0] :]
        out["learned_energy_drift"] = learned_energy_drift(
            h_roll.reshape(z.shape[:2]), float(np.min(h_data)), damped=damped
        )
    d = z.shape[-1] // 2
    out["latent_pred"] = z[0, :, : min(d, 2)]
    out["latent_true"] = np.asarray(z_true).reshape(x_test.shape[0], x_test.shape[1], -1)[
        0, :, : min(d, 2)
    ]
    return out
