"""The ``icml26 run bll-ntk`` and ``icml26 bench bll-ntk`` jobs."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from icml26.bll_ntk import metrics as M
from icml26.bll_ntk.bandit_runner import BanditSettings, run_thompson
from icml26.bll_ntk.bll import BLL, NTKBLL, LinearisedLaplace
from icml26.bll_ntk.data import load_classification, load_regression, regression_split
from icml26.bll_ntk.evaluate import (
    MethodSettings,
    evaluate_classification,
    evaluate_regression,
    fit_all,
)
from icml26.bll_ntk.network import make_mlp
from icml26.bll_ntk.paper import METHODS, BenchConfig, Config
from icml26.bll_ntk.plots import plot_regret, plot_reliability, plot_subsample, plot_toy
from icml26.bll_ntk.train import TrainSpec, train_regressor
from icml26.shared import RunDir, log, seed_everything

__all__ = [
    "bandit_stage",
    "bench",
    "classification_stage",
    "regression_stage",
    "run",
    "toy_stage",
]


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


@dataclass
class _PerMethod:
    """Per-method metric values over repeats (splits or seeds): ``values[method][metric]``."""

    values: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, res: dict[str, dict[str, float]]) -> None:
        for m, r in res.items():
            for k, v in r.items():
                self.values[m][k].append(v)


@dataclass
class RegressionResult:
    """Stage 1: every method on the regression data sets, over ``n_splits`` random splits."""

    metrics: dict[str, Any]
    gains: dict[str, list[tuple[float, float]]]  # metric -> per data set (mean, se) of the gain
    subsample_both: dict[str, dict[str, float]]
    subsample_proj: dict[str, dict[str, float]]


@dataclass
class ClassificationResult:
    """Stage 2: every method on the classification data sets (+ OOD), over ``cls_seeds`` seeds."""

    metrics: dict[str, Any]
    gains: dict[str, list[tuple[float, float]]]
    subsample_both: dict[str, dict[str, float]]
    subsample_proj: dict[str, dict[str, float]]
    reliability: dict[str, dict[str, Any]]


@dataclass
class BanditResult:
    """Stage 3: Thompson sampling on the wheel bandit, mean regret curve per method."""

    metrics: dict[str, Any]
    curves: dict[str, np.ndarray]


@dataclass
class ToyBands:
    """Stage 4: the 1-D regression with a gap, ±2 std bands of each method on a grid."""

    x: np.ndarray
    y: np.ndarray
    grid: np.ndarray
    bands: dict[str, tuple[np.ndarray, np.ndarray]]  # method -> (mean, std)


def _paired_gain(better: list[float], worse: list[float]) -> tuple[float, float]:
    """Mean and standard error (over repeats) of the paired difference ``better − worse``.

    The standard error is NaN with a single repeat: a claim on it is then undecided, not won.
    """
    d = np.asarray(better, float) - np.asarray(worse, float)
    return float(np.mean(d)), M.standard_error(d)


#: Per-repeat metrics that get no ``<metric>_se`` key (timings are not claims on noise).
_NO_SE = ("fit_seconds",)


def _summarise(label: str, per: _PerMethod, metrics: dict[str, Any]) -> None:
    """``<metric>.<label>.<method>``: mean over repeats; ``<metric>_se.<label>.<method>``: its
    standard error (``std(ddof=1)/sqrt(n)``, NaN for one repeat). OOD metrics are keyed by
    the OOD set instead of ``label``."""
    for m, r in per.values.items():
        for k, vals in r.items():
            if "." in k:  # ood_auroc.<ood set>: keyed by the OOD set
                kind, key = k.split(".")[0], f"{k.split('.', 1)[1]}.{m}"
            else:
                kind, key = k, f"{label}.{m}"
            metrics.setdefault(kind, {})[key] = float(np.mean(vals))
            if kind not in _NO_SE:
                metrics.setdefault(f"{kind}_se", {})[key] = M.standard_error(vals)


#: Regression metrics pooled over the data sets as ``<metric>.regression.<method>``.
_POOLED_REGRESSION = ("nll", "rmse", "ece", "coverage90")


def _pool_methods(metrics: dict[str, Any], labels: list[str], group: str) -> None:
    """``<metric>.<group>.<method>``: the mean over data sets of the per-set means (standardised
    units), with ``<metric>_se.<group>.<method>`` the per-set standard errors combined."""
    for kind in _POOLED_REGRESSION:
        table, se_table = metrics.get(kind, {}), metrics.get(f"{kind}_se", {})
        methods = {k.split(".", 1)[1] for k in table if k.split(".", 1)[0] in labels}
        for m in sorted(methods):
            keys = [f"{lab}.{m}" for lab in labels if f"{lab}.{m}" in table]
            if len(keys) != len(labels):
                continue  # a method missing on some set: no pooled figure
            table[f"{group}.{m}"] = float(np.mean([table[k] for k in keys]))
            se_table[f"{group}.{m}"] = M.pooled_standard_error([se_table[k] for k in keys])


def _record_gains(
    label: str,
    per: _PerMethod,
    metrics: dict[str, Any],
    gains: dict[str, list[tuple[float, float]]],
    wanted: dict[str, int],
    against: str = "bll",
) -> None:
    """``ntk_gain.<metric>.<label>`` (and ``_se``): paired gain of ntk_bll over ``against``
    (bll unless told), signed so that > 0 means ntk_bll is better (``wanted``: +1 higher is
    better, -1 lower is better). Against another baseline the metric is named
    ``<metric>_vs_<against>`` (e.g. ``ntk_gain.nll_vs_ensemble.diabetes``)."""
    ntk, other = per.values["ntk_bll"], per.values[against]
    for k in ntk:
        metric = k.split(".")[0]
        if metric not in wanted or k not in other:
            continue
        sign = wanted[metric]
        mean, se = _paired_gain([sign * v for v in ntk[k]], [sign * v for v in other[k]])
        name = k.split(".", 1)[1] if "." in k else label
        if against != "bll":
            metric = f"{metric}_vs_{against}"
        metrics.setdefault("ntk_gain", {}).setdefault(metric, {})[name] = mean
        metrics.setdefault("ntk_gain_se", {}).setdefault(metric, {})[name] = se
        gains.setdefault(metric, []).append((mean, se))


#: The sampling baselines the "competitive" claim compares ntk_bll's NLL with.
SAMPLING_BASELINES = ("ensemble", "mc_dropout")


def _record_baseline_gaps(
    label: str,
    per: _PerMethod,
    metrics: dict[str, Any],
    gains: dict[str, list[tuple[float, float]]],
) -> None:
    """Paired NLL gains of ntk_bll over each sampling baseline (``ntk_gain.nll_vs_<b>``)."""
    for baseline in SAMPLING_BASELINES:
        if baseline in per.values:
            _record_gains(label, per, metrics, gains, {"nll": -1}, against=baseline)


def _pooled(
    metrics: dict[str, Any], gains: dict[str, list[tuple[float, float]]], group: str
) -> None:
    """``ntk_gain.<metric>.<group>``: mean of the per-set gains, its standard error combined
    (``sqrt(Σ se²)/k``: the sets have their own splits / seeds, so they are independent)."""
    for metric, rows in gains.items():
        mean = float(np.mean([g for g, _ in rows]))
        se = M.pooled_standard_error([s for _, s in rows])
        metrics.setdefault("ntk_gain", {}).setdefault(metric, {})[group] = mean
        metrics.setdefault("ntk_gain_se", {}).setdefault(metric, {})[group] = se


def regression_stage(cfg: Config, run_dir: RunDir) -> RegressionResult:
    """Every method on each regression set over ``n_splits`` random 90/10 splits (the UCI
    protocol: inputs and targets standardised with the training part, metrics in standardised
    units). Every method sees the same splits, so gains are paired over splits. The
    subsampling error is measured on the first ``subsample_splits`` splits only."""
    metrics: dict[str, Any] = {}
    gains: dict[str, list[tuple[float, float]]] = {}
    both: dict[str, dict[str, float]] = {}
    proj: dict[str, dict[str, float]] = {}
    for name in cfg.regression:
        X, y = load_regression(name)
        per = _PerMethod()
        var_ge, var_ge_alt, sub_both, sub_proj = [], [], defaultdict(list), defaultdict(list)
        label = name if not name.startswith("csv:") else "csv"
        for split_id in range(cfg.n_splits):
            split = regression_split(X, y, seed=cfg.seed * 1000 + split_id)
            s = _settings(cfg, cfg.hidden, cfg.train_steps, cfg.seed * 1000 + split_id)
            res, fitted, preds = evaluate_regression(split, s)
            per.add(res)
            var_ge.append(_var_ge(preds["ntk_bll"].var, preds["bll"].var))
            var_ge_alt.append(_var_ge(preds[fitted.alt_name].var, preds["bll"].var))
            if split_id < cfg.subsample_splits:
                errs = _subsample_errors(
                    fitted,
                    split.x_train,
                    split.y_train,
                    split.x_test,
                    tuple(k for k in cfg.subsample_sizes if k < split.x_train.shape[0]),
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
        _summarise(label, per, metrics)
        _record_gains(label, per, metrics, gains, {"nll": -1, "ece": -1})
        _record_baseline_gaps(label, per, metrics, gains)
        metrics.setdefault("var_ge_bll_fraction", {})[label] = float(np.mean(var_ge))
        metrics.setdefault("var_ge_bll_fraction_alt", {})[label] = float(np.mean(var_ge_alt))
        both[label] = {k: float(np.mean(v)) for k, v in sub_both.items()}
        proj[label] = {k: float(np.mean(v)) for k, v in sub_proj.items()}
    metrics["subsample_error"] = dict(both)
    metrics["subsample_error_proj"] = dict(proj)
    labels = [n if not n.startswith("csv:") else "csv" for n in cfg.regression]
    _pool_methods(metrics, labels, "regression")
    if gains:
        _pooled(metrics, gains, "regression")
    return RegressionResult(metrics, gains, both, proj)


def classification_stage(cfg: Config, run_dir: RunDir) -> ClassificationResult:
    """Every method on each classification set and its OOD sets, ``cls_seeds`` seeds (the
    split, the network's initialisation and the baselines' seeds all change with the seed)."""
    metrics: dict[str, Any] = {}
    gains: dict[str, list[tuple[float, float]]] = {}
    both: dict[str, dict[str, float]] = {}
    proj: dict[str, dict[str, float]] = {}
    reliability: dict[str, dict[str, Any]] = {}
    for name in cfg.classification:
        per = _PerMethod()
        var_ge, var_ge_alt = [], []
        for k in range(cfg.cls_seeds):
            seed = cfg.seed + k
            task = load_classification(name, seed=seed)
            s = _settings(cfg, cfg.cls_hidden, cfg.cls_train_steps, seed)
            res, fitted, preds = evaluate_classification(task, s)
            per.add(res)
            allv = {m: torch.cat([p.logit_var for p in preds[m].values()]) for m in preds}
            var_ge.append(_var_ge(allv["ntk_bll"], allv["bll"]))
            var_ge_alt.append(_var_ge(allv[fitted.alt_name], allv["bll"]))
            log(
                f"{name} seed {seed}: "
                + ", ".join(f"{m} nll {r['nll']:.3f} ece {r['ece']:.3f}" for m, r in res.items())
            )
            run_dir.log_metrics(k, data=name, **{f"nll.{m}": r["nll"] for m, r in res.items()})
            if k > 0:
                continue
            errs = _subsample_errors(
                fitted,
                task.x_train,
                task.y_train,
                task.x_test,
                tuple(n for n in cfg.subsample_sizes if n < task.x_train.shape[0]),
                cfg.subsample_repeats,
                cfg.seed,
            )
            both[name], proj[name] = errs["both"], errs["proj"]
            reliability[name] = {
                m: (p["test"].probs.cpu().numpy(), task.y_test.cpu().numpy())
                for m, p in preds.items()
            }
        _summarise(name, per, metrics)
        _record_gains(name, per, metrics, gains, {"ece": -1, "ood_auroc": +1})
        _record_baseline_gaps(name, per, metrics, gains)
        metrics.setdefault("var_ge_bll_fraction", {})[name] = float(np.mean(var_ge))
        metrics.setdefault("var_ge_bll_fraction_alt", {})[name] = float(np.mean(var_ge_alt))
    metrics["subsample_error"] = dict(both)
    metrics["subsample_error_proj"] = dict(proj)
    if gains:
        _pooled(metrics, gains, "classification")
    return ClassificationResult(metrics, gains, both, proj, reliability)


def bandit_stage(cfg: Config) -> BanditResult:
    """Thompson sampling on the wheel bandit with every posterior, ``bandit_seeds`` seeds."""
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
    metrics: dict[str, Any] = defaultdict(dict)
    curves: dict[str, np.ndarray] = {}
    finals: dict[str, list[float]] = {}
    for m in METHODS:
        t0 = time.perf_counter()
        runs = [run_thompson(m, bs, cfg.seed * 100 + k) for k in range(cfg.bandit_seeds)]
        finals[m] = [float(r[-1]) for r in runs]
        curves[m] = np.mean(runs, axis=0)
        metrics["bandit_regret"][m] = float(curves[m][-1])
        metrics["bandit_seconds"][m] = time.perf_counter() - t0
        log(f"wheel bandit {m}: regret {curves[m][-1]:.1f} ({time.perf_counter() - t0:.1f}s)")
    for m in METHODS:
        metrics["bandit_regret_vs_bll"][m] = metrics["bandit_regret"][m] / max(
            metrics["bandit_regret"]["bll"], 1e-9
        )
    # Paired over seeds (same contexts and rewards per seed): > 0 means ntk_bll has less regret;
    # its standard error is NaN with one seed, which leaves the claim undecided.
    gain, se = _paired_gain(finals["bll"], finals["ntk_bll"])
    metrics["bandit_regret_gain"] = {"ntk_bll": gain}
    metrics["bandit_regret_gain_se"] = {"ntk_bll": se}
    return BanditResult(dict(metrics), curves)


def toy_stage(cfg: Config) -> ToyBands:
    """Every method on a 1-D regression with a gap in the inputs (for the bands figure)."""
    gen = torch.Generator().manual_seed(cfg.seed)
    x = torch.cat(
        [torch.rand(80, 1, generator=gen) * 1.4 - 2.0, torch.rand(80, 1, generator=gen) * 1.4 + 0.6]
    )
    y = torch.sin(2.0 * x) + 0.1 * torch.randn(x.shape, generator=gen)
    s = _settings(cfg, cfg.hidden, max(cfg.train_steps, 1500), cfg.seed)
    fitted = fit_all(x, y, 1, "regression", s)
    grid = torch.linspace(-3.5, 3.5, 300)[:, None]
    bands = {}
    for m, model in fitted.models.items():
        if m.startswith("ntk_bll_"):
            continue
        pred = model.predict(grid)
        bands[m] = (
            pred.mean[:, 0].detach().cpu().numpy(),
            pred.total_var[:, 0].sqrt().detach().cpu().numpy(),
        )
    return ToyBands(x[:, 0].numpy(), y[:, 0].numpy(), grid[:, 0].numpy(), bands)


def _merge(*parts: dict[str, Any]) -> dict[str, Any]:
    """Nested merge of the stages' metric trees (a data set appears in one stage only)."""
    out: dict[str, Any] = {}

    def put(dst: dict[str, Any], src: dict[str, Any]) -> None:
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                put(dst[k], v)
            else:
                dst[k] = v

    for p in parts:
        put(out, p)
    return out


