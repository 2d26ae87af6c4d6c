"""``icml26 run bll-ntk``: the paper's experiment as a recipe of resumable stages.

One stage per regression set, per classification set and per (bandit policy, seed), then the
1-D toy: a killed run started again into the same folder resumes at the first unfinished
stage. The summaries, tables and figures are computed from the stages' records.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.bll_ntk.config import RunConfig
from icml26.bll_ntk.figures import plot_regret, plot_reliability, plot_subsample, plot_toy
from icml26.bll_ntk.protocol import (
    bandit_seed,
    classification_set,
    dataset_label,
    regression_set,
    toy_bands,
)
from icml26.bll_ntk.summary import (
    bandit_metrics,
    classification_metrics,
    cost_metrics,
    pool_gains,
    regression_metrics,
)
from icml26.bll_ntk.tables import tables_markdown
from icml26.shared import NUMPY, RunDir, Stages

__all__ = ["run"]


def run(cfg: RunConfig, run_dir: RunDir) -> dict[str, float]:
    """Regression, classification + OOD, the wheel bandit and the toy, then the summaries.

    Args:
        cfg: the run's config.
        run_dir: the run folder.

    Returns:
        The flat metrics (keys in :mod:`icml26.bll_ntk.summary`).
    """
    stages = Stages(run_dir)
    reg = {
        dataset_label(n): stages.once(
            f"regression-{dataset_label(n)}", lambda n=n: regression_set(n, cfg)
        )
        for n in cfg.regression
    }
    cls = {
        n: stages.once(f"classification-{n}", lambda n=n: classification_set(n, cfg))
        for n in cfg.classification
    }
    bandit = {
        p: [
            stages.once(f"bandit-{p}-{k}", lambda p=p, k=k: bandit_seed(p, k, cfg))
            for k in range(cfg.bandit_seeds)
        ]
        for p in (cfg.bandit_policies if cfg.bandit_steps > 0 else ())
    }
    toy = stages.once("toy", lambda: toy_bands(cfg), saver=NUMPY) if cfg.toy else None

    metrics: dict[str, float] = {}
    gains: dict[str, dict[str, tuple[float, float]]] = {}
    if reg:
        m, g = regression_metrics(
            {k: v["splits"] for k, v in reg.items()}, {k: v["subsample"] for k, v in reg.items()}
        )
        metrics |= m | pool_gains(g, "regression")
        gains |= g
    if cls:
        m, g = classification_metrics(
            {k: v["seeds"] for k, v in cls.items()}, {k: v["subsample"] for k, v in cls.items()}
        )
        metrics |= m | pool_gains(g, "classification")
        gains |= g
    metrics |= pool_gains(gains, "all")
    metrics |= cost_metrics(
        {k: v["cost"] for k, v in (reg | cls).items() if "cost" in v},
        {k: v["train_steps"] for k, v in reg.items() if "train_steps" in v},
    )
    if bandit:
        metrics |= bandit_metrics(
            {
                p: {k: [r[k] for r in runs] for k in runs[0] if k != "curve"}
                for p, runs in bandit.items()
            }
        )
    _write_tables(run_dir, metrics, list(reg) + list(cls))
    _figures(run_dir, reg, cls, bandit, toy, cfg.bandit_steps)
    return metrics


def _write_tables(run_dir: RunDir, metrics: dict[str, float], sets: list[str]) -> None:
    (run_dir.path / "tables.md").write_text(tables_markdown(metrics, sets), encoding="utf-8")


def _figures(
    run_dir: RunDir,
    reg: dict[str, Any],
    cls: dict[str, Any],
    bandit: dict[str, list[dict[str, Any]]],
    toy: dict[str, np.ndarray] | None,
    steps: int,
) -> None:
    reliability = {
        name: {
            m: (np.asarray(p), np.asarray(v["reliability"]["labels"]))
            for m, p in v["reliability"]["probs"].items()
        }
        for name, v in cls.items()
    }
    if reliability:
        plot_reliability(reliability, run_dir.plot_path("reliability"))
    sub = {
        **{k: v["subsample"] for k, v in reg.items()},
        **{k: v["subsample"] for k, v in cls.items()},
    }
    both = {k: v.get("both", {}) for k, v in sub.items() if v.get("both")}
    if both:
        plot_subsample(
            both,
            {k: v.get("proj", {}) for k, v in sub.items()},
            run_dir.plot_path("subsample_error"),
        )
    if bandit:
        curves = {p: np.mean([r["curve"] for r in runs], axis=0) for p, runs in bandit.items()}
        plot_regret(curves, run_dir.plot_path("regret"), steps)
    if toy is not None:
        methods = [k.split(".", 1)[1] for k in toy if k.startswith("mean.")]
        bands = {m: (toy[f"mean.{m}"], toy[f"std.{m}"]) for m in methods}
        plot_toy(toy["x"], toy["y"], toy["grid"], bands, run_dir.plot_path("toy_1d"))
