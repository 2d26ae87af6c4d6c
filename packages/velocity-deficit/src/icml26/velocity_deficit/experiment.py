"""The ``icml26 run velocity-deficit`` and ``icml26 bench velocity-deficit`` jobs.

Per dataset: train a feature classifier (the FD metric) and measure the exact field's velocity
ratio (mixtures; the training set's own empirical field for the other data); then, for each of
``config.seeds`` seeds, train a baseline FM model and (on ``config.compare``) a MAFM model,
check their fit (FM loss on training and test pairs, against the exact field's on mixtures),
measure their velocity ratio ``R(t)``, set SSC's strength from the measured ``R(0)``
(``gamma(0) = 1 / R(0)``; or sweep it, ``ssc_magnitude="sweep"``) with its decay chosen on a
validation reference, and sample baseline, baseline+SSC, MAFM, MAFM+SSC at every NFE from the
same noise, scored on the held-out test set. Metrics are seed means with standard errors
(:mod:`icml26.velocity_deficit.seeds`). A finished dataset is stored under ``<run>/partial/``
and models under ``<run>/checkpoints/``, so a killed run resumes.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from icml26.shared import RunDir, figure, log, seed_everything
from icml26.velocity_deficit.config import BenchConfig, VDConfig
from icml26.velocity_deficit.data import Dataset, load_dataset
from icml26.velocity_deficit.diagnostics import (
    integration_lag,
    nn_distance,
    radii,
    velocity_ratio,
)
from icml26.velocity_deficit.flow import fm_loss, linear_path
from icml26.velocity_deficit.gmm import IsotropicGMM
from icml26.velocity_deficit.metrics import FeatureClassifier, sliced_wasserstein
from icml26.velocity_deficit.model import VelocityMLP
from icml26.velocity_deficit.samplers import VelocityFn, integrate, steps_for_nfe, time_grid
from icml26.velocity_deficit.seeds import merge_seeds, with_spread
from icml26.velocity_deficit.ssc import ScaleSchedule, corrected
from icml26.velocity_deficit.train import TrainSettings, train_velocity_model

__all__ = [
    "Evaluation",
    "Prepared",
    "SSCSelection",
    "bench",
    "evaluate_samplers",
    "fd_changes",
    "fit_check",
    "oracle_ratios",
    "prepare_dataset",
    "run",
    "select_ssc",
    "steps_to_match",
    "train_models",
    "velocity_ratios",
]

METHODS = ("baseline", "ssc", "mafm", "mafm_ssc")
SPREAD = ("fd", "fd_improvement", "fd_improvement_vs_baseline_250", "ssc_alpha", "fm_excess_loss")
BOUNDED = ("fd_improvement", "fd_improvement_vs_baseline_250")


def _tkey(t: float) -> str:
    return f"t{round(t * 100):02d}"


def _velocity_fn(model: VelocityMLP, labels: torch.Tensor | None) -> VelocityFn:
    def fn(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        y = None if labels is None else labels[: len(x)]
        return model(x, t.to(x.device), y)

    return fn


def _sample(fn: VelocityFn, x0: torch.Tensor, nfe: int, config: VDConfig) -> np.ndarray:
    steps = steps_for_nfe(nfe, config.sampler)
    x = integrate(fn, x0, grid=time_grid(steps, config.grid), method=config.sampler)
    assert isinstance(x, torch.Tensor)
    return x.detach().cpu().numpy()


def _settings(config: VDConfig, objective: str) -> TrainSettings:
    return TrainSettings(
        steps=config.train_steps,
        batch_size=config.batch_size,
        lr=config.lr,
        ema_decay=config.ema_decay,
        width=config.width,
        depth=config.depth,
        skip=config.skip,
        objective=objective,  # type: ignore[arg-type]
        coupling=config.coupling,
        mafm_lambda=config.mafm_lambda,
        mafm_power=config.mafm_power,
        checkpoint_every=max(1, min(500, config.train_steps)),
    )


def _schedules(config: VDConfig) -> list[ScaleSchedule]:
    betas = config.ssc_betas if config.ssc_kind == "power" else (1.0,)
    return [
        ScaleSchedule(config.ssc_kind, alpha=a, beta=b, t_stop=config.ssc_t_stop)
        for a in config.ssc_alphas
        for b in betas
    ]


def _score(samples: np.ndarray, ds: Dataset, clf: FeatureClassifier, seed: int) -> dict[str, float]:
    if not np.all(np.isfinite(samples)):
        nan = float("nan")
        return {"fd": nan, "integration_lag": nan, "nn_gap": nan, "sw": nan}
    out = {
        "fd": clf.fd(samples, ds.x_test),
        "integration_lag": integration_lag(samples, ds.x_test),
        "sw": sliced_wasserstein(samples, ds.x_test, seed=seed),
    }
    bank = ds.x_train[:5000]  # nearest-neighbour bank (capped: cost grows with N * d)
    d_gen = nn_distance(samples, bank).mean()
    d_real = nn_distance(ds.x_test[: len(samples)], bank).mean()
    out["nn_gap"] = float(d_gen / d_real - 1.0)
    if ds.gmm is not None:
        out["loglik"] = float(ds.gmm.log_prob(samples).mean())
    return out


@dataclass(frozen=True)
class Prepared:
    """One dataset ready for the experiment: data, the FD feature classifier, the validation
    reference (training rows, for SSC's selection), the sample count ``n``, whether the
    models are class-conditional, and the reference metrics (classifier accuracy, the
    real-vs-real FD floor, the mixture's own log-likelihood)."""

    ds: Dataset
    clf: FeatureClassifier
    val_ref: np.ndarray
    n: int
    conditional: bool
    metrics: dict[str, float]

    @property
    def name(self) -> str:
        return self.ds.name

    def labels_for(self, seed: int, config: VDConfig, device: str) -> torch.Tensor | None:
        """Labels for conditional sampling: drawn from the test labels (its class balance)."""
        if not self.conditional or self.ds.y_test is None:
            return None
        g = np.random.default_rng(seed)
        return torch.as_tensor(
            g.choice(self.ds.y_test, size=max(self.n, config.ratio_samples)), device=device
        )


@dataclass(frozen=True)
class SSCSelection:
    """SSC's schedule per model, chosen on the validation reference, with the sweep's
    metrics (``ssc_sweep``, ``ssc_alpha``, ``ssc_beta``)."""

    chosen: dict[str, ScaleSchedule]
    metrics: dict[str, float]


@dataclass(frozen=True)
class Evaluation:
    """Test-set scores of every sampler variant at every NFE, and the samples plotted."""

    metrics: dict[str, float]
    arrays: dict[str, Any]


def _run_dataset(spec: str, config: VDConfig, run_dir: RunDir, device: str) -> dict[str, Any]:
    """All metrics of one dataset (flat keys: seed means and spreads), the per-seed metrics,
    and the arrays the plots need (first seed)."""
    prep = prepare_dataset(spec, config, device)
    flat: dict[str, Any] = dict(prep.metrics)
    flat.update(oracle_ratios(prep, config, device))
    per_seed: list[dict[str, float]] = []
    arrays: dict[str, Any] = {}
    for i in range(config.seeds):
        cfg = replace(config, seed=config.seed + i)
        models = train_models(prep, spec, cfg, run_dir, device)
        m = fit_check(prep, models, cfg, device)
        m.update(velocity_ratios(prep, models, cfg, device))
        ssc = select_ssc(prep, models, cfg, device, ratios=m)
        m.update(ssc.metrics)
        evaluation = evaluate_samplers(prep, models, ssc.chosen, cfg, device)
        m.update(evaluation.metrics)
        m.update(fd_changes(prep.name, m, cfg))
        per_seed.append(m)
        arrays = arrays or evaluation.arrays
    flat.update(merge_seeds(per_seed))
    flat.update(with_spread(per_seed, SPREAD, bounds=BOUNDED))
    flat.update(steps_to_match(prep.name, flat, config))
    return {"metrics": flat, "arrays": arrays, "per_seed": per_seed}


def prepare_dataset(spec: str, config: VDConfig, device: str) -> Prepared:
    """Stage 1: load the data, fit the FD feature classifier, draw the validation reference."""
    ds = load_dataset(spec, n_train=config.n_train, n_test=config.n_test, seed=config.seed)
    name = ds.name
    log(f"{name}: {len(ds.x_train)} train / {len(ds.x_test)} test, d = {ds.dim}")
    flat: dict[str, float] = {}
    clf = FeatureClassifier(ds.dim, ds.n_classes).fit(
        ds.x_train,
        ds.y_train,
        steps=config.classifier_steps,
        seed=config.seed,
        x_val=ds.x_test,
        y_val=ds.y_test,
    )
    if clf.accuracy is not None:
        flat[f"classifier_accuracy.{name}"] = clf.accuracy
    n = min(config.n_samples, len(ds.x_test))
    rng = np.random.default_rng(config.seed + 1)
    val_ref = ds.x_train[rng.choice(len(ds.x_train), size=min(n, len(ds.x_train)), replace=False)]
    flat[f"fd.{name}.real"] = clf.fd(val_ref, ds.x_test)  # floor: real vs real
    if ds.gmm is not None:
        flat[f"loglik.{name}.real"] = float(ds.gmm.log_prob(ds.x_test).mean())
    conditional = config.conditional and ds.y_train is not None
    return Prepared(ds, clf, val_ref, n, conditional, flat)


def train_models(
    prep: Prepared, spec: str, config: VDConfig, run_dir: RunDir, device: str
) -> dict[str, VelocityMLP]:
    """Stage 2: the FM baseline and, on ``config.compare`` datasets, MAFM (checkpointed)."""
    ds, name = prep.ds, prep.name
    objectives = {"baseline": "fm"} | ({"mafm": "mafm"} if spec in config.compare else {})
    trained: dict[str, VelocityMLP] = {}
    for method, objective in objectives.items():
        t0 = time.perf_counter()
        model, losses = train_velocity_model(
            ds.x_train,
            ds.y_train if prep.conditional else None,
            _settings(config, objective),
            seed=config.seed,
            checkpoints=type(run_dir.checkpoints)(
                run_dir.checkpoints.folder / f"{name}-{method}-s{config.seed}"
            ),
            device=device,
            tag=f"{name}/{method}",
        )
        trained[method] = model
        final = losses[-1] if losses else float("nan")
        log(
            f"{name}/{method} seed {config.seed}: trained in {time.perf_counter() - t0:.1f}s, "
            f"final loss {final:.4f}"
        )
    return trained


@torch.no_grad()
def fit_check(
    prep: Prepared, models: dict[str, VelocityMLP], config: VDConfig, device: str
) -> dict[str, float]:
    """Is a deficit the objective's or the network's? The FM loss ``|v - (x1 - x0)|^2 / d`` of
    each model on fixed training pairs (``fm_loss``) and on test pairs (``fm_loss_test``); on
    mixtures also the exact field's loss on the same training pairs (``fm_loss_oracle``, the
    floor no network can beat) and the relative excess ``fm_excess_loss = loss / floor - 1``.
    An excess near 0 means the deficit measured is the MSE's own, not under-fitting."""
    ds, name = prep.ds, prep.name
    gen = torch.Generator().manual_seed(config.seed + 17)
    n = 4 * config.ratio_samples
    flat: dict[str, float] = {}
    pairs = {}
    for split, x in (("train", ds.x_train), ("test", ds.x_test)):
        idx = torch.randint(0, len(x), (n,), generator=gen)
        x1 = torch.as_tensor(x)[idx]
        x0 = torch.randn(x1.shape, generator=gen)
        t = torch.rand(n, generator=gen)
        y = None
        if prep.conditional:
            y_all = ds.y_train if split == "train" else ds.y_test
            assert y_all is not None
            y = torch.as_tensor(y_all)[idx].to(device)
        pairs[split] = (x0, x1, t, y)
    for method, model in models.items():
        for split, (x0, x1, t, y) in pairs.items():
            xt, u = linear_path(x0, x1, t)
            v = model(xt.to(device), t.to(device), y).cpu()
            key = "fm_loss" if split == "train" else "fm_loss_test"
            flat[f"{key}.{name}.{method}"] = float(fm_loss(v, u))
    if ds.gmm is not None:
        x0, x1, t, _ = pairs["train"]
        xt, u = linear_path(x0, x1, t)
        floor = float(fm_loss(ds.gmm.optimal_velocity(xt, t), u))
        flat[f"fm_loss_oracle.{name}"] = floor
        for method in models:
            flat[f"fm_excess_loss.{name}.{method}"] = flat[f"fm_loss.{name}.{method}"] / floor - 1
    return flat


def oracle_ratios(prep: Prepared, config: VDConfig, device: str) -> dict[str, float]:
    """``R(t)`` of the exact FM minimiser, once per dataset: the mixture's exact field
    (``velocity_ratio_oracle``) or, for data without a density, the exact field of the
    training set itself (``velocity_ratio_empirical``, a mixture of near-point masses: the
    memorising minimiser of the training loss), at ``t <= 0.5`` where both fields agree with the
    population one and SSC acts."""
    ds, name = prep.ds, prep.name
    data_t = torch.as_tensor(ds.x_train, device=device)
    gen = torch.Generator().manual_seed(config.seed + 7)
    if ds.gmm is not None:
        field, key, times = ds.gmm, "velocity_ratio_oracle", config.ratio_times
    else:
        k = len(ds.x_train)
        field = IsotropicGMM(ds.x_train, np.full(k, 1e-3), np.full(k, 1.0 / k))
        key, times = "velocity_ratio_empirical", tuple(t for t in config.ratio_times if t <= 0.5)
    ratios = velocity_ratio(
        lambda x, t: field.optimal_velocity(x, float(t)),
        data_t,
        times,
        n=config.ratio_samples,
        generator=gen,
    )
    return {f"{key}.{name}.{_tkey(t)}": r for t, r in ratios.items()}


def velocity_ratios(
    prep: Prepared, models: dict[str, VelocityMLP], config: VDConfig, device: str
) -> dict[str, float]:
    """Stage 3: the velocity ratio ``R(t)`` of every model on training data (a conditional
    model sees each ``x1``'s own label)."""
    ds, name = prep.ds, prep.name
    data_t = torch.as_tensor(ds.x_train, device=device)
    gen = torch.Generator().manual_seed(config.seed + 7)
    flat: dict[str, float] = {}
    for method, model in models.items():
        key = "velocity_ratio" if method == "baseline" else f"velocity_ratio_{method}"
        if prep.conditional and ds.y_train is not None:
            idx = torch.randint(0, len(ds.x_train), (config.ratio_samples,), generator=gen)
            x1 = data_t[idx.to(device)]
            lab = torch.as_tensor(ds.y_train, device=device)[idx.to(device)]
            ratios = _ratio_with_labels(model, x1, lab, config.ratio_times, gen)
        else:
            ratios = velocity_ratio(
                _velocity_fn(model, None),
                data_t,
                config.ratio_times,
                n=config.ratio_samples,
                generator=gen,
            )
        for t, r in ratios.items():
            flat[f"{key}.{name}.{_tkey(t)}"] = r
    return flat


def select_ssc(
    prep: Prepared,
    models: dict[str, VelocityMLP],
    config: VDConfig,
    device: str,
    *,
    ratios: dict[str, float] | None = None,
) -> SSCSelection:
    """Stage 4: SSC's schedule per model, chosen on the validation reference (training rows,
    separate noise) at ``ssc_select_nfe``. ``ssc_magnitude="ratio"``: ``gamma(0) = 1 / R(0)``
    with ``R(0)`` the model's measured start ratio (``velocity_ratio[_<method>].<data>.t00`` in
    ``ratios``), the best decay among ``ssc_betas``; ``"sweep"``: the best ``(alpha, beta)``
    with ``alpha > 0``. The ``ssc_alphas`` grid is scored either way (``ssc_sweep.*``)."""
    name, n = prep.name, prep.n
    flat: dict[str, float] = {}
    chosen: dict[str, ScaleSchedule] = {}
    sweep_noise = torch.randn(
        n, prep.ds.dim, generator=torch.Generator().manual_seed(config.seed + 11)
    ).to(device)
    sweep_labels = prep.labels_for(config.seed + 11, config, device)
    for method, model in models.items():
        fn = _velocity_fn(model, sweep_labels)
        base_val = prep.clf.fd(
            _sample(fn, sweep_noise, config.ssc_select_nfe, config), prep.val_ref
        )
        flat[f"ssc_sweep.{name}.{method}.neutral"] = base_val

        def score(sched: ScaleSchedule) -> float:
            s = _sample(corrected(fn, sched), sweep_noise, config.ssc_select_nfe, config)  # noqa: B023
            return prep.clf.fd(s, prep.val_ref) if np.all(np.isfinite(s)) else float("inf")

        best: tuple[float, ScaleSchedule] | None = None
        for sched in _schedules(config):
            val = score(sched)
            flat[f"ssc_sweep.{name}.{method}.{sched.label()}"] = val
            better = best is None or val < best[0]
            if config.ssc_magnitude == "sweep" and sched.alpha > 0 and better:
                best = (val, sched)
        if config.ssc_magnitude == "ratio":
            rkey = "velocity_ratio" if method == "baseline" else f"velocity_ratio_{method}"
            if ratios is None or f"{rkey}.{name}.t00" not in ratios:
                raise ValueError(f"ssc_magnitude='ratio' needs the measured {rkey}.{name}.t00")
            r0 = ratios[f"{rkey}.{name}.t00"]
            betas = config.ssc_betas if config.ssc_kind == "power" else (1.0,)
            for b in betas:
                sched = ScaleSchedule.from_start_ratio(
                    r0, kind=config.ssc_kind, beta=b, t_stop=config.ssc_t_stop
                )
                val = score(sched)
                flat[f"ssc_sweep.{name}.{method}.ratio_b{sched.label().split('_b')[1]}"] = val
                if best is None or val < best[0]:
                    best = (val, sched)
        assert best is not None
        chosen[method] = best[1]
        flat[f"ssc_alpha.{name}.{method}"] = best[1].alpha
        flat[f"ssc_beta.{name}.{method}"] = best[1].beta
        log(
            f"{name}/{method}: SSC picked {best[1].label()} (val FD {best[0]:.4g} vs "
            f"{base_val:.4g} plain)"
        )
    return SSCSelection(chosen, flat)


def evaluate_samplers(
    prep: Prepared,
    models: dict[str, VelocityMLP],
    chosen: dict[str, ScaleSchedule],
    config: VDConfig,
    device: str,
) -> Evaluation:
    """Stage 5: every model with and without its SSC schedule, at every NFE, from the same
    test noise, scored on the held-out test set (FD, integration lag, SW, NN gap, loglik)."""
    ds, name, n = prep.ds, prep.name, prep.n
    flat: dict[str, float] = {}
    test_noise = torch.randn(
        n, ds.dim, generator=torch.Generator().manual_seed(config.seed + 13)
    ).to(device)
    test_labels = prep.labels_for(config.seed + 13, config, device)
    arrays: dict[str, Any] = {"samples": {}, "image_shape": ds.image_shape}
    show_nfe = config.ssc_select_nfe
    for method, model in models.items():
        fn = _velocity_fn(model, test_labels)
        variants = {
            method: fn,
            ("ssc" if method == "baseline" else f"{method}_ssc"): corrected(fn, chosen[method]),
        }
        for variant, vfn in variants.items():
            for k in config.nfe:
                s = _sample(vfn, test_noise, k, config)
                for metric, value in _score(s, ds, prep.clf, config.seed).items():
                    flat[f"{metric}.{name}.{variant}.nfe{k}"] = value
                if k == show_nfe:
                    arrays["samples"][variant] = s
    arrays["real"] = ds.x_test[:n]
    return Evaluation(flat, arrays)


def fd_changes(name: str, flat: dict[str, Any], config: VDConfig) -> dict[str, float]:
    """Stage 6 (per seed): the relative FD change of each variant over the baseline at every
    NFE, ``fd_improvement = (FD_base - FD_variant) / FD_base`` (> 0: better), and at
    ``ssc_select_nfe`` over the baseline's FD at 250 NFE (or the largest NFE run),
    ``fd_improvement_vs_baseline_250`` (> 0: the few-step variant beats the long baseline)."""
    out: dict[str, float] = {}
    base_fd = {k: flat[f"fd.{name}.baseline.nfe{k}"] for k in config.nfe}
    ref = base_fd[250 if 250 in config.nfe else max(config.nfe)]
    k_sel = config.ssc_select_nfe

    def rel(b: float, v: float) -> float:
        return (b - v) / b if b > 0 else float("nan")

    for variant in [m for m in METHODS if f"fd.{name}.{m}.nfe{config.nfe[0]}" in flat]:
        if variant != "baseline":
            for k in config.nfe:
                out[f"fd_improvement.{name}.{variant}.nfe{k}"] = rel(
                    base_fd[k], flat[f"fd.{name}.{variant}.nfe{k}"]
                )
        out[f"fd_improvement_vs_baseline_250.{name}.{variant}.nfe{k_sel}"] = rel(
            ref, flat[f"fd.{name}.{variant}.nfe{k_sel}"]
        )
    return out


def steps_to_match(name: str, flat: dict[str, Any], config: VDConfig) -> dict[str, float]:
    """The fewest NFE at which each variant's seed-mean FD is at most the baseline's at 250
    NFE (or the largest NFE run); NaN when no budget in the list does."""
    out: dict[str, float] = {}
    base_fd = {k: flat[f"fd.{name}.baseline.nfe{k}"] for k in config.nfe}
    ref_nfe = 250 if 250 in config.nfe else max(config.nfe)
    for variant in [m for m in METHODS if f"fd.{name}.{m}.nfe{config.nfe[0]}" in flat]:
        match = [
            k for k in sorted(config.nfe) if flat[f"fd.{name}.{variant}.nfe{k}"] <= base_fd[ref_nfe]
        ]
        out[f"steps_to_match_baseline_250.{name}.{variant}"] = (
            float(match[0]) if match else float("nan")
        )
    return out


def _ratio_with_labels(
    model: VelocityMLP,
    x1: torch.Tensor,
    labels: torch.Tensor,
    times: tuple[float, ...],
    gen: torch.Generator,
) -> dict[float, float]:
    """``R(t)`` for a class-conditional model, each ``x1`` paired with its own label."""
    out = {}
    with torch.no_grad():
        for t in times:
            x0 = torch.randn(x1.shape, generator=gen).to(x1.device)
            xt = (1 - t) * x0 + t * x1
            v = model(xt, torch.tensor(t, dtype=x1.dtype), labels)
            out[float(t)] = float(v.norm(dim=1).mean() / (x1 - x0).norm(dim=1).mean())
    return out


# -- plots -------------------------------------------------------------------------------------
def _plot_ratio(metrics: dict[str, Any], config: VDConfig, run_dir: RunDir) -> None:
    names = sorted(
        {k.split(".")[1] for k in metrics if k.startswith("velocity_ratio.")},
        key=lambda s: (not s.startswith("gmm"), int(s[3:]) if s[3:].isdigit() else 0, s),
    )
    ts = list(config.ratio_times)
    with figure(
        run_dir.plot_path("velocity_ratio_vs_t"),
        1,
        2,
        width=9.5,
        title="Velocity deficit: learned |v| / E|x1 - x0|",
    ) as (_fig, axes):
        for name in names:
            r = [metrics[f"velocity_ratio.{name}.{_tkey(t)}"] for t in ts]
            line = axes[0].plot(ts, r, label=f"{name} (FM)")[0]
            if f"velocity_ratio_oracle.{name}.t00" in metrics:
                o = [metrics[f"velocity_ratio_oracle.{name}.{_tkey(t)}"] for t in ts]
                axes[0].plot(ts, o, ls=":", color=line.get_color(), lw=1.0)
            if f"velocity_ratio_mafm.{name}.t00" in metrics:
                mm = [metrics[f"velocity_ratio_mafm.{name}.{_tkey(t)}"] for t in ts]
                axes[1].plot(ts, r, color=line.get_color(), label=f"{name} FM")
                axes[1].plot(ts, mm, ls="--", color=line.get_color(), label=f"{name} MAFM")
        axes[0].axhline(1.0, color="k", lw=0.8)
        axes[0].set(
            xlabel="t (0 = noise, 1 = data)",
            ylabel="ratio",
            title="FM models (dotted: exact field)",
        )
        axes[0].legend(fontsize=7)
        axes[1].axhline(1.0, color="k", lw=0.8)
        axes[1].set(xlabel="t", ylabel="ratio", title="FM vs MAFM")
        axes[1].legend(fontsize=7)
    dims, learned, oracle = [], [], []
    for name in names:
        if name.startswith("gmm"):
            dims.append(int(name[3:]))
            learned.append(np.mean([metrics[f"velocity_ratio.{name}.{_tkey(t)}"] for t in ts]))
            oracle.append(
                np.mean([metrics[f"velocity_ratio_oracle.{name}.{_tkey(t)}"] for t in ts])
            )
    if dims:
        with figure(run_dir.plot_path("velocity_ratio_vs_dim")) as (_fig, ax):
            ax.plot(dims, learned, "o-", label="learned (FM)")
            ax.plot(dims, oracle, "s:", label="exact field")
            ax.set_xscale("log", base=2)
            ax.set(
                xlabel="dimension d",
                ylabel="mean over t of ratio",
                title="Deficit vs dimension (GMMs)",
            )
            ax.legend()


def _plot_dataset(name: str, res: dict[str, Any], config: VDConfig, run_dir: RunDir) -> None:
    metrics, arrays = res["metrics"], res["arrays"]
    variants = [m for m in METHODS if f"fd.{name}.{m}.nfe{config.nfe[0]}" in metrics]
    nfe = sorted(config.nfe)
    with figure(
        run_dir.plot_path(f"quality_vs_nfe_{name}"),
        1,
        2,
        width=9.5,
        title=f"{name}: quality vs NFE ({config.sampler})",
    ) as (_fig, axes):
        for v in variants:
            axes[0].plot(nfe, [metrics[f"fd.{name}.{v}.nfe{k}"] for k in nfe], "o-", label=v, ms=3)
            axes[1].plot(
                nfe,
                [metrics[f"integration_lag.{name}.{v}.nfe{k}"] for k in nfe],
                "o-",
                label=v,
                ms=3,
            )
        axes[0].axhline(metrics[f"fd.{name}.real"], color="k", lw=0.8, ls=":", label="real vs real")
        axes[0].set(xscale="log", yscale="log", xlabel="NFE", ylabel="FD (classifier features)")
        axes[1].axhline(0.0, color="k", lw=0.8)
        axes[1].set(xscale="log", xlabel="NFE", ylabel="integration lag (1 - rms radius ratio)")
        axes[0].legend()
    # SSC sweep (validation FD at the selection NFE)
    for method in ("baseline", "mafm"):
        neutral = metrics.get(f"ssc_sweep.{name}.{method}.neutral")
        if neutral is None:
            continue
        with figure(run_dir.plot_path(f"ssc_sweep_{name}_{method}")) as (_fig, ax):
            betas = config.ssc_betas if config.ssc_kind == "power" else (1.0,)
            for b in betas:
                pts = []
                for a in sorted(config.ssc_alphas):
                    lab = ScaleSchedule(config.ssc_kind, a, b, config.ssc_t_stop).label()
                    pts.append((a, metrics[f"ssc_sweep.{name}.{method}.{lab}"]))
                pts.append((0.0, neutral))
                pts.sort()
                label = (
                    f"beta={b:g}"
                    if config.ssc_kind == "power"
                    else f"window t<{config.ssc_t_stop:g}"
                )
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=label)
            ax.axhline(neutral, color="k", lw=0.8, ls=":", label="no SSC")
            ax.set(
                xlabel="alpha (gamma(0) = 1 + alpha)",
                ylabel=f"validation FD @ NFE {config.ssc_select_nfe}",
                title=f"SSC sweep, {name} / {method}",
            )
            ax.legend()
    samples = arrays["samples"]
    real = np.asarray(arrays["real"])
    shape = arrays["image_shape"]
    panels = [("real", real), *((v, np.asarray(samples[v])) for v in variants if v in samples)]
    with figure(
        run_dir.plot_path(f"samples_{name}"),
        1,
        len(panels),
        width=2.4 * len(panels),
        height=2.7,
        title=f"{name}: samples at NFE {config.ssc_select_nfe}",
    ) as (_fig, axes):
        axes = np.atleast_1d(axes)
        if shape is not None:
            h, w = shape
            for ax, (label, x) in zip(axes, panels, strict=True):
                k = min(8, int(math.sqrt(len(x))))
                tiles = (
                    np.clip(x[: k * k], -1, 1)
                    .reshape(k, k, h, w)
                    .transpose(0, 2, 1, 3)
                    .reshape(k * h, k * w)
                )
                ax.imshow(tiles, cmap="gray", vmin=-1, vmax=1)
                ax.set_title(label)
                ax.axis("off")
        else:
            centre = real.mean(0)
            _, _, vt = np.linalg.svd(real - centre, full_matrices=False)
            proj = vt[:2].T
            for ax, (label, x) in zip(axes, panels, strict=True):
                p = (x - centre) @ proj
                ax.scatter(p[:, 0], p[:, 1], s=2, alpha=0.5)
                ax.set_title(label)
                ax.set_aspect("equal", adjustable="datalim")
    with figure(
        run_dir.plot_path(f"radial_{name}"),
        title=f"{name}: radius about the data mean, NFE {config.ssc_select_nfe}",
    ) as (_fig, ax):
        centre = real.mean(0)
        r_real = radii(real, centre)
        bins = np.linspace(
            0,
            max(r_real.max(), *(radii(np.asarray(samples[v]), centre).max() for v in samples))
            * 1.02,
            40,
        )
        ax.hist(r_real, bins=bins, histtype="stepfilled", alpha=0.25, color="k", label="real")
        for v in variants:
            if v in samples:
                ax.hist(radii(np.asarray(samples[v]), centre), bins=bins, histtype="step", label=v)
        ax.set(xlabel="|x - mean|", ylabel="count")
        ax.legend()


# -- jobs --------------------------------------------------------------------------------------
def run(config: VDConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job (module docstring). Returns flat metric keys (see the package README)."""
    torch.set_num_threads(config.threads)
    seed_everything(config.seed, torch=True)
    device = config.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available")
    run_dir.update_env(device=device, torch_threads=config.threads)
    metrics: dict[str, Any] = {}
    per_seed: dict[str, Any] = {}
    partial = run_dir.path / "partial"
    partial.mkdir(exist_ok=True)
    for spec in config.datasets:
        t0 = time.perf_counter()
        safe = spec.replace("/", "_").replace(":", "_")
        done = partial / f"{safe}.pt"
        reused = done.exists()
        if reused:
            res = torch.load(done, weights_only=False)
            log(f"{spec}: reusing finished results from {done}")
        else:
            res = _run_dataset(spec, config, run_dir, device)
            with run_dir.artefact(f"partial/{safe}.pt") as tmp:
                torch.save(res, tmp)
        metrics.update(res["metrics"])
        name = _dataset_name(res, spec)
        per_seed[name] = res.get("per_seed", [])
        if not (reused and run_dir.plot_path(f"radial_{name}").exists()):
            _plot_dataset(name, res, config, run_dir)
        run_dir.log_metrics(None, dataset=spec, seconds=time.perf_counter() - t0)
    # the deficit against dimension: slope of the mean ratio over log2(d) across GMMs
    ts = config.ratio_times
    dims, learned, oracle = [], [], []
    for spec in config.datasets:
        if spec.startswith("gmm"):
            dims.append(math.log2(int(spec[3:])))
            learned.append(np.mean([metrics[f"velocity_ratio.{spec}.{_tkey(t)}"] for t in ts]))
            oracle.append(
                np.mean([metrics[f"velocity_ratio_oracle.{spec}.{_tkey(t)}"] for t in ts])
            )
    if len(set(dims)) >= 2:
        metrics["velocity_ratio_slope_vs_dim"] = float(np.polyfit(dims, learned, 1)[0])
        metrics["velocity_ratio_oracle_slope_vs_dim"] = float(np.polyfit(dims, oracle, 1)[0])
    _plot_ratio(metrics, config, run_dir)
    with run_dir.artefact("per_seed.json") as tmp:  # the seed spread behind every mean
        tmp.write_text(json.dumps(per_seed, indent=1, allow_nan=True))
    (run_dir.path / "metrics_flat.json").write_text(
        json.dumps(
            {k: v for k, v in metrics.items() if isinstance(v, float) and math.isfinite(v)},
            indent=1,
        )
    )
    return metrics


def _dataset_name(res: dict[str, Any], spec: str) -> str:
    for key in res["metrics"]:
        if key.startswith("fd.") and key.endswith(".real"):
            return key.split(".")[1]
    return spec


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Samples per second for each sampler and NFE, and SSC's overhead over plain Euler."""
    torch.set_num_threads(config.threads)
    seed_everything(config.seed, torch=True)
    device = config.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available")
    model = VelocityMLP(config.dim, config.width, config.depth).to(device).eval()
    x0 = torch.randn(config.batch, config.dim, device=device)

    def fn(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return model(x, t.to(x.device))

    def timed(vfn: VelocityFn, steps: int, method: str) -> float:
        times = []
        for _ in range(config.repeats):
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            integrate(vfn, x0, steps=steps, method=method)  # type: ignore[arg-type]
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    metrics: dict[str, Any] = {}
    integrate(fn, x0, steps=2)  # warm-up
    for sampler in config.samplers:
        for k in config.nfe:
            sec = timed(fn, steps_for_nfe(k, sampler), sampler)
            metrics[f"throughput.{sampler}.nfe{k}"] = config.batch / sec
    k = max(config.nfe)
    ssc_fn = corrected(fn, ScaleSchedule("power", alpha=0.1, beta=1.0))
    plain, ssc = [], []
    for _ in range(3):  # interleave to share any load drift
        plain.append(timed(fn, k, "euler"))
        ssc.append(timed(ssc_fn, k, "euler"))
    metrics["ssc_overhead_ratio"] = float(np.median(ssc) / np.median(plain))
    metrics[f"throughput.euler_ssc.nfe{k}"] = config.batch / float(np.median(ssc))
    with figure(run_dir.plot_path("throughput")) as (_fig, ax):
        for sampler in config.samplers:
            ax.plot(
                config.nfe,
                [metrics[f"throughput.{sampler}.nfe{k}"] for k in config.nfe],
                "o-",
                label=sampler,
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="NFE",
            ylabel="samples / s",
            title=f"sampling throughput (d={config.dim}, batch {config.batch}, {device})",
        )
        ax.legend()
    return metrics
