"""The ``icml26 run eco`` job: a recipe of named trainings, then the figures and tables.

Every training the config asks for (:func:`~icml26.eco.jobs.plan`: the schemes on the
workloads over paired seeds, the learning-rate sweep, the ablations) is one stage of
:class:`~icml26.shared.Stages`, so a killed run resumes at the first unfinished training.
The metrics come from :func:`~icml26.eco.study.summarise`; tables and plots follow.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from icml26.eco.config import RunConfig
from icml26.eco.figures import plot_figures
from icml26.eco.jobs import build_workloads, plan, run_job
from icml26.eco.study import summarise
from icml26.eco.tables import write_tables
from icml26.shared import Stages
from icml26.shared.rundir import RunDir

__all__ = ["run"]


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Train every planned job (resumable), then summarise, tabulate and plot.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The nested metrics (see the README's key list).
    """
    run_dir.update_env(torch=torch.__version__, threads=torch.get_num_threads())
    stages = Stages(run_dir)
    jobs = plan(config)
    workloads = build_workloads(config)
    records = [
        stages.once(job.stage, lambda job=job: run_job(job, workloads, config)) for job in jobs
    ]
    metrics = summarise(config, jobs, records)
    write_tables(config, jobs, records, metrics, run_dir)
    plot_figures(config, jobs, records, metrics, run_dir)
    run_dir.update_env(cpu_seconds=time.process_time())
    return metrics
