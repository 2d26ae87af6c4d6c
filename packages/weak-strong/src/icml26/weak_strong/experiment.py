"""The main job (``icml26 run weak-strong``): a recipe of named stages.

1. ``population``: optimal policies on designed score laws, checked against an LP solver
   (:mod:`~icml26.weak_strong.study`); ``step_size_selection``: the step sizes on a
   validation stream no claim reads;
2. one stage per stream of ``config.streams``: every policy at every target
   (:mod:`~icml26.weak_strong.evaluate`);
3. ``math_lengths``: the online policy's errors and bound against the math stream's length,
   with the slack the guarantee needs (:mod:`~icml26.weak_strong.lengths`);
4. ``front_<stream>``: the error / strong-call front over step sizes on the math and Sudoku
   streams;

then the figures. Each stage is saved under ``<run>/stages/``: a killed run resumes at the
first unfinished one. Metric keys: see :mod:`~icml26.weak_strong.evaluate`.
"""

from __future__ import annotations

from typing import Any

from icml26.shared import RunDir, Stages
from icml26.weak_strong.config import RunConfig
from icml26.weak_strong.evaluate import (
    base_stream,
    evaluate_stream,
    evaluate_sudoku,
    select_step_size,
    step_size_front,
)
from icml26.weak_strong.figures import make_plots
from icml26.weak_strong.lengths import length_study
from icml26.weak_strong.study import population_laws, population_study

__all__ = ["run"]

#: Streams on which the step-size front is measured (when the run has them).
FRONT_STREAMS = ("math", "sudoku")


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Run every policy on every stream; return the metrics (NaN as None).

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The flat metrics dict.
    """
    stages = Stages(run_dir)
    metrics: dict[str, Any] = dict(
        stages.once("population", lambda: population_study(config.alphas, config.seed))
    )
    if config.front_step_sizes:
        metrics.update(
            stages.once(
                "step_size_selection",
                lambda: select_step_size(config, config.front_step_sizes),
            )
        )
    plot_data: dict[str, Any] = {}
    for name in config.streams:
        part = stages.once(
            name,
            lambda name=name: (
                evaluate_sudoku(config) if name == "sudoku" else evaluate_stream(name, config)
            ),
        )
        metrics.update(part["metrics"])
        plot_data[name] = part["plot"]
    if "math" in config.streams and config.length_orders > 0:

        def lengths() -> dict[str, Any]:
            math = base_stream("math", config)
            return length_study("math", math.scores, math.labels, config)

        study = stages.once("math_lengths", lengths)
        metrics.update(study["metrics"])
        plot_data["math"].update(study["plot"])
    for name in (s for s in FRONT_STREAMS if s in config.streams and config.front_step_sizes):
        metrics.update(
            stages.once(
                f"front_{name}",
                lambda name=name: step_size_front(name, config, config.front_step_sizes),
            )
        )
    make_plots(config, run_dir, plot_data, population_laws())
    return metrics
