"""``icml26 run nppr``: the paper's comparison as a recipe of named stages.

Stages (each saved under ``<run>/stages/``; a killed run resumes at the first unfinished one):

1. ``train_<model>_r<r>``: each classifier of each replicate, trained on the train split
   (weights; a user's ``model_path`` is loaded instead);
2. ``measure_<model>_r<r>``: every figure at the headline budget
   (:func:`icml26.nppr.evaluate.measure_model`);
3. ``sweep_<model>``: the budget sweep (first replicate);
4. ``extra_<dataset>_<model>``: the headline figures on other embedded data (first replicate).

Then the summary over replicates (:func:`icml26.nppr.tables.replicate_summary`) and the plots
(:mod:`icml26.nppr.figures`). The runner sets threads and the seed from the config.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch import nn

from icml26.nppr.config import RunConfig, parse_model_name
from icml26.nppr.data.loaders import load_dataset
from icml26.nppr.evaluate import (
    Splits,
    load_gmm,
    load_uaps,
    make_splits,
    measure_model,
    sweep_budgets,
)
from icml26.nppr.figures import plot_mixtures, plot_sweep
from icml26.nppr.models import ClassifierSpec, build_classifier, load_user_model
from icml26.nppr.tables import replicate_summary
from icml26.nppr.train import TrainConfig, train_for_run
from icml26.shared import TORCH, RunDir, Stages, seed_for

__all__ = ["run"]


def _classifier(
    stages: Stages, cfg: RunConfig, splits: Splits, name: str, tag: str, run_dir: RunDir
) -> nn.Module:
    """Stage ``train_<tag>``: the classifier ``name`` (``<arch>_<std|at>``) or the user's."""
    if name == "user":
        assert cfg.model_path is not None
        return load_user_model(Path(cfg.model_path), cfg.device)
    arch, training = parse_model_name(name)
    spec = ClassifierSpec(arch, splits.input_shape, splits.n_classes, cfg.width)
    tcfg = TrainConfig(
        "std" if training == "std" else cfg.at_method,
        cfg.epochs,
        cfg.batch_size,
        cfg.lr,
        cfg.at_eps,
    )
    train = partial(
        train_for_run,
        tag,
        splits.x_train,
        splits.y_train,
        spec,
        tcfg,
        seed=seed_for(cfg.seed, "model", tag),
        device=cfg.device,
        checkpoint_dir=run_dir.path / "checkpoints",
        tag=tag,
        log=run_dir.log_metrics,
    )
    model = build_classifier(spec)
    model.load_state_dict(stages.once(f"train_{tag}", train, saver=TORCH))
    return model.to(cfg.device).eval()


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job: the stages above, then the summary and the plots.

    Args:
        config: the run's config.
        run_dir: the run folder.

    Returns:
        The first replicate's figures (with 95% intervals), the sweep, the extra datasets,
        and the means and standard errors over replicates.

    Raises:
        RuntimeError: a CUDA device asked for and not available.
    """
    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {config.device!r} requested but CUDA is not available")
    stages = Stages(run_dir)
    data = load_dataset(config.dataset, path=config.data_path)
    run_dir.update_env(device=config.device, data_split=data.split)
    names = ("user",) if config.model_path is not None else config.models
    gmm_dir = run_dir.path / "gmm"
    replicates: list[dict[str, float]] = []
    first: dict[str, tuple[nn.Module, Splits]] = {}
    for r in range(config.replicates):
        splits, seed, figures = (
            make_splits(data, config, r),
            seed_for(config.seed, "replicate", r),
            {},
        )
        for name in names:
            model = _classifier(stages, config, splits, name, f"{name}_r{r}", run_dir)
            measure = partial(
                measure_model, config, model, splits, name, seed, gmm_dir if r == 0 else None
            )
            figures.update(stages.once(f"measure_{name}_r{r}", measure))
            first.setdefault(name, (model, splits))
        replicates.append(figures)
    metrics: dict[str, Any] = dict(replicates[0])
    metrics.update(replicate_summary(replicates, names))
    seed0 = seed_for(config.seed, "replicate", 0)
    for name, (model, splits) in first.items():
        metrics.update(
            stages.once(
                f"sweep_{name}",
                partial(sweep_budgets, config, model, splits, name, seed0, replicates[0]),
            )
        )
    for ds in config.extra_datasets:
        splits = make_splits(load_dataset(ds), config, 0)
        for name in config.extra_models:
            tag = f"{ds}_{name}"
            model = _classifier(stages, config, splits, name, f"{tag}_r0", run_dir)
            metrics.update(
                stages.once(
                    f"extra_{tag}", partial(measure_model, config, model, splits, tag, seed0)
                )
            )
    plot_sweep(run_dir, metrics, list(first), config.sweep_eps)
    name, (model, splits) = next(iter(first.items()))
    gmms = {f: load_gmm(config, model, splits, gmm_dir, name, f) for f in config.forms}
    x, y = splits.x_eval[:200].to(config.device), splits.y_eval[:200].to(config.device)
    plot_mixtures(run_dir, config, name, gmms, load_uaps(gmm_dir, name), x, y)
    return metrics
