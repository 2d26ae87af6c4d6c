"""``icml26 run nppr`` and ``icml26 bench nppr``: the paper's experiment as named stages.

``run``: load data -> prepare classifiers (train or load; cached as safetensors) -> for
each model measure the headline budget (clean accuracy, AR by PGD and AutoAttack, PR under
uniform/Gaussian/Laplace and the tuned fixed distribution, NPPR in the four forms) -> sweep
the budget -> summarise (ratios, ordering slack, samples needed) -> plots. A killed run
resumes: classifiers, fitted mixtures and each finished stage's metrics are kept in the run
folder.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.nppr.attacks import autoattack_ar, clean_accuracy, pgd_ar
from icml26.nppr.data import ImageData, load_dataset, subset
from icml26.nppr.gmm import PerturbationGMM
from icml26.nppr.models import ClassifierSpec, build_classifier, load_classifier, save_classifier
from icml26.nppr.montecarlo import kept_rates
from icml26.nppr.noise import DISTRIBUTIONS, FixedNoise, estimate_fixed_pr, tuned_fixed_pr
from icml26.nppr.nppr import FitConfig, estimate_nppr, fit_nppr
from icml26.nppr.paper import BenchConfig, RunConfig, eps_tag, parse_model_name
from icml26.nppr.stats import Estimate, inputs_for_halfwidth, samples_for_halfwidth
from icml26.nppr.train import TrainConfig, train_classifier
from icml26.shared import PALETTE, atomic_write_json, figure, log, seed_everything

__all__ = ["Splits", "bench", "load_user_model", "measure_headline", "run", "sweep_budgets"]


@dataclass(frozen=True)
class Splits:
    """Who sees which inputs: classifiers train on ``train``; the NPPR mixture fits on
    ``fit`` (from train); the tuned noise and the best NPPR form are chosen on ``select``
    (train, disjoint from ``fit``); everything is reported on ``eval`` (test)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_fit: torch.Tensor
    y_fit: torch.Tensor
    x_select: torch.Tensor
    y_select: torch.Tensor
    x_eval: torch.Tensor
    y_eval: torch.Tensor
    n_classes: int
    input_shape: tuple[int, ...]


