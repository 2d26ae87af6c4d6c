"""The main job, ``icml26 run ro-hnn``: every (system, model, seed) unit a resumable stage.

For every system: simulate and reduce (:func:`~icml26.ro_hnn.study.prepare_system`, cheap and
deterministic, so it is redone on resume), then one stage per (model, seed)
(:func:`~icml26.ro_hnn.study.train_unit`), the PSD-Galerkin reference per system
(:func:`~icml26.ro_hnn.study.galerkin_reference`), then the metric tree and the figures. Everything
runs under ``jax.enable_x64(True)``: float64 without touching the caller's global JAX setting.
"""

from __future__ import annotations

from typing import Any

import jax

from icml26.ro_hnn.config import RunConfig
from icml26.ro_hnn.figures import plot_all
from icml26.ro_hnn.study import galerkin_reference, prepare_system, summarise, train_unit
from icml26.shared import RunDir, Stages

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Prepare the systems, train and evaluate every unit, summarise and plot.

    Args:
        config: the run's configuration.
        run_dir: the run folder (a killed run resumes at the first unfinished unit).

    Returns:
        The metric tree (see :func:`~icml26.ro_hnn.study.summarise`).
    """
    with jax.enable_x64(True):
        stages = Stages(run_dir)
        names = [*config.systems, *(["user"] if config.data_file else [])]
        systems = [prepare_system(config, name) for name in names]
        units = {
            p.name: {
                kind: [
                    stages.once(
                        f"{p.name}-{kind}-s{k}",
                        lambda p=p, kind=kind, k=k: train_unit(config, p, kind, k),
                    )
                    for k in range(config.n_seeds)
                ]
                for kind in config.models_for(p.name)
            }
            for p in systems
        }
        references = {
            p.name: stages.once(f"{p.name}-psd_galerkin", lambda p=p: galerkin_reference(config, p))
            for p in systems
        }
        metrics = summarise(config, systems, units, references)
    plot_all(units, run_dir)
    return metrics
