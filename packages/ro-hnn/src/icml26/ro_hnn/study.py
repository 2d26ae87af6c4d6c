"""The comparison of the run: systems prepared once, one (system, model, seed) unit at a time.

:func:`prepare_system` simulates a system's training trajectories (``horizon`` steps) and
held-out test trajectories (``10 × horizon``) and fits the PSD reduction on the training
snapshots (reporting PSD's own projection error on the test states first);
:func:`train_unit` builds, trains and evaluates one model for one seed; :func:`summarise`
turns the units into the metric tree (means over seeds, standard errors, spreads).

Models: ``rohnn`` (symplectic autoencoder + geometric HNN, trained with the energy term when
``w_energy > 0``), ``rohnn_l2`` (the same model trained without it: the ablation of the energy
term), ``psd_hnn``, ``ae_node``, ``full_hnn`` (see :mod:`icml26.ro_hnn.models`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.ro_hnn.config import RunConfig
from icml26.ro_hnn.data import (
    Dataset,
    Reduction,
    Trajectories,
    dataset_from_trajectories,
    fit_reduction,
    load_trajectories,
    make_dataset,
)
from icml26.ro_hnn.evaluate import evaluate_model
from icml26.ro_hnn.models import build_model, psd_galerkin
from icml26.ro_hnn.systems import HamiltonianSystem, make_system, simulate
from icml26.ro_hnn.train import Trainer, TrainSettings
from icml26.shared import log, seed_for

__all__ = [
    "CURVES",
    "GALERKIN_SUBSTEPS",
    "PreparedSystem",
    "energy_drift_gains",
    "gains_over_psd",
    "galerkin_reference",
    "prepare_system",
    "summarise",
    "train_unit",
]

#: Störmer-Verlet substeps of the PSD-Galerkin reference: close to the exact reduced flow (one
#: step per observation is unstable on the wave, whose reduced frequencies reach ``2 / dt``).
GALERKIN_SUBSTEPS = 8

#: Per-unit arrays kept for the figures (lists in the stage files).
CURVES = ("error_curve", "energy_curve", "energy_reference", "latent_pred", "latent_true")


@dataclass(frozen=True)
class PreparedSystem:
    """A system's data, the true system (``None`` for a user file) and its PSD reduction."""

    ds: Dataset
    system: HamiltonianSystem | None
    reduction: Reduction

    @property
    def name(self) -> str:
        """The system's name."""
        return str(self.ds.name)


def prepare_system(config: RunConfig, name: str) -> PreparedSystem:
    """Simulate ``name`` (or load the user's ``data_file`` for ``name == "user"``) and reduce it.

    Args:
        config: the run's configuration.
        name: a system name, or ``"user"``.

    Returns:
        :class:`PreparedSystem`.

    Raises:
        ValueError: a user file whose horizon is shorter than a training window.
    """
    if name == "user":
        ds = dataset_from_trajectories(load_trajectories(config.data_file), n_test=config.n_test)
        if ds.horizon < config.window:
            raise ValueError(
                f"{config.data_file}: horizon {ds.horizon} is shorter than window {config.window}"
            )
        system = None
    else:
        families: dict[str, dict[str, float]] = {
            "fput": {"amplitude": config.fput_amplitude},
            "wave": {"dt": config.wave_dt},
            "cloth": {
                "damping": config.cloth_damping,
                "velocity_std": config.cloth_velocity,
                "tilt_max": config.cloth_tilt_max,
                "dt": config.cloth_dt,
            },
        }
        sizes = {"fput": config.fput_n, "wave": config.wave_n, "cloth": config.cloth_n}
        system = make_system(name, sizes[name], **families[name])
        ds = make_dataset(
            system,
            n_train=config.n_train,
            n_test=config.n_test,
            horizon=config.horizon,
            seed=_stream_seed(config.seed, "data"),
            noise=config.noise,
        )
        if config.n_val > 0:  # model selection only: own stream, never train or test states
            rng = np.random.default_rng(_stream_seed(config.seed, "validation"))
            x0 = system.sample_initial_conditions(rng, config.n_val)
            ds = replace(
                ds, val=Trajectories(np.asarray(simulate(system, x0, config.horizon)), system.dt)
            )
    arch = config.arch
    reduction = fit_reduction(ds, arch.latent_dof, max(arch.ae_hidden, default=arch.latent_dof))
    log(
        f"{ds.name}: n={ds.n}, latent {2 * arch.latent_dof}, PSD projection error "
        f"{reduction.projection_error:.3f}, train {ds.train.x.shape[0]}x{ds.horizon} steps"
    )
    return PreparedSystem(ds, system, reduction)


def _stream_seed(seed: int, *stream: str | int) -> int:
    """A 31-bit seed of one named stream (data, model initialisation, window sampling): the
    streams never share a seed (``jax.random.key`` and ``nnx.Rngs`` take it in int32 too)."""
    return seed_for(seed, *stream) % 2**31


