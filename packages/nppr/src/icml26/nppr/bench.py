"""``icml26 bench nppr``: what NPPR costs beside PR and PGD, and how it grows with K and inputs.

A ``cnn_std`` (``epochs`` epochs) at ``eps``: pilot estimates on ``n_pilot`` test inputs, then
the cost of reaching a 95% half-width of ``halfwidth`` at the same draws per input (NPPR's
fitting counted as a fixed cost); the wall time of a fitting step against K; the wall time of
evaluating a fitted mixture against the number of inputs (log-log slopes).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from icml26.nppr.baselines.attacks import pgd_ar
from icml26.nppr.baselines.noise import estimate_fixed_pr
from icml26.nppr.config import BenchConfig, RunConfig
from icml26.nppr.data.loaders import load_dataset, subset
from icml26.nppr.evaluate import build_gmm, fit_config, make_splits
from icml26.nppr.fit import estimate_nppr, fit_nppr
from icml26.nppr.models import ClassifierSpec, build_classifier
from icml26.nppr.stats import inputs_for_halfwidth
from icml26.nppr.train import TrainConfig, train_for_run
from icml26.shared import PALETTE, TORCH, RunDir, Stages, figure, log, seed_for
from icml26.shared.stats import best_of, loglog_slope

__all__ = ["bench"]


def _costs(cfg: BenchConfig, rcfg: RunConfig, model: Any, splits: Any) -> dict[str, float]:
    """Pilot estimates, then forward passes and seconds to the half-width."""
    xe, ye = splits.x_eval[: cfg.n_pilot], splits.y_eval[: cfg.n_pilot]
    torch.manual_seed(seed_for(cfg.seed, "gmm_init"))
    gmm = build_gmm(rcfg, splits, "x", cfg.eps, model)
    fit = fit_nppr(model, (splits.x_fit, splits.y_fit), gmm, fit_config(rcfg, cfg.fit_steps))
    pilots = {
        "pr": estimate_fixed_pr(model, (xe, ye), "uniform", cfg.eps, cfg.mc_samples),
        "pgd": pgd_ar(model, (xe, ye), cfg.eps, steps=cfg.pgd_steps, seed=cfg.seed),
        "nppr": estimate_nppr(model, (xe, ye), gmm, cfg.mc_samples),
    }
    out: dict[str, float] = {}
    for name, est in pilots.items():
        n_need = inputs_for_halfwidth(est, cfg.halfwidth)
        fixed_fp = fit.forward_passes if name == "nppr" else 0.0
        fixed_s = fit.seconds if name == "nppr" else 0.0
        out[f"inputs_needed.{name}"] = float(n_need)
        out[f"forward_passes.{name}"] = fixed_fp + n_need * est.forward_passes / est.n_inputs
        out[f"seconds.{name}"] = fixed_s + n_need * est.seconds / est.n_inputs
        out[f"value.{name}"] = est.value
        log(f"{name}: {n_need} inputs for ±{cfg.halfwidth}: {out[f'seconds.{name}']:.1f}s")
    for other in ("pr", "pgd"):
        out[f"cost_ratio.seconds.nppr_over_{other}"] = out["seconds.nppr"] / out[f"seconds.{other}"]
        out[f"cost_ratio.forward_passes.nppr_over_{other}"] = (
            out["forward_passes.nppr"] / out[f"forward_passes.{other}"]
        )
    return out


def _scaling(cfg: BenchConfig, rcfg: RunConfig, model: Any, splits: Any) -> dict[str, Any]:
    """Milliseconds per fitting step against K; evaluation seconds against inputs."""
    k_ms = []
    for k in cfg.ks:
        kcfg = replace(rcfg, k=k)
        gmm = build_gmm(kcfg, splits, "x", cfg.eps, model)
        fit = fit_nppr(model, (splits.x_fit, splits.y_fit), gmm, fit_config(kcfg, cfg.k_steps))
        k_ms.append(1e3 * fit.seconds / cfg.k_steps)
    gmm = build_gmm(rcfg, splits, "x", cfg.eps, model)
    fit_nppr(model, (splits.x_fit, splits.y_fit), gmm, fit_config(rcfg, cfg.k_steps))
    secs = []
    for n in cfg.input_counts:
        pool = (
            (splits.x_eval, splits.y_eval)
            if n <= len(splits.y_eval)
            else (splits.x_train, splits.y_train)
        )
        data = subset(*pool, n, cfg.seed)
        secs.append(
            best_of(lambda d=data: estimate_nppr(model, d, gmm, cfg.mc_samples), repeats=2).best
        )
    out: dict[str, Any] = {f"fit_ms_per_step.k{k}": v for k, v in zip(cfg.ks, k_ms, strict=True)}
    out.update({f"eval_seconds.n{n}": s for n, s in zip(cfg.input_counts, secs, strict=True)})
    out["k_scaling_exponent"] = loglog_slope(list(map(float, cfg.ks)), k_ms).slope
    out["n_scaling_exponent"] = loglog_slope(list(map(float, cfg.input_counts)), secs).slope
    return out


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, float]:
    """The cost benchmark (see the module docstring).

    Args:
        cfg: the bench config.
        run_dir: the run folder.

    Returns:
        ``inputs_needed.*``, ``forward_passes.*``, ``seconds.*``, ``cost_ratio.*``,
        ``fit_ms_per_step.k<K>``, ``eval_seconds.n<N>`` and the two scaling exponents.
    """
    rcfg = replace(
        RunConfig(),
        device=cfg.device,
        epochs=cfg.epochs,
        width=cfg.width,
        eps=cfg.eps,
        fit_steps=cfg.fit_steps,
        sweep_eps=(cfg.eps,),
        forms=("x",),
    )
    stages = Stages(run_dir)
    splits = make_splits(load_dataset("mnist5k"), rcfg, 0)
    spec = ClassifierSpec("cnn", splits.input_shape, splits.n_classes, cfg.width)
    train = lambda: train_for_run(  # noqa: E731
        "cnn_std",
        splits.x_train,
        splits.y_train,
        spec,
        TrainConfig(epochs=cfg.epochs),
        seed=seed_for(cfg.seed, "model"),
        device=cfg.device,
    )
    model = build_classifier(spec)
    model.load_state_dict(stages.once("train_cnn_std", train, saver=TORCH))
    model = model.to(cfg.device).eval()
    out = stages.once("costs", lambda: _costs(cfg, rcfg, model, splits))
    out.update(stages.once("scaling", lambda: _scaling(cfg, rcfg, model, splits)))
    with figure(run_dir.plot_path("bench_cost"), 1, 2) as (_f, (ax1, ax2)):
        ax1.loglog(cfg.ks, [out[f"fit_ms_per_step.k{k}"] for k in cfg.ks], "o-", color=PALETTE[0])
        ax1.set_xlabel("components K")
        ax1.set_ylabel("ms per fitting step")
        ax2.loglog(cfg.input_counts, [out[f"eval_seconds.n{n}"] for n in cfg.input_counts], "o-")
        ax2.set_xlabel("inputs")
        ax2.set_ylabel("NPPR evaluation seconds")
    return out
