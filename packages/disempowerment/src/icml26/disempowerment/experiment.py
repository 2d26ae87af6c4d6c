"""The main job (``icml26 run disempowerment``) as a recipe of named stages.

``classify`` (scrub and classify the log) -> ``calibrate`` (confusion matrices on the
calibration set) -> ``analyse`` (the released figures) -> ``clusters``; on the synthetic
world also ``scrub`` (recall and precision on the planted PII), ``coverage`` (interval
coverage over fresh logs), ``nulls`` (every claim on the null worlds); with a judge,
``judge`` (the rubric judge measuring a subset of the log). Stage values land in
``<run>/stages/``; a killed run resumes at the first unfinished stage. Tables, figures, the
release manifest and the leak audit come last.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from icml26.disempowerment.config import RunConfig
from icml26.disempowerment.figures import plot_figures
from icml26.disempowerment.paper import CLAIMS
from icml26.disempowerment.pipeline import (
    NullTrainer,
    analyse_log,
    audit_outputs,
    calibrate,
    classify_log,
    fit_models,
    input_report,
    labels_of,
    load_data,
    make_judge,
    privacy_of,
    privacy_totals,
    release_clusters,
)
from icml26.disempowerment.scrub import PLACEHOLDERS
from icml26.disempowerment.tables import write_tables
from icml26.disempowerment.validation import (
    NullSettings,
    coverage_study,
    judge_study,
    null_study,
    scrub_study,
)
from icml26.shared import NUMPY, RunDir, Stages, seed_for

__all__ = ["run"]

T = TypeVar("T")


def _lazy(fn: Callable[[], T]) -> Callable[[], T]:
    """Computed on first use only (a resumed run may need neither the data nor the models)."""
    return cache(fn)


def run(config: RunConfig, run_dir: RunDir) -> dict[str, float]:
    """The main job: see the module docstring."""
    stages, synthetic = Stages(run_dir), not config.log_path
    privacy, intervals = privacy_of(config)
    data = _lazy(lambda: load_data(config))
    models = _lazy(lambda: fit_models(config, data()))
    arrays = stages.once("classify", lambda: classify_log(config, data(), models()), saver=NUMPY)
    labels = labels_of(arrays)
    cal = stages.once("calibrate", lambda: calibrate(config, data(), models()))
    analysed = stages.once("analyse", lambda: analyse_log(config, data(), labels, cal))
    namer = _lazy(lambda: make_judge(config.judge).backend if config.judge_names_clusters else None)
    clusters = stages.once(
        "clusters", lambda: release_clusters(config, data(), labels, models(), namer())
    )
    run_dir.write_json("clusters.json", clusters["release"])
    metrics: dict[str, Any] = {**cal["metrics"], **analysed["metrics"], **clusters["metrics"]}
    metrics[f"throughput.{config.engine}"] = float(arrays["throughput"][0])
    metrics["stage2.share_flagged"] = float(arrays["flagged"].mean())
    for ph, n in zip(PLACEHOLDERS, arrays["scrub_counts"], strict=True):
        metrics[f"scrub.replaced.{ph.strip('[]').lower()}"] = float(n)
    if synthetic:
        metrics |= stages.once(
            "scrub", lambda: scrub_study(data().log, data().pii, config.scrub_eval_n)
        )
    else:
        metrics |= input_report(data())
    if synthetic and config.coverage_repeats > 0:
        metrics |= stages.once(
            "coverage",
            lambda: coverage_study(
                models().classifier,
                repeats=config.coverage_repeats,
                n_log=config.coverage_n,
                n_calibration=config.coverage_calibration_n,
                calibration_positive_share=config.calibration_positive_share,
                privacy=privacy,
                intervals=intervals,
                seed=seed_for(config.seed, "coverage"),
            ),
        )
    if synthetic and config.null_seeds > 0:
        metrics |= stages.once("nulls", lambda: _nulls(config))
    if config.judge != "none":
        metrics |= stages.once(
            "judge",
            lambda: judge_study(
                make_judge(config.judge, config.judge_decoding, config.judge_calibration),
                models().classifier,
                data().log,
                data().calibration,
                data().planted,
                n_audit=config.judge_audit_n,
                n_log=config.judge_log_n,
                privacy=privacy,
                intervals=intervals,
                seed=seed_for(config.seed, "judge"),
            ),
        )
    metrics |= privacy_totals(config, metrics)
    plot_figures(run_dir, metrics, analysed["monthly"])
    write_tables(run_dir, metrics)
    metrics["memory.peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    pii = [p.text for p in data().pii] if synthetic else []
    metrics |= audit_outputs(run_dir, pii, metrics, dp=config.dp_epsilon is not None)
    return metrics


def _nulls(config: RunConfig) -> dict[str, float]:
    """Every claim on every null world, ``null_seeds`` seeds each, at this run's sizes."""
    privacy, intervals = privacy_of(config)
    settings = NullSettings(
        config.n_conversations,
        config.n_train,
        config.n_calibration,
        config.positive_share,
        config.calibration_positive_share,
        privacy,
        intervals,
    )
    return null_study(
        CLAIMS,
        NullTrainer(config),
        settings,
        seeds=config.null_seeds,
        seed=seed_for(config.seed, "nulls"),
        workers=config.study_workers,
    )
