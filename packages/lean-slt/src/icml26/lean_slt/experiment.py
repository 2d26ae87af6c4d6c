"""The main job, ``icml26 run lean-slt``: four studies as resumable stages, then figures.

A killed run started again into the same folder resumes at the first unfinished study.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from icml26.lean_slt.config import RunConfig
from icml26.lean_slt.figures import plot_all
from icml26.lean_slt.studies import ConcentrationStudy, DudleyStudy, LeastSquaresStudy, MaureyStudy
from icml26.lean_slt.tables import markdown_tables
from icml26.lean_slt.theorems import THEOREM_MAP, UPSTREAM_COMMIT
from icml26.shared import RunDir, Stages, atomic_write_text, rng_for

__all__ = ["run"]

_STUDIES = {
    "dudley": DudleyStudy,
    "concentration": ConcentrationStudy,
    "least_squares": LeastSquaresStudy,
    "maurey": MaureyStudy,
}


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """Run the studies of ``config`` (each a stage, its own random stream), plot, summarise.

    Args:
        config: the run's configuration.
        run_dir: the run folder.

    Returns:
        The flat metrics of every study, plus ``checks.failed`` (theorem violations beyond
        Monte Carlo error: always 0 for a correct implementation).
    """
    stages = Stages(run_dir)
    done = {
        part: stages.once(
            part,
            lambda part=part: asdict(
                _STUDIES[part].from_config(config).run(rng_for(config.seed, part))
            ),
        )
        for part in config.parts
    }
    plot_all({part: result["curves"] for part, result in done.items()}, run_dir)
    run_dir.write_json(
        "theorem_map.json",
        {"upstream_commit": UPSTREAM_COMMIT, "rows": [asdict(r) for r in THEOREM_MAP]},
    )
    metrics: dict[str, Any] = {}
    for result in done.values():
        metrics.update(result["metrics"])
    atomic_write_text(run_dir.path / "tables.md", markdown_tables(metrics) + "\n")
    metrics["checks.failed"] = float(
        sum(v for k, v in metrics.items() if k.startswith("checks.") and k.endswith("violations"))
    )
    return metrics
