"""The ``icml26 run bll-ntk`` and ``icml26 bench bll-ntk`` jobs."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import numpy as np
import torch

from icml26.bll_ntk.bandit_runner import BanditSettings, run_thompson
from icml26.bll_ntk.bll import BLL, NTKBLL, LinearisedLaplace
from icml26.bll_ntk.data import load_classification, load_regression, regression_split
from icml26.bll_ntk.evaluate import MethodSettings, evaluate_classification, evaluate_regression
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.paper import METHODS, BenchConfig, Config
from icml26.bll_ntk.plots import plot_regret, plot_reliability, plot_subsample, plot_toy
from icml26.bll_ntk.train import TrainSpec, train_regressor
from icml26.shared import RunDir, log, seed_everything

__all__ = ["bench", "run"]


def _settings(cfg: Config, hidden: tuple[int, ...], steps: int, seed: int) -> MethodSettings:
    return MethodSettings(
        hidden=hidden,
        activation=cfg.activation,
        spec=TrainSpec(
            steps=steps, lr=cfg.lr, weight_decay=cfg.weight_decay, batch_size=cfg.batch_size
        ),
        ridge=cfg.ridge,
        hyperparameters=cfg.hyperparameters,
        subsample=cfg.subsample,
        ensemble_size=cfg.ensemble_size,
        dropout=cfg.dropout,
        mc_samples=cfg.mc_samples,
        predictive=cfg.predictive,
        lla_max_params=cfg.lla_max_params,
        seed=seed,
    )


def _var_ge(ntk: torch.Tensor, bll: torch.Tensor) -> float:
    """Fraction of entries with ntk >= bll (relative tolerance 1e-7 for round-off)."""
    return float((ntk >= bll * (1 - 1e-7) - 1e-12).double().mean())


def _subsample_errors(
    fitted: Any,
    x_train: torch.Tensor,
    y_train: torch.Tensor,
    x_test: torch.Tensor,
    sizes: tuple[int, ...],
    repeats: int,
    seed: int,
) -> dict[str, dict[str, float]]:
    """Relative error of subsampled NTK-BLL predictive variances against the exact one,
    at the exact model's hyperparameters: projection only, and projection + posterior."""
    exact = fitted.models["ntk_bll"]
    ref = exact.predict(x_test)
    ref_var = ref.var if hasattr(ref, "var") else ref.logit_var
    likelihood = exact.likelihood
    out: dict[str, dict[str, float]] = {"both": {}, "proj": {}}
    for k in sizes:
        errs: dict[str, list[float]] = {"both": [], "proj": []}
        for r in range(repeats):
            for kind in ("both", "proj"):
                sub = NTKBLL(
                    fitted.base,
                    "head",
                    likelihood,
                    ridge=exact.ridge,
                    subsample=k,
                    posterior_subsample=k if kind == "both" else None,
                    alpha=exact.alpha_,
                    noise=exact.noise_,
                    seed=seed + 97 * r,
                ).fit(x_train, y_train)
                p = sub.predict(x_test)
                v = p.var if hasattr(p, "var") else p.logit_var
                errs[kind].append(
                    float(((v - ref_var).abs() / ref_var.abs().clamp_min(1e-12)).mean())
                )
        for kind in errs:
            out[kind][f"s{k}"] = float(np.mean(errs[kind]))
    return out


