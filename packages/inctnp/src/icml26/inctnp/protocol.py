"""The run's steps: train one model of one seed, evaluate one seed's pair, time updates.

Each returns a value a stage can store (a dict of tensors and numbers, or JSON), so a killed
run resumes at the first unfinished step. Seeds: for seed index ``k`` the models'
initialisation and the training task stream come from separate named streams of the run's
seed (:func:`icml26.shared.seed_for`); TNP-D and incTNP of one seed see the same tasks. Test
and validation tasks depend on the run's seed only, so every seed is scored on the same test
tasks (paired comparisons over seeds).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from icml26.inctnp.config import RunConfig
from icml26.inctnp.data import GPSource, TabularSource, TaskBatch, TemperatureSource
from icml26.inctnp.evaluation import (
    exchangeability_kl,
    incremental_marginals,
    model_predictor,
    ordered_marginals,
    permutation_spread,
    predictive_scores,
    streaming_marginals,
    update_latency,
)
from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.inctnp.training import TrainConfig, train
from icml26.shared import log, seed_for

__all__ = [
    "MODELS",
    "REFERENCES",
    "REGIMES",
    "evaluate_seed",
    "group_sources",
    "model_config",
    "time_updates",
    "train_model",
    "validation_nll",
]

#: The two networks compared.
MODELS = ("tnp", "inctnp")
#: Predictors that are not trained: the exact (or fitted) GP and its prior, which ignores the
#: context (the placebo of every "matches" claim: it must fail them).
REFERENCES = ("gp_oracle", "gp_prior")
#: ``targets``: both models at an equal number of targets seen; ``converged``: each at its
#: own convergence (or the step cap).
REGIMES = ("targets", "converged")

Source = GPSource | TabularSource | TemperatureSource


def group_sources(cfg: RunConfig, group: str) -> tuple[Source, dict[str, Source]]:
    """The training source of a group and its evaluation tasks by name.

    Args:
        cfg: the run's config.
        group: ``gp``, ``gp2d``, ``diabetes``, ``temperature`` or ``csv``.

    Returns:
        ``(training source, {task name: source})``.
    """
    if group == "gp":
        return GPSource("mix"), {f"gp_{k}": GPSource(k) for k in ("rbf", "matern52", "periodic")}
    if group == "gp2d":
        src = GPSource("rbf", dim_x=2)
        return src, {"gp2d_rbf": src}
    if group == "diabetes":
        tab = TabularSource.diabetes(cfg.seed)
        return tab, {"diabetes": tab}
    if group == "temperature":
        temp = TemperatureSource(cfg.seed)
        return temp, {"temperature": temp}
    assert cfg.csv_path is not None
    csv = TabularSource.from_csv(cfg.csv_path, cfg.csv_target, cfg.seed)
    return csv, {csv.name.replace("-", "_").replace(".", "_"): csv}


def model_config(cfg: RunConfig, dim_x: int, name: str) -> ModelConfig:
    """The architecture of ``name`` (``tnp`` or ``inctnp``): the same backbone for both.

    Args:
        cfg: the run's config.
        dim_x: the input dimension.
        name: the model.

    Returns:
        The model config.
    """
    return ModelConfig(
        dim_x=dim_x, width=cfg.width, layers=cfg.layers, heads=cfg.heads, causal=name == "inctnp"
    )


def _tasks(
    source: Source, cfg: RunConfig, stream: str, group: str, count: int, n: int, split: str
) -> list[TaskBatch]:
    g = torch.Generator().manual_seed(seed_for(cfg.seed, stream, group))
    return [source.sample(min(16, count - i), n, g, split) for i in range(0, count, 16)]


def validation_nll(
    model: NeuralProcess, batches: list[TaskBatch], ctx_sizes: tuple[int, ...]
) -> float:
    """The early-stopping criterion: mean NLL per target point over ``ctx_sizes``.

    Args:
        model: the model.
        batches: validation tasks (drawn from the training split).
        ctx_sizes: context sizes to average over.

    Returns:
        The validation NLL.
    """
    model.eval()
    predict = model_predictor(model)
    return float(np.mean([predictive_scores(predict, batches, c)[0] for c in ctx_sizes]))


def train_model(
    cfg: RunConfig, group: str, k: int, name: str, checkpoint_dir: Any = None
) -> dict[str, Any]:
    """Train one model of seed index ``k`` until convergence or the cap.

    Both models run on the same clock, **targets seen**: the cap is incTNP's targets in
    ``max_steps`` steps, validation evaluations come every ``eval_every`` incTNP steps' worth
    of targets (so ``patience`` evaluations span the same number of targets for both), and
    the learning rate decays over the target cap. TNP-D, which sees about half as many
    targets per step, takes about twice the steps.

    Args:
        cfg: the run's config.
        group: the task group.
        k: the seed index.
        name: ``tnp`` (context/target splits) or ``inctnp`` (autoregressive).
        checkpoint_dir: where training checkpoints go (a killed training resumes).

    Returns:
        ``{"best": state, "budget": state, "info": {...}}``: the converged (best validation)
        weights, the weights at ``target_budget`` targets seen, and the run's counters.
    """
    train_src, _ = group_sources(cfg, group)
    val = _tasks(train_src, cfg, "validation", group, cfg.val_tasks, cfg.n_points, "train")
    per_step = cfg.batch_size * (cfg.n_points - 1)  # incTNP's targets per step
    tcfg = TrainConfig(
        max_steps=4 * cfg.max_steps,  # a safety net: the target cap below stops first
        max_targets=cfg.max_steps * per_step,
        batch_size=cfg.batch_size,
        n_points=cfg.n_points,
        lr=cfg.lr,
        warmup=min(100, cfg.max_steps // 10 + 1),
        checkpoint_every=max(50, cfg.max_steps // 4),
        eval_every_targets=cfg.eval_every * per_step,
        patience=cfg.patience,
        min_delta=cfg.min_delta,
        target_budget=cfg.budget_steps * per_step,
    )
    torch.manual_seed(seed_for(cfg.seed, "init", group, k))
    model = build_model(model_config(cfg, train_src.dim_x, name))
    res = train(
        model,
        train_src,
        tcfg,
        strategy="autoregressive" if name == "inctnp" else "split",
        seed=seed_for(cfg.seed, "train", group, k),
        val_nll=lambda m: validation_nll(m, val, cfg.ctx_sizes),
        checkpoint_dir=checkpoint_dir,
        tag=f"{group}-{k}-{name}",
        device=cfg.device,
    )
    log(
        f"{group} seed {k} {name}: {res.steps} steps, {res.targets_seen} targets, "
        f"{'converged' if res.converged else 'step cap'}, val nll {min(c['val_nll'] for c in res.curve):.3f}"
        if res.curve
        else f"{group} seed {k} {name}: {res.steps} steps"
    )
    info = {
        "steps": res.steps,
        "targets_seen": res.targets_seen,
        "converged": res.converged,
        "budget_step": res.budget_step,
        "budget_reached": res.budget_reached,
        "curve": res.curve,
    }
    return {"best": res.best_state, "budget": res.budget_state, "info": info}


def _load(cfg: RunConfig, dim_x: int, name: str, state: dict[str, torch.Tensor]) -> NeuralProcess:
    model = build_model(model_config(cfg, dim_x, name))
    model.load_state_dict(state)
    return model.eval()


def _oracle(source: Source, n_ctx_zero: bool = False):  # type: ignore[no-untyped-def]
    if n_ctx_zero:  # the GP prior: ignores the context
        return lambda tb, n_ctx, xt: source.oracle(tb, 0, xt)
    return lambda tb, n_ctx, xt: source.oracle(tb, n_ctx, xt)


def _scores(predict: Any, batches: list[TaskBatch], ctx_sizes: tuple[int, ...]) -> dict[str, Any]:
    per = [predictive_scores(predict, batches, c) for c in ctx_sizes]
    return {
        "nll": float(np.mean([p[0] for p in per])),
        "rmse": float(np.mean([p[1] for p in per])),
        "nll_at": [p[0] for p in per],
    }


def _bayes(cfg: RunConfig, source: Source, marginals: Any, group: str) -> dict[str, float]:
    g = torch.Generator().manual_seed(seed_for(cfg.seed, "bayes-tasks", group))
    tb = source.sample(cfg.bayes_tasks, cfg.bayes_points, g, "test")
    om = ordered_marginals(
        marginals, tb, cfg.bayes_perms, torch.Generator().manual_seed(seed_for(cfg.seed, "orders"))
    )
    kl = exchangeability_kl(
        om, cfg.bayes_samples, torch.Generator().manual_seed(seed_for(cfg.seed, "kl-draws"))
    )
    return {"exchangeability_kl": kl, "implicit_bayes_gap": permutation_spread(om)}


def evaluate_seed(
    cfg: RunConfig, group: str, k: int, states: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Score seed ``k``'s two models in both regimes, the GP and its prior, on the group's test
    tasks (NLL and RMSE per target point over the context sizes; the implicit-Bayes measures
    of the converged models under one-at-a-time streaming).

    Args:
        cfg: the run's config.
        group: the task group.
        k: the seed index.
        states: ``{model: train_model(...) value}``.

    Returns:
        ``{task: {regime: {model: {"nll", "rmse", "nll_at", ...}}}}`` plus ``"info"``.
    """
    _, eval_srcs = group_sources(cfg, group)
    out: dict[str, Any] = {"info": {m: states[m]["info"] for m in MODELS}}
    for task, src in eval_srcs.items():
        batches = _tasks(src, cfg, "test", task, cfg.n_test_tasks, cfg.n_points, "test")
        refs = {
            "gp_oracle": _scores(_oracle(src), batches, cfg.ctx_sizes),
            "gp_prior": _scores(_oracle(src, True), batches, cfg.ctx_sizes),
        }
        refs["gp_oracle"] |= _bayes(
            cfg, src, lambda b, s=src: streaming_marginals(_oracle(s), b, 1), task
        )
        refs["gp_prior"] |= _bayes(
            cfg, src, lambda b, s=src: streaming_marginals(_oracle(s, True), b, 1), task
        )
        out[task] = {}
        for regime, key in (("targets", "budget"), ("converged", "best")):
            models = {m: _load(cfg, src.dim_x, m, states[m][key]) for m in MODELS}
            res = {m: _scores(model_predictor(models[m]), batches, cfg.ctx_sizes) for m in MODELS}
            if regime == "converged":
                res["tnp"] |= _bayes(
                    cfg,
                    src,
                    lambda b, m=models["tnp"]: streaming_marginals(model_predictor(m), b, 1),
                    task,
                )
                res["inctnp"] |= _bayes(
                    cfg, src, lambda b, m=models["inctnp"]: incremental_marginals(m, b, 1), task
                )
            out[task][regime] = res | refs
        r = out[task]["converged"]
        log(
            f"{task} seed {k}: nll tnp {r['tnp']['nll']:.3f} inctnp {r['inctnp']['nll']:.3f} gp {r['gp_oracle']['nll']:.3f}"
        )
    return out


def time_updates(cfg: RunConfig, models: dict[str, NeuralProcess]) -> dict[str, Any]:
    """Add one point to a context of N and predict one target: median and quartiles over
    ``latency_repeats`` repeats in this process, per model and N.

    Args:
        cfg: the run's config.
        models: ``{"tnp": ..., "inctnp": ...}`` (weights do not change the cost).

    Returns:
        ``{model: {"n<N>": {"median", "q25", "q75"}}}``.
    """
    out: dict[str, Any] = {m: {} for m in MODELS}
    for n in cfg.latency_sizes:
        for name in MODELS:
            lat = update_latency(
                models[name], n, cfg.latency_repeats, device=cfg.device, seed=cfg.seed
            )
            out[name][f"n{n}"] = {"median": lat.median, "q25": lat.q25, "q75": lat.q75}
    return out
