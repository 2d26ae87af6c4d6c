"""The main job, ``icml26 run transport-kl``: four studies as resumable stages, then figures."""

from __future__ import annotations

from typing import Any

import jax

from icml26.shared import RunDir, Stages, atomic_write_text, rng_for, seed_for
from icml26.transport_kl.config import RunConfig
from icml26.transport_kl.figures import plot_all
from icml26.transport_kl.pareto import FrontSettings, front_study
from icml26.transport_kl.studies import (
    ClosedFormSettings,
    closed_form_study,
    degeneration_study,
    kalman_study,
)
from icml26.transport_kl.tables import front_grid_table

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Closed forms, degeneration, control fronts and the Kalman example; figures; metrics.

    Args:
        config: the run's configuration.
        run_dir: the run folder (a killed run resumes at the first unfinished stage).

    Returns:
        The flat metrics of every stage.
    """
    c = config
    run_dir.update_env(device=str(jax.devices()[0]), jax_backend=jax.default_backend())
    stages = Stages(run_dir)
    closed = ClosedFormSettings(
        c.dim, c.n_pairs, c.flow_steps, c.lam, c.student_t_dof, c.particles, c.w2_search
    )
    fronts = FrontSettings(
        axes=c.axes,
        dt=c.dt,
        gamma=c.gamma,
        rho=c.rho,
        kappa=c.kappa,
        floor=c.noise_floor,
        lam=c.lam,
        gain_spread=c.gain_spread,
        betas=c.betas,
        beta_span=c.beta_span,
        levels=c.levels,
        kappas=c.kappas,
        spreads=c.spreads,
    )
    done = {
        "closed_forms": stages.once(
            "closed_forms", lambda: closed_form_study(closed, rng_for(c.seed, "pairs"))
        ),
        "degeneration": stages.once(
            "degeneration",
            lambda: degeneration_study(
                c.dim,
                c.eps_grid,
                c.lam,
                c.student_t_dof,
                c.kl_mc_samples,
                seed_for(c.seed, "student_t"),
            ),
        ),
        "fronts": stages.once(
            "fronts", lambda: front_study(fronts, rng_for(c.seed, "systems"), c.systems)
        ),
        "kalman": stages.once(
            "kalman",
            lambda: kalman_study(
                c.kalman_dim,
                c.kalman_ensemble,
                c.lam,
                c.kalman_t_end,
                c.kalman_steps,
                rng_for(c.seed, "kalman"),
            ),
        ),
    }
    plot_all({name: result["curves"] for name, result in done.items()}, run_dir)
    metrics: dict[str, Any] = {}
    for result in done.values():
        metrics.update(result["metrics"])
    table = front_grid_table(metrics, c.kappas, c.spreads)
    atomic_write_text(run_dir.path / "tables.md", table)
    return metrics