def _plots(
    run_dir: RunDir,
    reg: RegressionResult,
    cls: ClassificationResult,
    bandit: BanditResult | None,
    toy: ToyBands | None,
) -> None:
    if cls.reliability:
        plot_reliability(cls.reliability, run_dir.plot_path("reliability"))
    both = {**reg.subsample_both, **cls.subsample_both}
    if both:
        plot_subsample(
            both, {**reg.subsample_proj, **cls.subsample_proj}, run_dir.plot_path("subsample_error")
        )
    if bandit is not None:
        plot_regret(bandit.curves, run_dir.plot_path("regret"))
    if toy is not None:
        plot_toy(toy.x, toy.y, toy.grid, toy.bands, run_dir.plot_path("toy_1d"))


def run(cfg: Config, run_dir: RunDir) -> dict[str, Any]:
    """The paper's experiment as five calls: regression, classification + OOD, the wheel
    bandit, the 1-D toy, then the pooled ntk_bll-vs-bll gains and the figures."""
    torch.set_num_threads(1)  # tiny networks: extra threads only spin
    seed_everything(cfg.seed)
    reg = regression_stage(cfg, run_dir)
    cls = classification_stage(cfg, run_dir)
    bandit = bandit_stage(cfg) if cfg.bandit_steps > 0 else None
    toy = toy_stage(cfg) if cfg.toy else None
    metrics = _merge(reg.metrics, cls.metrics, bandit.metrics if bandit else {})
    metrics["subsample_error"] = {**reg.subsample_both, **cls.subsample_both}
    metrics["subsample_error_proj"] = {**reg.subsample_proj, **cls.subsample_proj}
    pooled = {k: reg.gains.get(k, []) + cls.gains.get(k, []) for k in {*reg.gains, *cls.gains}}
    _pooled(metrics, pooled, "all")
    _plots(run_dir, reg, cls, bandit, toy)
    return metrics


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