def train_unit(config: RunConfig, prepared: PreparedSystem, kind: str, k: int) -> dict[str, Any]:
    """Train and evaluate one (system, model, seed index ``k``).

    Args:
        config: the run's configuration.
        prepared: the system.
        kind: the model (``rohnn_l2`` is ``rohnn`` trained without the energy term).
        k: the seed's index.

    Returns:
        The unit's metrics (:func:`~icml26.ro_hnn.evaluate.evaluate_model`) with curves as
        lists, ``train_seconds``, ``final_loss`` and ``loss_curve``.
    """
    ds, red, system = prepared.ds, prepared.reduction, prepared.system
    model = build_model(
        "rohnn" if kind == "rohnn_l2" else kind,
        n=ds.n,
        dt=ds.train.dt,
        damped=ds.damped,
        arch=config.arch,
        basis=red.basis,
        q_ref=ds.q_ref,
        latent_scale=red.latent_scale,
        full_scale=red.full_scale,
        frequency=red.frequency,
        seed=_stream_seed(config.seed, "model", k),
    )
    energy = None if system is None else system.hamiltonian
    plain = kind not in config.energy_models or energy is None  # rohnn_l2 never is
    w_energy = 0.0 if plain else config.w_energy
    settings = TrainSettings(
        steps=config.steps,
        batch=config.batch,
        window=config.window,
        lr=config.lr,
        w_rec=config.w_rec,
        w_latent=config.w_latent,
        w_obs=config.w_obs,
        w_energy=w_energy,
        chunk=config.chunk,
        checkpoint_every=config.checkpoint_every,
        pretrain_steps=config.pretrain_steps,
        pretrain_lr=config.pretrain_lr,
        pretrain_batch=config.pretrain_batch,
    )
    batches = _stream_seed(config.seed, "batches", k)
    x_val = None if ds.val is None else ds.val.x
    trainer = Trainer(
        model, ds.train.x, ds.x_ref, settings, seed=batches, energy=energy, x_val=x_val
    )
    losses = trainer.fit()
    metrics = evaluate_model(
        model, ds.test.x, ds.train.x, ds.x_ref, ds.horizon, energy=energy, damped=ds.damped
    )
    metrics.update(final_loss=losses[-1], loss_curve=losses)
    if trainer.best_step is not None:
        metrics.update(
            best_step=trainer.best_step,
            val_history=[list(v) for v in trainer.val_history],
        )
    log(
        f"  {ds.name:6s} {kind:9s} seed {k}: h1 {metrics['h1']:.3g} h10 {metrics['h10']:.3g} "
        f"projection {metrics['projection_error']:.3g} "
        f"drift {metrics.get('energy_drift', float('nan')):.3g} "
        f"best step {metrics.get('best_step', config.steps)}"
    )
    return {
        k2: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
        for k2, v in metrics.items()
    }


def galerkin_reference(config: RunConfig, prepared: PreparedSystem) -> dict[str, Any] | None:
    """PSD-Galerkin (the true ``H`` projected onto the PSD basis at ``latent_dof``, integrated
    with :data:`GALERKIN_SUBSTEPS` substeps) evaluated like the trained models: what a PSD +
    HNN model can at best learn. ``None`` for a user file (no true ``H``) or a damped system.

    Args:
        config: the run's configuration.
        prepared: the system.

    Returns:
        The reference's metrics (:func:`~icml26.ro_hnn.evaluate.evaluate_model`), curves as
        lists, or ``None``.
    """
    ds, system = prepared.ds, prepared.system
    if system is None or ds.damped:
        return None
    model = psd_galerkin(
        system.hamiltonian,
        prepared.reduction.basis[:, : config.arch.latent_dof],
        ds.q_ref,
        dt=ds.train.dt,
        substeps=GALERKIN_SUBSTEPS,
        iterations=config.arch.iterations,
    )
    metrics = evaluate_model(
        model, ds.test.x, ds.train.x, ds.x_ref, ds.horizon, energy=system.hamiltonian
    )
    log(f"  {ds.name:6s} psd_galerkin (reference): h1 {metrics['h1']:.3g} h10 {metrics['h10']:.3g}")
    return {
        k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v) for k, v in metrics.items()
    }


def _mean_se_std(values: list[float]) -> tuple[float, float, float]:
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)):
        return float("inf"), float("inf"), float("inf")
    se = float(arr.std(ddof=1) / np.sqrt(arr.size)) if arr.size > 1 else float("inf")
    return float(arr.mean()), se, float(arr.std())