def run(cfg: Config, run_dir: RunDir) -> dict[str, Any]:
    torch.set_num_threads(1)  # tiny networks: extra threads only spin
    seed_everything(cfg.seed)
    metrics: dict[str, Any] = defaultdict(dict)
    # ---- UCI-style regression --------------------------------------------------------------
    for name in cfg.regression:
        X, y = load_regression(name)
        per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        var_ge, var_ge_alt, sub_both, sub_proj = [], [], defaultdict(list), defaultdict(list)
        label = name if not name.startswith("csv:") else "csv"
        for split_id in range(cfg.n_splits):
            split = regression_split(X, y, seed=cfg.seed * 1000 + split_id)
            s = _settings(cfg, cfg.hidden, cfg.train_steps, cfg.seed * 1000 + split_id)
            res, fitted, preds = evaluate_regression(split, s)
            for m, r in res.items():
                for k, v in r.items():
                    per[m][k].append(v)
            var_ge.append(_var_ge(preds["ntk_bll"].var, preds["bll"].var))
            var_ge_alt.append(_var_ge(preds[fitted.alt_name].var, preds["bll"].var))
            sizes = tuple(k for k in cfg.subsample_sizes if k < split.x_train.shape[0])
            errs = _subsample_errors(
                fitted,
                split.x_train,
                split.y_train,
                split.x_test,
                sizes,
                cfg.subsample_repeats,
                split_id,
            )
            for k, v in errs["both"].items():
                sub_both[k].append(v)
            for k, v in errs["proj"].items():
                sub_proj[k].append(v)
            run_dir.log_metrics(
                split_id, data=label, **{f"nll.{m}": r["nll"] for m, r in res.items()}
            )
            log(
                f"{label} split {split_id}: "
                + ", ".join(f"{m} nll {r['nll']:.3f}" for m, r in res.items())
            )
        for m, r in per.items():
            for k, vals in r.items():
                metrics[k][f"{label}.{m}"] = float(np.mean(vals))
                if k == "nll":
                    metrics["nll_se"][f"{label}.{m}"] = float(np.std(vals) / np.sqrt(len(vals)))
        metrics["var_ge_bll_fraction"][label] = float(np.mean(var_ge))
        metrics["var_ge_bll_fraction_alt"][label] = float(np.mean(var_ge_alt))
        metrics["subsample_error"][label] = {k: float(np.mean(v)) for k, v in sub_both.items()}
        metrics["subsample_error_proj"][label] = {k: float(np.mean(v)) for k, v in sub_proj.items()}
    # ---- classification + OOD -------------------------------------------------------------
    reliability: dict[str, dict[str, Any]] = {}
    for name in cfg.classification:
        task = load_classification(name, seed=cfg.seed)
        s = _settings(cfg, cfg.cls_hidden, cfg.cls_train_steps, cfg.seed)
        res, fitted, preds = evaluate_classification(task, s)
        for m, r in res.items():
            for k, v in r.items():
                if k.startswith("ood_auroc"):
                    kind, ood = k.split(".")
                    metrics[kind][f"{ood}.{m}"] = v
                else:
                    metrics[k][f"{name}.{m}"] = v
        allv = {m: torch.cat([p.logit_var for p in preds[m].values()]) for m in preds}
        metrics["var_ge_bll_fraction"][name] = _var_ge(allv["ntk_bll"], allv["bll"])
        metrics["var_ge_bll_fraction_alt"][name] = _var_ge(allv[fitted.alt_name], allv["bll"])
        errs = _subsample_errors(
            fitted,
            task.x_train,
            task.y_train,
            task.x_test,
            tuple(k for k in cfg.subsample_sizes if k < task.x_train.shape[0]),
            cfg.subsample_repeats,
            cfg.seed,
        )
        metrics["subsample_error"][name] = errs["both"]
        metrics["subsample_error_proj"][name] = errs["proj"]
        reliability[name] = {
            m: (p["test"].probs.numpy(), task.y_test.numpy()) for m, p in preds.items()
        }
        log(
            f"{name}: "
            + ", ".join(f"{m} nll {r['nll']:.3f} ece {r['ece']:.3f}" for m, r in res.items())
        )
    if reliability:
        plot_reliability(reliability, run_dir.plot_path("reliability"))
    if metrics["subsample_error"]:
        plot_subsample(
            metrics["subsample_error"],
            metrics["subsample_error_proj"],
            run_dir.plot_path("subsample_error"),
        )
    # ---- wheel bandit -----------------------------------------------------------------------
    if cfg.bandit_steps > 0:
        bs = BanditSettings(
            steps=cfg.bandit_steps,
            delta=cfg.bandit_delta,
            hidden=cfg.bandit_hidden,
            train_steps=cfg.bandit_train_steps,
            retrain_every=cfg.bandit_retrain_every,
            update_every=cfg.bandit_update_every,
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            ridge=cfg.ridge,
            hyperparameters=cfg.hyperparameters,
            subsample=cfg.subsample,
            ensemble_size=cfg.ensemble_size,
            dropout=cfg.dropout,
        )
        curves: dict[str, np.ndarray] = {}
        for m in METHODS:
            t0 = time.perf_counter()
            runs = [run_thompson(m, bs, cfg.seed * 100 + k) for k in range(cfg.bandit_seeds)]
            curves[m] = np.mean(runs, axis=0)
            metrics["bandit_regret"][m] = float(curves[m][-1])
            metrics["bandit_seconds"][m] = time.perf_counter() - t0
            log(f"wheel bandit {m}: regret {curves[m][-1]:.1f} ({time.perf_counter() - t0:.1f}s)")
        if "bll" in curves:
            for m in METHODS:
                metrics["bandit_regret_vs_bll"][m] = metrics["bandit_regret"][m] / max(
                    metrics["bandit_regret"]["bll"], 1e-9
                )
        plot_regret(curves, run_dir.plot_path("regret"))
    # ---- 1-D toy ----------------------------------------------------------------------------
    if cfg.toy:
        plot_toy(cfg, run_dir.plot_path("toy_1d"))
    return dict(metrics)


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Fit + predict seconds of bll, ntk_bll and lla on a synthetic regression per size."""
    torch.set_num_threads(1)  # tiny networks: extra threads only spin
    seed_everything(cfg.seed)
    out: dict[str, Any] = defaultdict(dict)
    gen = torch.Generator().manual_seed(cfg.seed)
    for width, n in zip(cfg.widths, cfg.n_points, strict=True):
        size = f"w{width}_n{n}"
        x = torch.randn(n + cfg.n_test, cfg.d_in, generator=gen)
        y = torch.sin(x @ torch.randn(cfg.d_in, 1, generator=gen)) + 0.1 * torch.randn(
            n + cfg.n_test, 1, generator=gen
        )
        model = make_mlp(cfg.d_in, 1, (width,) * cfg.depth)
        train_regressor(model, x[:n], y[:n], TrainSpec(steps=200, batch_size=256))
        times: dict[str, float] = {}
        for name, cls in (("bll", BLL), ("ntk_bll", NTKBLL), ("lla", LinearisedLaplace)):
            best = float("inf")
            for _ in range(cfg.repeats):
                t0 = time.perf_counter()
                cls(model).fit(x[:n], y[:n]).predict(x[n:])
                best = min(best, time.perf_counter() - t0)
            times[name] = best
            out["seconds"][f"{name}.{size}"] = best
        out["n_params"][size] = sum(p.numel() for p in model.parameters())
        out["cost_ratio"][f"ntk_bll_vs_lla.{size}"] = times["ntk_bll"] / times["lla"]
        out["cost_ratio"][f"ntk_bll_vs_bll.{size}"] = times["ntk_bll"] / times["bll"]
        run_dir.log_metrics(None, size=size, **times)
        log(f"bench {size}: " + ", ".join(f"{k} {v:.3f}s" for k, v in times.items()))
    return dict(out)