def make_splits(data: ImageData, cfg: RunConfig) -> Splits:
    g = torch.Generator().manual_seed(cfg.seed)
    perm = torch.randperm(len(data.y_train), generator=g)
    xtr, ytr = data.x_train[perm][: cfg.n_train], data.y_train[perm][: cfg.n_train]
    n_fit = min(cfg.n_fit, len(ytr) // 2)
    fit, sel = slice(0, n_fit), slice(n_fit, n_fit + cfg.n_select)
    xe, ye = subset(data.x_test, data.y_test, cfg.n_eval, cfg.seed + 1)
    return Splits(
        xtr, ytr, xtr[fit], ytr[fit], xtr[sel], ytr[sel], xe, ye, data.n_classes, data.input_shape
    )


# -- stage 1-2: data and classifiers ---------------------------------------------------------
def load_user_model(path: Path, device: str) -> nn.Module:
    """An icml26-nppr safetensors classifier or a TorchScript file, in eval mode."""
    if path.suffix == ".safetensors":
        return load_classifier(path, device)
    model = torch.jit.load(str(path), map_location=device)
    return model.eval()


def prepare_classifier(
    cfg: RunConfig, splits: Splits, name: str, run_dir: Any, tag: str
) -> nn.Module:
    """Train ``name`` (``<arch>_<std|at>``) or load it from the run folder."""
    path = run_dir.path / "models" / f"{tag}.safetensors"
    if path.is_file():
        return load_classifier(path, cfg.device)
    arch, training = parse_model_name(name)
    torch.manual_seed(cfg.seed)
    model = build_classifier(ClassifierSpec(arch, splits.input_shape, splits.n_classes, cfg.width))
    tcfg = TrainConfig(
        training="std" if training == "std" else cfg.at_method,
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        eps=cfg.at_eps,
    )
    t0 = time.perf_counter()
    train_classifier(
        model,
        splits.x_train,
        splits.y_train,
        tcfg,
        seed=cfg.seed,
        device=cfg.device,
        checkpoint_dir=run_dir.path / "checkpoints",
        tag=tag,
        log=run_dir.log_metrics,
    )
    log(f"{tag}: trained ({tcfg.training}) in {time.perf_counter() - t0:.0f}s")
    path.parent.mkdir(exist_ok=True)
    save_classifier(model, path, training=tcfg.training)
    return model.eval()


# -- stage 3: the headline budget ------------------------------------------------------------
def _gmm(
    cfg: RunConfig, splits: Splits, form: str, eps: float, model: nn.Module | None = None
) -> PerturbationGMM:
    """The mixture of ``form``; the x-conditioned forms also see the frozen classifier's
    log-probabilities (the official code conditions on a frozen backbone's features)."""
    spatial = min(splits.input_shape[1:])
    use_features = form in ("x", "xy") and model is not None
    gmm = PerturbationGMM(
        splits.input_shape,
        splits.n_classes,
        eps,
        form=form,
        k=cfg.k,
        latent_size=min(cfg.latent_size, spatial),
        hidden=cfg.hidden,
        logstd_bounds=(cfg.logstd_lo, cfg.logstd_hi),
        feature_dim=splits.n_classes if use_features else 0,
    )
    if use_features:
        assert model is not None
        frozen = model
        gmm.set_feature_extractor(lambda x: frozen(x).log_softmax(-1))
    return gmm


def _fit_cfg(cfg: RunConfig, steps: int) -> FitConfig:
    return FitConfig(
        steps=steps,
        batch_size=cfg.fit_batch,
        samples=cfg.fit_samples,
        lr=cfg.fit_lr,
        tau_start=cfg.tau_start,
        tau_end=cfg.tau_end,
        entropy_weight=cfg.entropy_weight,
        diversity_weight=cfg.diversity_weight,
    )


def fitted_gmm(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    form: str,
    eps: float,
    steps: int,
    run_dir: Any,
    tag: str,
) -> tuple[PerturbationGMM, dict[str, float]]:
    """Fit (or reload from ``<run>/gmm/``) the mixture of ``form`` at budget ``eps``."""
    from safetensors.torch import load_file, save_file

    from icml26.shared import atomic_path

    gmm = _gmm(cfg, splits, form, eps, model)
    path = run_dir.path / "gmm" / f"{tag}.{form}.{eps_tag(eps)}.safetensors"
    cost_path = path.with_suffix(".json")
    if path.is_file() and cost_path.is_file():
        gmm.load_state_dict(load_file(str(path)))
        return gmm.to(cfg.device).eval(), json.loads(cost_path.read_text())
    torch.manual_seed(cfg.seed)
    gmm = _gmm(cfg, splits, form, eps, model)
    res = fit_nppr(
        model,
        splits.x_fit,
        splits.y_fit,
        gmm,
        _fit_cfg(cfg, steps),
        seed=cfg.seed,
        log=run_dir.log_metrics,
        tag=f"{tag}.{form}.{eps_tag(eps)}",
    )
    path.parent.mkdir(exist_ok=True)
    with atomic_path(path, suffix=".safetensors") as tmp:
        save_file({k: v.detach().cpu().contiguous() for k, v in gmm.state_dict().items()}, str(tmp))
    cost = {
        "fit_forward_passes": float(res.forward_passes),
        "fit_seconds": res.seconds,
        "fit_loss_first": res.losses[0],
        "fit_loss_last": float(np.mean(res.losses[-10:])),
    }
    atomic_write_json(cost_path, cost)
    return gmm.eval(), cost


def _put(metrics: dict[str, float], key: str, est: Estimate, halfwidth: float) -> None:
    metrics.update(est.as_metrics(key))
    metrics[f"forward_passes.{key}"] = float(est.forward_passes)
    metrics[f"seconds.{key}"] = est.seconds
    metrics[f"inputs_needed.{key}"] = float(inputs_for_halfwidth(est, halfwidth))


def measure_headline(
    cfg: RunConfig, model: nn.Module, splits: Splits, tag: str, run_dir: Any
) -> dict[str, float]:
    """Every metric of the issue's contract for one model at the headline budget."""
    eps, m, hw = cfg.eps, cfg.mc_samples, cfg.halfwidth
    xe, ye = splits.x_eval.to(cfg.device), splits.y_eval.to(cfg.device)
    out: dict[str, float] = {}
    _put(out, f"clean_acc.{tag}", clean_accuracy(model, xe, ye, level=cfg.level), hw)
    _put(
        out,
        f"ar.pgd.{tag}",
        pgd_ar(
            model,
            xe,
            ye,
            eps,
            steps=cfg.pgd_steps,
            restarts=cfg.pgd_restarts,
            level=cfg.level,
            seed=cfg.seed,
        ),
        hw,
    )
    n_aa = min(cfg.aa_inputs, len(ye))
    _put(
        out,
        f"ar.autoattack.{tag}",
        autoattack_ar(
            model,
            xe[:n_aa],
            ye[:n_aa],
            eps,
            apgd_iters=cfg.aa_iters,
            n_targets=cfg.aa_targets,
            square_queries=cfg.square_queries,
            level=cfg.level,
            seed=cfg.seed,
        ),
        hw,
    )
    for dist in DISTRIBUTIONS:
        est = estimate_fixed_pr(
            model, xe, ye, dist, eps, m, scale=cfg.noise_scale, level=cfg.level, seed=cfg.seed
        )
        _put(out, f"pr.{dist}.{tag}", est, hw)
    lowest = min(DISTRIBUTIONS, key=lambda d: out[f"pr.{d}.{tag}"])
    for suffix in ("", ".lo", ".hi"):
        out[f"pr.min.{tag}{suffix}"] = out[f"pr.{lowest}.{tag}{suffix}"]
    tuned, noise = tuned_fixed_pr(
        model,
        splits.x_select,
        splits.y_select,
        xe,
        ye,
        eps,
        scales=cfg.tuned_scales,
        m=m,
        level=cfg.level,
        seed=cfg.seed,
    )
    _put(out, f"pr.tuned.{tag}", tuned, hw)
    out[f"pr.tuned_scale.{tag}"] = noise.scale
    out[f"pr.tuned_family.{tag}"] = float(DISTRIBUTIONS.index(noise.dist))
    select_pr: dict[str, float] = {}
    for form in cfg.forms:
        gmm, cost = fitted_gmm(cfg, model, splits, form, eps, cfg.fit_steps, run_dir, tag)
        est = estimate_nppr(model, xe, ye, gmm, m, level=cfg.level, seed=cfg.seed)
        key = f"nppr.{form}.{tag}"
        _put(out, key, est, hw)
        out[f"forward_passes.fit.{key}"] = cost["fit_forward_passes"]
        out[f"seconds.fit.{key}"] = cost["fit_seconds"]
        out[f"fit_loss.{key}"] = cost["fit_loss_last"]
        select_pr[form] = float(
            kept_rates(
                model, splits.x_select, splits.y_select, gmm.sampler, 16, eps, seed=cfg.seed
            ).mean()
        )
        log(
            f"{tag} NPPR[{form}] = {est.value:.3f} [{est.lo:.3f}, {est.hi:.3f}]  (fit {cost['fit_seconds']:.0f}s)"
        )
    best = min(select_pr, key=lambda f: select_pr[f])
    for suffix in ("", ".lo", ".hi"):
        out[f"nppr.best.{tag}{suffix}"] = out[f"nppr.{best}.{tag}{suffix}"]
    out[f"nppr.best_form.{tag}"] = float(("none", "x", "y", "xy").index(best))
    out[f"nppr_over_pr.{tag}"] = out[f"nppr.best.{tag}"] / max(out[f"pr.min.{tag}"], 1e-12)
    out[f"nppr_over_pr_tuned.{tag}"] = out[f"nppr.best.{tag}"] / max(out[f"pr.tuned.{tag}"], 1e-12)
    out[f"ordering_slack.{tag}"] = ordering_slack(out, tag, cfg.forms)
    out[f"mc_samples_needed.{tag}"] = float(samples_for_halfwidth(hw, out[f"nppr.best.{tag}"]))
    log(
        f"{tag}: clean {out[f'clean_acc.{tag}']:.3f}  AR pgd {out[f'ar.pgd.{tag}']:.3f} aa {out[f'ar.autoattack.{tag}']:.3f}"
        f"  PR min {out[f'pr.min.{tag}']:.3f} tuned {out[f'pr.tuned.{tag}']:.3f}  NPPR best[{best}] {out[f'nppr.best.{tag}']:.3f}"
    )
    return out


def ordering_slack(metrics: dict[str, float], tag: str, forms: tuple[str, ...]) -> float:
    """``min`` over pairs (lower, upper) in AR <= NPPR <= PR of ``upper.hi - lower.lo``:
    non-negative when every pair is ordered up to the intervals."""
    ars = [f"ar.{a}.{tag}" for a in ("pgd", "autoattack")]
    npprs = [f"nppr.{f}.{tag}" for f in forms]
    prs = [f"pr.{d}.{tag}" for d in (*DISTRIBUTIONS, "tuned")]
    pairs = [(a, n) for a in ars for n in npprs] + [(n, p) for n in npprs for p in prs]
    return min(metrics[f"{hi}.hi"] - metrics[f"{lo}.lo"] for lo, hi in pairs)


# -- stage 4: the budget sweep ---------------------------------------------------------------
def sweep_budgets(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    tag: str,
    run_dir: Any,
    headline: dict[str, float],
) -> dict[str, float]:
    """PGD, the three fixed distributions and NPPR (``none`` form) at every ``sweep_eps``."""
    out: dict[str, float] = {}
    xs, ys = (
        splits.x_eval[: cfg.sweep_inputs].to(cfg.device),
        splits.y_eval[: cfg.sweep_inputs].to(cfg.device),
    )
    for eps in cfg.sweep_eps:
        et = eps_tag(eps)
        if math.isclose(eps, cfg.eps) and "none" in cfg.forms:
            for key in (
                f"ar.pgd.{tag}",
                *(f"pr.{d}.{tag}" for d in DISTRIBUTIONS),
                f"nppr.none.{tag}",
            ):
                for suffix in ("", ".lo", ".hi"):
                    out[f"{key}.{et}{suffix}"] = headline[f"{key}{suffix}"]
            continue
        out.update(
            pgd_ar(
                model, xs, ys, eps, steps=cfg.pgd_steps, level=cfg.level, seed=cfg.seed
            ).as_metrics(f"ar.pgd.{tag}.{et}")
        )
        for dist in DISTRIBUTIONS:
            est = estimate_fixed_pr(
                model,
                xs,
                ys,
                dist,
                eps,
                cfg.sweep_mc_samples,
                scale=cfg.noise_scale,
                level=cfg.level,
                seed=cfg.seed,
            )
            out.update(est.as_metrics(f"pr.{dist}.{tag}.{et}"))
        gmm, _ = fitted_gmm(cfg, model, splits, "none", eps, cfg.sweep_fit_steps, run_dir, tag)
        est = estimate_nppr(
            model, xs, ys, gmm, cfg.sweep_mc_samples, level=cfg.level, seed=cfg.seed
        )
        out.update(est.as_metrics(f"nppr.none.{tag}.{et}"))
        log(
            f"{tag} {et}: AR {out[f'ar.pgd.{tag}.{et}']:.3f}  NPPR {est.value:.3f}  PR uniform {out[f'pr.uniform.{tag}.{et}']:.3f}"
        )
    return out


def _cached_stage(run_dir: Any, name: str, fn: Any, *args: Any) -> dict[str, float]:
    """Run ``fn(*args)`` once per run folder; a resumed run reads its metrics back."""
    path = run_dir.path / "checkpoints" / f"{name}.metrics.json"
    if path.is_file():
        return {k: float(v) for k, v in json.loads(path.read_text()).items()}
    out = fn(*args)
    path.parent.mkdir(exist_ok=True)
    atomic_write_json(path, out)
    return out


def run(cfg: RunConfig, run_dir: Any) -> dict[str, float]:
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {cfg.device!r} requested but CUDA is not available")
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    metrics: dict[str, float] = {}
    jobs: list[tuple[str, str, Splits]] = []  # (tag, model name, splits)
    data = load_dataset(cfg.dataset, path=cfg.data_path, seed=cfg.seed)
    splits = make_splits(data, cfg)
    names = ("user",) if cfg.model_path is not None else cfg.models
    jobs += [(n, n, splits) for n in names]
    for ds in cfg.extra_datasets:
        s = make_splits(load_dataset(ds, seed=cfg.seed), cfg)
        jobs += [(f"{ds}_{n}", n, s) for n in cfg.extra_models]
    plot_data: dict[str, Any] = {}
    for tag, name, s in jobs:
        if name == "user":
            assert cfg.model_path is not None
            model = load_user_model(Path(cfg.model_path), cfg.device)
        else:
            model = prepare_classifier(cfg, s, name, run_dir, tag)
        for p in model.parameters():
            p.requires_grad_(False)
        head = _cached_stage(
            run_dir, f"{tag}.headline", measure_headline, cfg, model, s, tag, run_dir
        )
        metrics.update(head)
        if s is splits:
            metrics.update(
                _cached_stage(
                    run_dir, f"{tag}.sweep", sweep_budgets, cfg, model, s, tag, run_dir, head
                )
            )
            plot_data[tag] = (model, s)
    _plots(cfg, run_dir, metrics, plot_data)
    return metrics


# -- plots -----------------------------------------------------------------------------------
def _plots(
    cfg: RunConfig, run_dir: Any, metrics: dict[str, float], plot_data: dict[str, Any]
) -> None:
    tags = list(plot_data)
    if not tags:
        return
    eps_list = sorted(cfg.sweep_eps)
    series = [
        ("ar.pgd", "AR (PGD)", PALETTE[1]),
        ("nppr.none", "NPPR (none form)", PALETTE[0]),
        ("pr.uniform", "PR uniform", PALETTE[2]),
        ("pr.gaussian", "PR Gaussian", PALETTE[3]),
        ("pr.laplace", "PR Laplace", PALETTE[4]),
    ]
    with figure(
        run_dir.plot_path("metrics_vs_eps"),
        1,
        len(tags),
        title="Robustness against the L-inf budget",
    ) as (_f, axes):
        for ax, tag in zip(np.atleast_1d(axes), tags, strict=True):
            for key, label, color in series:
                ys = [metrics.get(f"{key}.{tag}.{eps_tag(e)}", float("nan")) for e in eps_list]
                lo = [metrics.get(f"{key}.{tag}.{eps_tag(e)}.lo", float("nan")) for e in eps_list]
                hi = [metrics.get(f"{key}.{tag}.{eps_tag(e)}.hi", float("nan")) for e in eps_list]
                ax.plot(eps_list, ys, "o-", color=color, label=label)
                ax.fill_between(eps_list, lo, hi, color=color, alpha=0.2)
            ax.set_title(tag)
            ax.set_xlabel("eps")
            ax.set_ylim(-0.02, 1.02)
        np.atleast_1d(axes)[0].set_ylabel("rate")
        np.atleast_1d(axes)[0].legend(fontsize=7)
    tag = tags[0]
    model, s = plot_data[tag]
    forms = [f for f in cfg.forms]
    x0, y0 = s.x_eval[:1].to(cfg.device), s.y_eval[:1].to(cfg.device)
    g = torch.Generator(device=cfg.device).manual_seed(cfg.seed)
    rows = [
        ("uniform", FixedNoise("uniform", cfg.eps)(x0, y0, 4, g)),
        ("gaussian", FixedNoise("gaussian", cfg.eps, cfg.noise_scale)(x0, y0, 4, g)),
    ]
    gmms = {}
    for form in forms:
        gmm, _ = fitted_gmm(cfg, model, s, form, cfg.eps, cfg.fit_steps, run_dir, tag)
        gmms[form] = gmm
        rows.append((f"NPPR {form}", gmm.sampler(x0, y0, 4, g)))
    if len(s.input_shape) == 3:
        with figure(
            run_dir.plot_path("perturbation_samples"),
            len(rows),
            4,
            title=f"Perturbations δ of one test digit ({tag}, eps {cfg.eps}): fixed vs learned",
        ) as (_f, axes):
            for r, (label, d) in enumerate(rows):
                for c in range(4):
                    ax = axes[r, c]
                    ax.imshow(d[c, 0, 0].cpu().numpy(), cmap="RdBu", vmin=-cfg.eps, vmax=cfg.eps)
                    ax.set_xticks([])
                    ax.set_yticks([])
                axes[r, 0].set_ylabel(label, fontsize=7)
    with figure(
        run_dir.plot_path("mixture_weights"),
        1,
        len(forms),
        title=f"Learned mixture weights π ({tag})",
    ) as (_f, axes):
        xs, ys = s.x_eval[:200].to(cfg.device), s.y_eval[:200].to(cfg.device)
        for ax, form in zip(np.atleast_1d(axes), forms, strict=True):
            with torch.no_grad():
                w = gmms[form](xs, ys).weights.cpu().numpy()
            ax.bar(range(cfg.k), w.mean(0), yerr=w.std(0), color=PALETTE[0])
            ax.set_title(f"form {form}")
            ax.set_xlabel("component k")
            ax.set_ylim(0, 1)
        np.atleast_1d(axes)[0].set_ylabel("mean π_k over test inputs (± sd)")


# -- bench -----------------------------------------------------------------------------------
def _slope(xs: list[float], ys: list[float]) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def bench(cfg: BenchConfig, run_dir: Any) -> dict[str, float]:
    """Cost to a CI half-width for NPPR, PR and PGD; NPPR's cost against K and inputs."""
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    rcfg = replace(
        RunConfig(),
        device=cfg.device,
        threads=cfg.threads,
        epochs=cfg.epochs,
        width=cfg.width,
        eps=cfg.eps,
        fit_steps=cfg.fit_steps,
        sweep_eps=(cfg.eps,),
        forms=("x",),
    )
    splits = make_splits(load_dataset("mnist5k", seed=cfg.seed), rcfg)
    model = prepare_classifier(rcfg, splits, "cnn_std", run_dir, "cnn_std")
    for p in model.parameters():
        p.requires_grad_(False)
    xe, ye = splits.x_eval[: cfg.n_pilot], splits.y_eval[: cfg.n_pilot]
    h = cfg.halfwidth
    out: dict[str, float] = {}
    pilots = {
        "pr": estimate_fixed_pr(model, xe, ye, "uniform", cfg.eps, cfg.mc_samples, seed=cfg.seed),
        "pgd": pgd_ar(model, xe, ye, cfg.eps, steps=cfg.pgd_steps, seed=cfg.seed),
    }
    gmm, cost = fitted_gmm(rcfg, model, splits, "x", cfg.eps, cfg.fit_steps, run_dir, "cnn_std")
    pilots["nppr"] = estimate_nppr(model, xe, ye, gmm, cfg.mc_samples, seed=cfg.seed)
    for name, est in pilots.items():
        n_need = inputs_for_halfwidth(est, h)
        per_input_fp = est.forward_passes / est.n_inputs
        per_input_s = est.seconds / est.n_inputs
        fixed_fp = cost["fit_forward_passes"] if name == "nppr" else 0.0
        fixed_s = cost["fit_seconds"] if name == "nppr" else 0.0
        out[f"inputs_needed.{name}"] = float(n_need)
        out[f"forward_passes.{name}"] = fixed_fp + n_need * per_input_fp
        out[f"seconds.{name}"] = fixed_s + n_need * per_input_s
        out[f"value.{name}"] = est.value
        log(
            f"{name}: {n_need} inputs for ±{h}: {out[f'forward_passes.{name}']:.3g} passes, {out[f'seconds.{name}']:.1f}s"
        )
    for other in ("pr", "pgd"):
        out[f"cost_ratio.seconds.nppr_over_{other}"] = out["seconds.nppr"] / out[f"seconds.{other}"]
        out[f"cost_ratio.forward_passes.nppr_over_{other}"] = (
            out["forward_passes.nppr"] / out[f"forward_passes.{other}"]
        )
    # Cost of a fitting step against K.
    k_ms = []
    for k in cfg.ks:
        kcfg = replace(rcfg, k=k)
        torch.manual_seed(cfg.seed)
        g = _gmm(kcfg, splits, "x", cfg.eps, model)
        res = fit_nppr(
            model, splits.x_fit, splits.y_fit, g, _fit_cfg(kcfg, cfg.k_steps), seed=cfg.seed
        )
        k_ms.append(1e3 * res.seconds / cfg.k_steps)
        out[f"fit_ms_per_step.k{k}"] = k_ms[-1]
    out["k_scaling_exponent"] = _slope(list(map(float, cfg.ks)), k_ms)
    # Cost of evaluation against the number of inputs.
    secs = []
    for n in cfg.input_counts:
        xs, ys = subset(
            splits.x_eval if n <= len(splits.y_eval) else splits.x_train,
            splits.y_eval if n <= len(splits.y_eval) else splits.y_train,
            n,
            cfg.seed,
        )
        t0 = time.perf_counter()
        estimate_nppr(model, xs, ys, gmm, cfg.mc_samples, seed=cfg.seed)
        secs.append(time.perf_counter() - t0)
        out[f"eval_seconds.n{n}"] = secs[-1]
    out["n_scaling_exponent"] = _slope(list(map(float, cfg.input_counts)), secs)
    with figure(run_dir.plot_path("bench_cost"), 1, 2) as (_f, (ax1, ax2)):
        ax1.loglog(cfg.ks, k_ms, "o-", color=PALETTE[0])
        ax1.set_xlabel("components K")
        ax1.set_ylabel("ms per fitting step")
        ax2.loglog(cfg.input_counts, secs, "o-", color=PALETTE[0])
        ax2.set_xlabel("inputs")
        ax2.set_ylabel("NPPR evaluation seconds")
    return out