def summarise(
    config: RunConfig,
    systems: list[PreparedSystem],
    units: dict[str, dict[str, list[dict[str, Any]]]],
    references: dict[str, dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """The metric tree: means over seeds, ``seed_se.*`` (standard errors) and ``seed_std.*``.

    Args:
        config: the run's configuration.
        systems: the prepared systems.
        units: ``units[system][model]`` = one metrics dict per seed.
        references: ``references[system]`` = the PSD-Galerkin metrics
            (:func:`galerkin_reference`) or ``None``; written as the model ``psd_galerkin``
            with standard error 0 (deterministic: no seed).

    Returns:
        Nested metrics: ``rollout_error.<system>.<model>.h<k>``, ``projection_error``,
        ``projection_error_h1``, ``energy_drift``, ``learned_energy_drift``, ``symplecticity_defect``,
        ``generalisation_gap``, ``psd_projection_error.<system>``,
        ``energy_drift_gain.<system>.<model>`` (the paired gain over ``rohnn_l2``, see
        :func:`energy_drift_gains`), ``gain_over_psd.<system>.<model>.<metric>`` (the paired
        gain over ``psd_hnn``, :func:`gains_over_psd`), ``gain_over_galerkin.<system>.<model>.h<k>``
        (PSD-Galerkin's rollout error minus the model's, per seed: the reference is
        deterministic and every seed shares the data, so the SE is the model's), and their ``seed_se`` / ``seed_std`` where they vary over
        seeds.
    """
    m: dict[str, Any] = {}

    def put(path: tuple[str, ...], values: list[float]) -> None:
        mean, se, std = _mean_se_std(values)
        for root, v in (("", mean), ("seed_se", se), ("seed_std", std)):
            node = m.setdefault(root, {}) if root else m
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = v

    for p in systems:
        name = p.name
        m.setdefault("latent_dim", {})[name] = 2 * config.arch.latent_dof
        m.setdefault("full_dim", {})[name] = 2 * p.ds.n
        m.setdefault("psd_projection_error", {})[name] = p.reduction.projection_error
        m.setdefault("psd_projection_error_h1", {})[name] = p.reduction.projection_error_h1
        ref = (references or {}).get(name)
        if ref is not None:
            for h in ("h1", "h5", "h10"):
                put(("rollout_error", name, "psd_galerkin", h), [ref[h]])
                m["seed_se"]["rollout_error"][name]["psd_galerkin"][h] = 0.0
                m["seed_std"]["rollout_error"][name]["psd_galerkin"][h] = 0.0
        for kind, us in units[name].items():
            for h in ("h1", "h5", "h10"):
                put(("rollout_error", name, kind, h), [u[h] for u in us])
            for key in (
                "projection_error",
                "projection_error_h1",
                "energy_drift",
                "learned_energy_drift",
                "best_step",
            ):
                if key in us[0]:
                    put((key, name, kind), [u[key] for u in us])
            if "symplecticity_defect" in us[0]:
                m.setdefault("symplecticity_defect", {}).setdefault(name, {})[kind] = float(
                    max(u["symplecticity_defect"] for u in us)
                )
            put(
                ("generalisation_gap", name, kind),
                [u["h1"] / max(u["train_h1"], 1e-300) for u in us],
            )
            m.setdefault("rollout_seconds", {}).setdefault(name, {})[kind] = float(
                np.mean([u["rollout_seconds"] for u in us])
            )
        for kind, gains in energy_drift_gains(units[name]).items():
            put(("energy_drift_gain", name, kind), gains)
        for key, per_kind in gains_over_psd(units[name]).items():
            for kind, gains in per_kind.items():
                put(("gain_over_psd", name, kind, key), gains)
        if ref is not None:
            for kind, us in units[name].items():
                for h in ("h1", "h10"):
                    put(("gain_over_galerkin", name, kind, h), [ref[h] - u[h] for u in us])
    return m


def gains_over_psd(
    units: dict[str, list[dict[str, Any]]],
) -> dict[str, dict[str, list[float]]]:
    """Per seed, ``psd_hnn``'s metric minus each model's (paired: seed ``k`` of every model
    shares its data, batch and initialisation streams, ``train_unit``), for ``h1``, ``h10``
    and ``projection_error_h1`` (lower is better, so a positive gain favours the model).

    Args:
        units: ``units[model]`` = one metrics dict per seed, for one system.

    Returns:
        ``{metric: {model: [gain per seed]}}`` (``psd_hnn``'s own gains are 0), empty without
        ``psd_hnn``.
    """
    base = units.get("psd_hnn")
    if not base:
        return {}
    return {
        key: {
            kind: [b[key] - u[key] for b, u in zip(base, us, strict=True)]
            for kind, us in units.items()
            if key in us[0] and len(us) == len(base)
        }
        for key in ("h1", "h10", "projection_error_h1")
    }


def energy_drift_gains(units: dict[str, list[dict[str, Any]]]) -> dict[str, list[float]]:
    """Per seed, ``energy_drift`` of ``rohnn_l2`` minus that of each model (paired: seed ``k``
    of every model shares its initialisation and batch streams, ``train_unit``).

    Args:
        units: ``units[model]`` = one metrics dict per seed, for one system.

    Returns:
        ``{model: [gain per seed]}`` (``rohnn_l2``'s own gains are 0), empty without
        ``rohnn_l2`` or energy drifts.
    """
    ablation = units.get("rohnn_l2")
    if not ablation or "energy_drift" not in ablation[0]:
        return {}
    return {
        kind: [a["energy_drift"] - u["energy_drift"] for a, u in zip(ablation, us, strict=True)]
        for kind, us in units.items()
        if "energy_drift" in us[0] and len(us) == len(ablation)
    }
