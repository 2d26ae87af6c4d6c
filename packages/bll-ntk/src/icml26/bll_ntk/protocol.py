"""The run's steps, one data set (or bandit seed) at a time, each returning JSON-able records.

Random streams: each regression split, classification seed, network and bandit seed draws
from its own named stream of the run's seed (:func:`icml26.shared.seed_for`), so no two
parts replay each other's numbers.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import torch

from icml26.bll_ntk import metrics as M
from icml26.bll_ntk.bandit import NeuralLinearSettings, run_wheel
from icml26.bll_ntk.baselines import MAP
from icml26.bll_ntk.config import RunConfig
from icml26.bll_ntk.data import (
    RegressionSplit,
    load_classification,
    load_regression,
    regression_split,
)
from icml26.bll_ntk.evaluate import (
    MethodSettings,
    cost_seconds,
    evaluate_classification,
    evaluate_regression,
    fit_all,
    subsample_errors,
)
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.train import TrainSpec, train_regressor
from icml26.shared import log, seed_for

__all__ = [
    "bandit_seed",
    "bandit_settings",
    "choose_train_steps",
    "classification_set",
    "dataset_label",
    "method_settings",
    "regression_set",
    "toy_bands",
]


def dataset_label(name: str) -> str:
    """The metric-key part of a data set (``csv:<path>`` -> ``csv``).

    Args:
        name: the configured data set name.

    Returns:
        The label.
    """
    return "csv" if name.startswith("csv:") else name


def method_settings(
    cfg: RunConfig, hidden: tuple[int, ...], steps: int, seed: int
) -> MethodSettings:
    """The per-split method settings of the run.

    Args:
        cfg: the run's config.
        hidden: the MLP's hidden widths.
        steps: its training steps.
        seed: the split's model seed.

    Returns:
        The settings.
    """
    return MethodSettings(
        hidden=hidden,
        activation=cfg.activation,
        spec=TrainSpec(
            steps=steps, lr=cfg.lr, weight_decay=cfg.weight_decay, batch_size=cfg.batch_size
        ),
        ridge=cfg.ridge,
        subsample=cfg.subsample,
        ensemble_size=cfg.ensemble_size,
        dropout=cfg.dropout,
        mc_samples=cfg.mc_samples,
        predictive=cfg.predictive,
        lla_max_params=cfg.lla_max_params,
        select=cfg.select,
        seed=seed % 2**31,  # DeepEnsemble multiplies it by 1000: keep torch's seeds in range
    )


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if not k.startswith("_") and k != "probs"}


def _mean_errors(runs: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for errs in runs:
        for kind, per in errs.items():
            for size, v in per.items():
                acc[kind][size].append(v)
    return {k: {s: float(np.mean(v)) for s, v in per.items()} for k, per in acc.items()}


def choose_train_steps(split: RegressionSplit, cfg: RunConfig, seed: int) -> dict[str, Any]:
    """The MAP network's training steps, chosen on one split's **validation** rows.

    For each candidate of ``cfg.train_steps_grid`` a network is trained on the split's
    training rows; its Gaussian NLL on the validation rows (noise = the training MSE) picks
    the steps for every split of the set. Test rows play no part.

    Args:
        split: the split (its validation rows decide).
        cfg: the run's config.
        seed: the network seed.

    Returns:
        ``{"steps": chosen, "val_nll": {"<steps>": validation NLL}}``.
    """
    scores: dict[str, float] = {}
    y_val = split.y_val.double().numpy().reshape(-1)
    for steps in cfg.train_steps_grid:
        torch.manual_seed(seed)
        net = make_mlp(split.x_train.shape[1], 1, cfg.hidden, activation=cfg.activation)
        spec = TrainSpec(
            steps=steps, lr=cfg.lr, weight_decay=cfg.weight_decay, batch_size=cfg.batch_size
        )
        train_regressor(net, split.x_train, split.y_train, spec, seed=seed)
        pred = MAP(net, "regression").fit(split.x_train, split.y_train).predict(split.x_val)
        mean = pred.mean[:, 0].double().numpy()
        scores[str(steps)] = M.gaussian_nll(y_val, mean, pred.total_var[:, 0].double().numpy())
    best = min(scores, key=lambda k: scores[k])
    return {"steps": int(best), "val_nll": scores}


def regression_set(name: str, cfg: RunConfig) -> dict[str, Any]:
    """Every method on ``n_splits`` random splits of one regression set.

    The training steps come from :func:`choose_train_steps` on the first split (or
    ``cfg.train_steps`` without a grid); the first split also times ``ntk_bll`` against
    ``lla`` (:func:`icml26.bll_ntk.evaluate.cost_seconds`).

    Args:
        name: the data set.
        cfg: the run's config.

    Returns:
        ``{"splits": [record per split], "subsample": mean subsampling errors,
        "train_steps": {...}, "cost": {method: median seconds}}``.
    """
    X, y = load_regression(name)
    label = dataset_label(name)
    splits, errs = [], []
    out: dict[str, Any] = {}
    for k in range(cfg.n_splits):
        split = regression_split(
            X, y, seed=seed_for(cfg.seed, "split", label, k), val_fraction=cfg.val_fraction
        )
        model_seed = seed_for(cfg.seed, "model", label, k)
        if k == 0:
            out["train_steps"] = (
                choose_train_steps(split, cfg, model_seed % 2**31)
                if cfg.train_steps_grid
                else {"steps": cfg.train_steps, "val_nll": {}}
            )
        s = method_settings(cfg, cfg.hidden, out["train_steps"]["steps"], model_seed)
        rec = evaluate_regression(split, s)
        if k == 0:
            val = (split.x_val, split.y_val)
            out["cost"] = cost_seconds(
                rec["_fitted"], split.x_train, split.y_train, split.x_test, val, s, cfg.cost_repeats
            )
        if k < cfg.subsample_splits:
            sizes = tuple(m for m in cfg.subsample_sizes if m < split.x_train.shape[0])
            errs.append(
                subsample_errors(
                    rec["_fitted"],
                    split.x_train,
                    split.y_train,
                    split.x_test,
                    sizes,
                    cfg.subsample_repeats,
                    seed_for(cfg.seed, "subsample", label, k) % 2**31,
                )
            )
        splits.append(_public(rec))
        nll = ", ".join(f"{m} {r['nll']:.3f}" for m, r in rec["metrics"].items())
        log(f"{label} split {k}: nll {nll}")
    return {"splits": splits, "subsample": _mean_errors(errs), **out}


def classification_set(name: str, cfg: RunConfig) -> dict[str, Any]:
    """Every method on ``cls_seeds`` seeds of one classification set and its OOD sets.

    Args:
        name: the data set.
        cfg: the run's config.

    Returns:
        ``{"seeds": [record per seed], "subsample": errors (first seed),
        "reliability": {"labels": [...], "probs": {method: [...]}} (first seed),
        "cost": {method: median fit + predict seconds} (first seed)}``.
    """
    seeds: list[dict[str, Any]] = []
    out: dict[str, Any] = {}
    for k in range(cfg.cls_seeds):
        task = load_classification(
            name, seed=seed_for(cfg.seed, "split", name, k) % 2**32, val_fraction=cfg.val_fraction
        )
        s = method_settings(
            cfg, cfg.cls_hidden, cfg.cls_train_steps, seed_for(cfg.seed, "model", name, k)
        )
        rec = evaluate_classification(task, s)
        seeds.append(_public(rec))
        summary = ", ".join(
            f"{m} nll {r['nll']:.3f} ece {r['ece']:.3f}" for m, r in rec["metrics"].items()
        )
        log(f"{name} seed {k}: {summary}")
        if k == 0:
            sizes = tuple(m for m in cfg.subsample_sizes if m < task.x_train.shape[0])
            out["subsample"] = subsample_errors(
                rec["_fitted"],
                task.x_train,
                task.y_train,
                task.x_test,
                sizes,
                cfg.subsample_repeats,
                seed_for(cfg.seed, "subsample", name) % 2**31,
            )
            out["reliability"] = {"labels": task.y_test.tolist(), "probs": rec["probs"]}
            val = (task.x_val, task.y_val)
            out["cost"] = cost_seconds(
                rec["_fitted"], task.x_train, task.y_train, task.x_test, val, s, cfg.cost_repeats
            )
    return {"seeds": seeds, **out}


def bandit_settings(cfg: RunConfig) -> NeuralLinearSettings:
    """NeuralLinear's settings from the run's config.

    Args:
        cfg: the run's config.

    Returns:
        The settings (Riquelme et al.'s prior, a0 = b0 = 6, λ = 0.25).
    """
    return NeuralLinearSettings(
        steps=cfg.bandit_steps,
        delta=cfg.bandit_delta,
        hidden=cfg.bandit_hidden,
        retrain_every=cfg.bandit_retrain_every,
        train_steps=cfg.bandit_train_steps,
        lr=cfg.bandit_lr,
        ridge=cfg.ridge,
        projection_subsample=cfg.bandit_projection_subsample,
        noise=cfg.bandit_noise or None,
    )


def bandit_seed(policy: str, k: int, cfg: RunConfig) -> dict[str, Any]:
    """One wheel-bandit run of ``policy`` on seed ``k`` (the same contexts for every policy).

    Args:
        policy: the policy.
        k: the seed index.
        cfg: the run's config.

    Returns:
        ``{"regret": final regret, "found", "trace_ratio", "var_ratio", "prior_share",
        "block_spread", "curve": [...]}`` (the curve thinned to at most 200 points; the
        diagnostics in :class:`icml26.bll_ntk.bandit.BanditRun`).
    """
    run = run_wheel(policy, bandit_settings(cfg), seed_for(cfg.seed, "bandit", k))
    stride = max(1, len(run.regret) // 200)
    log(f"wheel bandit {policy} seed {k}: regret {run.regret[-1]:.1f}")
    return {
        "regret": float(run.regret[-1]),
        "found": run.outer_found,
        "trace_ratio": run.trace_ratio,
        "var_ratio": run.var_ratio,
        "prior_share": run.prior_share,
        "block_spread": run.block_spread,
        "curve": run.regret[stride - 1 :: stride].tolist(),
    }


def toy_bands(cfg: RunConfig) -> dict[str, np.ndarray]:
    """Every method on a 1-D regression with a gap in the inputs (for the bands figure).

    Args:
        cfg: the run's config.

    Returns:
        ``x``, ``y``, ``grid`` and ``mean.<m>`` / ``std.<m>`` on the grid per method.
    """
    gen = torch.Generator().manual_seed(seed_for(cfg.seed, "toy"))
    x = torch.cat(
        [torch.rand(80, 1, generator=gen) * 1.4 - 2.0, torch.rand(80, 1, generator=gen) * 1.4 + 0.6]
    )
    y = torch.sin(2.0 * x) + 0.1 * torch.randn(x.shape, generator=gen)
    perm = torch.randperm(160, generator=gen)
    tr, va = perm[:128], perm[128:]
    s = method_settings(cfg, cfg.hidden, max(cfg.train_steps, 1500), seed_for(cfg.seed, "toy"))
    fitted = fit_all(x[tr], y[tr], 1, "regression", s, (x[va], y[va]))
    grid = torch.linspace(-3.5, 3.5, 300)[:, None]
    out = {"x": x[:, 0].numpy(), "y": y[:, 0].numpy(), "grid": grid[:, 0].numpy()}
    for m, model in fitted.models.items():
        pred = model.predict(grid)
        out[f"mean.{m}"] = pred.mean[:, 0].detach().cpu().numpy()
        out[f"std.{m}"] = pred.total_var[:, 0].sqrt().detach().cpu().numpy()
    return out
