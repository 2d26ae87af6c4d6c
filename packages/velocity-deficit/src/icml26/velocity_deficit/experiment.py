"""``icml26 run velocity-deficit``: the recipe of stages (method steps live in ``evaluate``).

Per dataset: the FD classifier and the exact field's reference figures. Per regime (``fit``:
the near-exact control; ``short``: under-trained) and seed: the FM baseline and the MAFM
models trained, then one evaluation (ratios, fit check, SSC and MAFM chosen on validation,
every variant sampled and scored on the test split). Every stage resumes from its file.
"""

from __future__ import annotations

import json
from typing import Any

from icml26.shared import NUMPY, TORCH, RunDir, Stages
from icml26.velocity_deficit.config import RunConfig
from icml26.velocity_deficit.evaluate import (
    Prepared,
    SeedResult,
    evaluate_seed,
    fit_classifier,
    load_data,
    load_model,
    mafm_family,
    model_names,
    prepare_dataset,
    reference_figures,
    train_model,
)
from icml26.velocity_deficit.figures import plot_figures
from icml26.velocity_deficit.metrics import FeatureClassifier
from icml26.velocity_deficit.summary import deficit_slope, fd_gains, merge_seeds

__all__ = ["run"]


def _prepare(stages: Stages, spec: str, config: RunConfig) -> Prepared:
    ds = load_data(spec, config)
    state = stages.once(
        f"classifier-{ds.name}",
        lambda: fit_classifier(ds, config, config.device).state_dict(),
        saver=TORCH,
    )
    clf = FeatureClassifier(ds.dim, ds.n_classes)
    clf.load_state_dict(state)
    clf = clf.to(config.device).eval()
    reference = stages.once(f"reference-{ds.name}", lambda: reference_figures(ds, clf, config))
    return prepare_dataset(spec, config, clf, reference)


def _one_seed(
    stages: Stages, prep: Prepared, spec: str, regime: str, config: RunConfig, seed: int
) -> SeedResult:
    lambdas = model_names(spec, config, regime)
    size = config.regime(regime)
    models = {}
    for method, lam in lambdas.items():
        tag = f"{prep.name}-{regime}-{method}-s{seed}"
        family = mafm_family(method)
        state = stages.once(
            f"train-{tag}",
            lambda lam=lam, tag=tag, family=family: train_model(
                prep, size, lam, config, seed, tag, family=family
            ),
            saver=TORCH,
        )
        models[method] = load_model(state, prep.ds.dim, size, config.device)
    arrays = stages.once(
        f"evaluate-{prep.name}-{regime}-s{seed}",
        lambda: evaluate_seed(prep, models, lambdas, regime, config, seed).pack(),
        saver=NUMPY,
    )
    result = SeedResult.unpack(arrays)
    result.metrics |= fd_gains(
        result.metrics, prep.name, regime, config.nfe, config.reference_nfe, config.select_nfe
    )
    return result


def run(config: RunConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job (module docstring).

    Args:
        config: the run's :class:`RunConfig`.
        run_dir: the run folder.

    Returns:
        Flat metrics: seed means, standard errors and paired gains (see
        :mod:`icml26.velocity_deficit.evaluate` and :mod:`icml26.velocity_deficit.summary`).
    """
    stages = Stages(run_dir)
    run_dir.update_env(device=config.device, torch_threads=config.threads)
    metrics: dict[str, Any] = {}
    per_seed: dict[str, list[dict[str, float]]] = {}
    samples: dict[str, dict[str, Any]] = {}
    dims: dict[str, int] = {}
    shapes: dict[str, Any] = {}
    for spec in config.datasets:
        prep = _prepare(stages, spec, config)
        metrics |= prep.metrics
        shapes[prep.name] = prep.ds.image_shape
        if prep.ds.gmm is not None:
            dims[prep.name] = prep.ds.dim
        for regime in config.regimes:
            seeds = [config.seed + i for i in range(config.seeds)]
            results = [_one_seed(stages, prep, spec, regime, config, s) for s in seeds]
            per_seed[f"{prep.name}.{regime}"] = [r.metrics for r in results]
            metrics |= merge_seeds([r.metrics for r in results])
            samples[f"{prep.name}.{regime}"] = results[0].samples | {
                "real": prep.ds.x_test[: prep.n]
            }
    if len(set(dims.values())) >= 2:
        for regime in config.regimes:
            metrics |= deficit_slope(_by_seed(per_seed, regime, config.seeds), dims, regime)
    with run_dir.artefact("per_seed.json") as tmp:  # the seed spread behind every mean
        tmp.write_text(json.dumps(per_seed, indent=1, allow_nan=True))
    plot_figures(metrics, per_seed, samples, config, run_dir, shapes)
    return metrics


def _by_seed(
    per_seed: dict[str, list[dict[str, float]]], regime: str, seeds: int
) -> list[dict[str, float]]:
    """Seed ``i``'s metrics over every dataset of ``regime``, for each ``i``."""
    keys = [k for k in per_seed if k.endswith(f".{regime}")]
    return [{k: v for key in keys for k, v in per_seed[key][i].items()} for i in range(seeds)]
