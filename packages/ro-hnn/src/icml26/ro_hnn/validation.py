"""Settings of PSD + HNN on the wave, chosen on validation data (``python -m icml26.ro_hnn.validation``).

The validation data are the quick profile's wave drawn with run seed 1000 (its own data stream:
no run with a seed below 1000 draws these initial conditions), never the test trajectories of
a run. Each row trains ``psd_hnn`` for one model seed and reports its validation rollout error
over the first period (``h1``) beside the PSD-Galerkin reference (the true ``H`` on the same
basis). Measured 2026-12-05 (load ~9, one seed each; ``frequency`` is the potential's scale
``ω_s``, :class:`~icml26.ro_hnn.hamiltonian.GeometricHNN`)::

    PSD-Galerkin (8 substeps)                    h1 0.558  h10 0.797
    PSD-Galerkin (1 substep: the models' step)   unstable (reduced ω·dt > 2)
    psd_hnn  ω_s = 1      lr 3e-3  1000 steps     h1 1.041  h10 1.049  (learns nothing)
    psd_hnn  ω_s = 16.9   lr 3e-3  1000 steps     h1 0.783  h10 1.266
    psd_hnn  ω_s = 16.9   lr 1e-2  1000 steps     h1 0.792  h10 1.109
    psd_hnn  ω_s = 16.9   lr 3e-2  1000 steps     h1 0.758  h10 0.882

The frequency scale is what matters (h1 1.04 -> 0.78); the learning rate moves h1 by 0.03 on
one seed, so the runs keep ``lr = 3e-3`` (shared with RO-HNN, whose biorthogonal steps were
not validated at a larger rate). The energy term, through ``study.train_unit`` on the same
validation wave (model seed 0)::

    psd_hnn  with the energy term  h1 0.778  h10 1.210
    psd_hnn  without               h1 0.733  h10 0.827   -> RunConfig.energy_models drops psd_hnn
    rohnn    with the energy term  h1 0.694  h10 0.880   -> kept
    rohnn    without (rohnn_l2)    h1 0.704  h10 0.975

(a fixed linear decoder cannot carry the energy its projection loses, so the term can only bend
PSD + HNN's dynamics). PSD + HNN stays ~0.18 above PSD-Galerkin on validation.
"""

from __future__ import annotations

from dataclasses import replace

import jax

from icml26.ro_hnn.config import PROFILES, RunConfig
from icml26.ro_hnn.evaluate import evaluate_model
from icml26.ro_hnn.models import build_model, psd_galerkin
from icml26.ro_hnn.study import prepare_system
from icml26.ro_hnn.train import Trainer, TrainSettings

__all__ = ["VALIDATION_SEED", "validate_psd_hnn"]

#: The run seed whose data stream is the validation data.
VALIDATION_SEED = 1000


def validate_psd_hnn(
    grid: tuple[tuple[bool, float], ...] = (
        (False, 3e-3),
        (True, 3e-3),
        (True, 1e-2),
        (True, 3e-2),
    ),
    config: RunConfig | None = None,
) -> list[dict[str, float]]:
    """Train ``psd_hnn`` on the validation wave for each ``(frequency scale on, lr)`` of ``grid``.

    Args:
        grid: ``(use the data's frequency scale, peak learning rate)`` pairs.
        config: the profile (default ``quick``); its seed is replaced by :data:`VALIDATION_SEED`.

    Returns:
        One row per setting (``frequency``, ``lr``, ``h1``, ``h10``), the PSD-Galerkin
        reference first (``lr`` NaN).
    """
    cfg = replace(config or PROFILES["quick"], seed=VALIDATION_SEED)
    with jax.enable_x64(True):
        p = prepare_system(cfg, "wave")
        ds, red, system = p.ds, p.reduction, p.system
        assert system is not None
        args = (ds.test.x, ds.train.x, ds.x_ref, ds.horizon)
        ref = psd_galerkin(
            system.hamiltonian,
            red.basis[:, : cfg.arch.latent_dof],
            ds.q_ref,
            dt=ds.train.dt,
            substeps=8,
        )
        m = evaluate_model(ref, *args, energy=system.hamiltonian)
        rows = [{"frequency": float("nan"), "lr": float("nan"), "h1": m["h1"], "h10": m["h10"]}]
        for scaled, lr in grid:
            freq = red.frequency if scaled else 1.0
            model = build_model(
                "psd_hnn",
                n=ds.n,
                dt=ds.train.dt,
                damped=False,
                arch=cfg.arch,
                basis=red.basis,
                q_ref=ds.q_ref,
                latent_scale=red.latent_scale,
                full_scale=red.full_scale,
                frequency=freq,
                seed=0,
            )
            settings = TrainSettings(
                steps=cfg.steps,
                batch=cfg.batch,
                window=cfg.window,
                lr=lr,
                w_energy=cfg.w_energy,
                chunk=cfg.steps,
                checkpoint_every=cfg.steps,
            )
            Trainer(model, ds.train.x, ds.x_ref, settings, seed=1, energy=system.hamiltonian).fit()
            m = evaluate_model(model, *args, energy=system.hamiltonian)
            rows.append({"frequency": freq, "lr": lr, "h1": m["h1"], "h10": m["h10"]})
    return rows


if __name__ == "__main__":
    for row in validate_psd_hnn():
        print(", ".join(f"{k} {v:.4g}" for k, v in row.items()))
