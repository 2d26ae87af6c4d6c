"""One classifier, one replicate: every figure of the run at the headline budget, and the sweep.

:func:`measure_model` is the paper's comparison for one model: clean accuracy; AR by PGD and
by the ``apgd_square`` ensemble; PR under our three fixed distributions and the official
code's two, and the tuned one; accuracy under a universal and a per-class adversarial
perturbation; NPPR in each form with its mixture's shape (effective components, spread). Each
is reported averaged over all test inputs (``<metric>.<family>.<model>``) and over the
clean-correct ones, the official code's convention (``cc.<metric>.<family>.<model>``).

Who sees which inputs (:func:`make_splits`, redrawn in every replicate): the classifier
trains on ``n_train`` images of the train split; the mixture and the universal perturbation
are fitted on ``n_fit`` *other* train-split images; the tuned noise, the best NPPR form and
the best universal perturbation are chosen on ``n_select`` more (disjoint from both); every
figure is reported on ``n_eval`` test images drawn from the test split. AR by the ensemble
runs on the first ``aa_inputs`` of them; ``<key>.sub`` keys give NPPR and the universal
perturbation on that same subset, so AR is compared on the same inputs.

The weight-floor ablation (``*.nofloor.*``): the best form refitted with ``weight_floor=0``
(same initialisation and draws), to see whether the mixture collapses without the floor.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from icml26.nppr.baselines.attacks import apgd_square_ar, clean_accuracy, pgd_ar
from icml26.nppr.baselines.noise import (
    DISTRIBUTIONS,
    OUR_DISTRIBUTIONS,
    estimate_fixed_pr,
    tuned_fixed_pr,
)
from icml26.nppr.baselines.uap import UAPConfig, UniversalPerturbation, estimate_uap
from icml26.nppr.config import FORMS, RunConfig, eps_tag
from icml26.nppr.data.loaders import ImageData
from icml26.nppr.fit import FitConfig, estimate_nppr, fit_nppr, mixture_shape
from icml26.nppr.gmm import PerturbationGMM
from icml26.nppr.montecarlo import kept_rates
from icml26.nppr.stats import (
    Estimate,
    estimate_from_rates,
    inputs_for_halfwidth,
    samples_for_halfwidth,
)
from icml26.shared import atomic_path, log, seed_for

__all__ = [
    "Splits",
    "build_gmm",
    "fit_config",
    "load_gmm",
    "load_uaps",
    "make_splits",
    "measure_model",
    "sweep_budgets",
]

UAP_KINDS = ("universal", "per_class")


@dataclass(frozen=True)
class Splits:
    """The inputs of one replicate (see the module docstring for who sees which)."""

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


def make_splits(data: ImageData, cfg: RunConfig, replicate: int) -> Splits:
    """The replicate's inputs (see the module docstring): classifier training, fitting and
    selection images, disjoint, from the train split (``inputs`` seed stream), and the
    evaluation images from the test split (``eval_inputs`` stream).

    The fitting and selection sets take at most a quarter and a tenth of the train split; the
    classifier gets at most what is left.

    Args:
        data: the dataset with its train and test splits.
        cfg: the run's config.
        replicate: the replicate's index.

    Returns:
        :class:`Splits`.

    Raises:
        ValueError: a train split too small to leave the classifier 100 images.
    """
    n = len(data.y_train)
    n_fit, n_sel = min(cfg.n_fit, n // 4), min(cfg.n_select, n // 10)
    n_tr = min(cfg.n_train, n - n_fit - n_sel)
    if n_tr < 100 or n_fit < 1 or n_sel < 1:
        raise ValueError(
            f"{data.name}: a train split of {n} images leaves {n_tr} for the classifier after "
            f"{n_fit} fitting and {n_sel} selection images (need >= 100)"
        )
    g = torch.Generator().manual_seed(seed_for(cfg.seed, "inputs", replicate))
    perm = torch.randperm(n, generator=g)
    tr, fit, sel = perm[:n_tr], perm[n_tr : n_tr + n_fit], perm[n_tr + n_fit : n_tr + n_fit + n_sel]
    ge = torch.Generator().manual_seed(seed_for(cfg.seed, "eval_inputs", replicate))
    ev = torch.randperm(len(data.y_test), generator=ge)[: cfg.n_eval]
    x, y = data.x_train, data.y_train
    return Splits(
        x[tr],
        y[tr],
        x[fit],
        y[fit],
        x[sel],
        y[sel],
        data.x_test[ev],
        data.y_test[ev],
        data.n_classes,
        data.input_shape,
    )


def build_gmm(
    cfg: RunConfig,
    splits: Splits,
    form: str,
    eps: float,
    model: nn.Module | None = None,
    weight_floor: float | None = None,
) -> PerturbationGMM:
    """The mixture of ``form``; the x-conditioned forms also see the frozen classifier's
    log-probabilities (the official code conditions on a frozen backbone's features).

    Args:
        cfg: the run's config (k, latent_size, hidden, log-std bounds, weight floor).
        splits: for the input shape and the number of classes.
        form: ``none``, ``x``, ``y`` or ``xy``.
        eps: the budget.
        model: the classifier (needed by the ``x`` / ``xy`` forms' features).
        weight_floor: overrides the config's (the ablation's 0).

    Returns:
        An unfitted :class:`~icml26.nppr.gmm.PerturbationGMM`.
    """
    use_features = form in ("x", "xy") and model is not None
    frozen = model
    return PerturbationGMM(
        splits.input_shape,
        splits.n_classes,
        eps,
        form=form,
        k=cfg.k,
        latent_size=min(cfg.latent_size, *splits.input_shape[1:]),
        hidden=cfg.hidden,
        logstd_bounds=(cfg.logstd_lo, cfg.logstd_hi),
        feature_dim=splits.n_classes if use_features else 0,
        feature_extractor=(lambda x: frozen(x).log_softmax(-1)) if use_features else None,  # type: ignore[misc]
        weight_floor=cfg.weight_floor if weight_floor is None else weight_floor,
    )


def fit_config(cfg: RunConfig, steps: int) -> FitConfig:
    """The :class:`~icml26.nppr.fit.FitConfig` of the run with ``steps`` steps."""
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


def _gmm_path(gmm_dir: Path, tag: str, form: str, eps: float) -> Path:
    return gmm_dir / f"{tag}.{form}.{eps_tag(eps)}.safetensors"


def _save_tensors(state: dict[str, torch.Tensor], path: Path) -> None:
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in state.items()}
    with atomic_path(path, suffix=".safetensors") as tmp:
        save_file(state, str(tmp))


def load_uaps(gmm_dir: Path, tag: str) -> dict[str, torch.Tensor]:
    """The universal perturbations :func:`measure_model` fitted and saved (for the figures).

    Args:
        gmm_dir: where they were saved.
        tag: the model's tag.

    Returns:
        ``{"universal": [1, *shape], "per_class": [C, *shape]}`` (those found).
    """
    from safetensors.torch import load_file

    out = {}
    for kind in UAP_KINDS:
        path = gmm_dir / f"{tag}.uap_{kind}.safetensors"
        if path.is_file():
            out[kind] = load_file(str(path))["delta"]
    return out


def load_gmm(
    cfg: RunConfig, model: nn.Module, splits: Splits, gmm_dir: Path, tag: str, form: str
) -> PerturbationGMM:
    """A mixture :func:`measure_model` fitted and saved (for the figures).

    Args:
        cfg: the run's config.
        model: the classifier (features of the x forms).
        splits: the replicate's splits.
        gmm_dir: where :func:`measure_model` saved it.
        tag: the model's tag.
        form: the form.

    Returns:
        The fitted mixture in eval mode on the config's device.
    """
    from safetensors.torch import load_file

    gmm = build_gmm(cfg, splits, form, cfg.eps, model)
    gmm.load_state_dict(load_file(str(_gmm_path(gmm_dir, tag, form, cfg.eps))))
    return gmm.to(cfg.device).eval()


def _put(
    out: dict[str, float],
    key: str,
    est: Estimate,
    clean: np.ndarray,
    hw: float,
    n_sub: int | None = None,
) -> None:
    """``key`` (all inputs, with cost and inputs needed) and ``cc.key`` (clean-correct);
    with ``n_sub``, ``key.sub``: the mean over the first ``n_sub`` inputs (AR's subset)."""
    out.update(est.as_metrics(key))
    if n_sub is not None:
        out[f"{key}.sub"] = float(est.rates[:n_sub].mean())
    out[f"forward_passes.{key}"] = float(est.forward_passes)
    out[f"seconds.{key}"] = est.seconds
    out[f"inputs_needed.{key}"] = float(inputs_for_halfwidth(est, hw))
    if clean[: est.n_inputs].any():
        out.update(est.on(clean[: est.n_inputs]).as_metrics(f"cc.{key}"))


def _alias(out: dict[str, float], key: str, source: str) -> None:
    """``key`` (and its ``.lo``/``.hi`` and clean-correct twins) as a copy of ``source``."""
    for prefix in ("", "cc."):
        for suffix in ("", ".lo", ".hi", ".sub"):
            if f"{prefix}{source}{suffix}" in out:
                out[f"{prefix}{key}{suffix}"] = out[f"{prefix}{source}{suffix}"]


def _attacks(
    cfg: RunConfig,
    model: nn.Module,
    ev: tuple[torch.Tensor, torch.Tensor],
    clean: np.ndarray,
    tag: str,
    seed: int,
) -> dict[str, float]:
    """Clean accuracy, AR by PGD and by the ``apgd_square`` ensemble, and ``ar.min``: robust
    under both, on the ensemble's subset (the first ``aa_inputs`` test inputs)."""
    out: dict[str, float] = {}
    hw = cfg.halfwidth
    _put(out, f"clean_acc.{tag}", clean_accuracy(model, ev, level=cfg.level), clean, hw)
    pgd = pgd_ar(
        model,
        ev,
        cfg.eps,
        steps=cfg.pgd_steps,
        restarts=cfg.pgd_restarts,
        level=cfg.level,
        seed=seed,
    )
    _put(out, f"ar.pgd.{tag}", pgd, clean, hw)
    n_aa = min(cfg.aa_inputs, len(ev[1]))
    ens = apgd_square_ar(
        model,
        (ev[0][:n_aa], ev[1][:n_aa]),
        cfg.eps,
        apgd_iters=cfg.aa_iters,
        n_targets=cfg.aa_targets,
        square_queries=cfg.square_queries,
        level=cfg.level,
        seed=seed,
    )
    _put(out, f"ar.apgd_square.{tag}", ens, clean, hw)
    both = estimate_from_rates(pgd.rates[:n_aa] * ens.rates, 1, level=cfg.level)
    _put(out, f"ar.min.{tag}", both, clean, hw, n_aa)
    out[f"n_inputs.ar_apgd_square.{tag}"] = float(n_aa)
    return out


def _fixed_noise(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    ev: tuple[torch.Tensor, torch.Tensor],
    clean: np.ndarray,
    tag: str,
    seed: int,
) -> dict[str, float]:
    """PR under each fixed distribution, ``pr.min`` (the lowest of them on the test inputs,
    ``pr.min_ours`` of ours only) and ``pr.tuned`` (chosen on the selection inputs)."""
    out: dict[str, float] = {}
    for dist in DISTRIBUTIONS:
        est = estimate_fixed_pr(
            model,
            ev,
            dist,
            cfg.eps,
            cfg.mc_samples,
            scale=cfg.noise_scale,
            level=cfg.level,
            seed=seed_for(seed, "noise", dist),
        )
        _put(out, f"pr.{dist}.{tag}", est, clean, cfg.halfwidth)
    _alias(out, f"pr.min.{tag}", min((f"pr.{d}.{tag}" for d in DISTRIBUTIONS), key=out.get))
    ours = min((f"pr.{d}.{tag}" for d in OUR_DISTRIBUTIONS), key=out.get)
    _alias(out, f"pr.min_ours.{tag}", ours)
    tuned, noise = tuned_fixed_pr(
        model,
        (splits.x_select, splits.y_select),
        ev,
        cfg.eps,
        scales=cfg.tuned_scales,
        m=cfg.mc_samples,
        level=cfg.level,
        seed=seed_for(seed, "tuned"),
    )
    _put(out, f"pr.tuned.{tag}", tuned, clean, cfg.halfwidth)
    out[f"pr.tuned_scale.{tag}"] = noise.scale
    out[f"pr.tuned_family.{tag}"] = float(DISTRIBUTIONS.index(noise.dist))
    return out


def _universal(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    ev: tuple[torch.Tensor, torch.Tensor],
    clean: np.ndarray,
    tag: str,
    seed: int,
    gmm_dir: Path | None,
) -> dict[str, float]:
    """Accuracy under a universal and a per-class adversarial perturbation, fitted on the
    fitting inputs; ``uap.best``: the one of the two lower on the selection inputs."""
    out: dict[str, float] = {}
    select: dict[str, float] = {}
    for kind in UAP_KINDS:
        torch.manual_seed(seed_for(seed, "uap_init", kind))
        uap = UniversalPerturbation(
            splits.input_shape,
            cfg.eps,
            splits.n_classes,
            per_class=kind == "per_class",
            latent_size=min(cfg.latent_size, *splits.input_shape[1:]),
        )
        cost = uap.fit(
            model,
            (splits.x_fit, splits.y_fit),
            UAPConfig(cfg.uap_steps, cfg.fit_batch, cfg.uap_lr),
            seed=seed_for(seed, "uap", kind),
        )
        if gmm_dir is not None:
            _save_tensors({"delta": uap.delta}, gmm_dir / f"{tag}.uap_{kind}.safetensors")
        est = estimate_uap(model, ev, uap, level=cfg.level)
        _put(out, f"uap.{kind}.{tag}", est, clean, cfg.halfwidth, min(cfg.aa_inputs, len(ev[1])))
        out[f"seconds.fit.uap.{kind}.{tag}"] = cost["seconds"]
        sel = kept_rates(model, (splits.x_select, splits.y_select), uap.sampler, 1, cfg.eps)
        select[kind] = float(sel.mean())
    best = min(select, key=lambda k: select[k])
    _alias(out, f"uap.best.{tag}", f"uap.{best}.{tag}")
    out[f"uap.best_kind.{tag}"] = float(UAP_KINDS.index(best))
    return out


_SHAPE = {
    "neff": "effective_components",
    "neff_excess": "neff_excess",
    "spread": "spread",
    "spread_within": "spread_within",
    "saturation": "saturation",
}


def _fit_form(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    ev: tuple[torch.Tensor, torch.Tensor],
    clean: np.ndarray,
    names: tuple[str, str, str],
    seed: int,
    weight_floor: float | None = None,
) -> tuple[dict[str, float], PerturbationGMM]:
    """Fit and measure one form: ``nppr.<part>.<tag>`` (all inputs, ``cc.``, ``.sub``), its
    shape (``neff``, ``neff_excess``, ``spread``, ``spread_within``, ``saturation``) and cost,
    where ``names`` is ``(form, part, tag)`` (``part``: the form, or ``nofloor``)."""
    form, part, tag = names
    out: dict[str, float] = {}
    torch.manual_seed(seed_for(seed, "gmm_init", form))
    gmm = build_gmm(cfg, splits, form, cfg.eps, model, weight_floor)
    res = fit_nppr(
        model,
        (splits.x_fit, splits.y_fit),
        gmm,
        fit_config(cfg, cfg.fit_steps),
        seed=seed_for(seed, "gmm_fit", form),
    )
    key = f"nppr.{part}.{tag}"
    est = estimate_nppr(
        model, ev, gmm, cfg.mc_samples, level=cfg.level, seed=seed_for(seed, "draws", form)
    )
    _put(out, key, est, clean, cfg.halfwidth, min(cfg.aa_inputs, len(ev[1])))
    shape = mixture_shape(gmm, ev, seed=seed_for(seed, "shape", form))
    for name, field in _SHAPE.items():
        out[f"{name}.{part}.{tag}"] = shape[field]
    out[f"forward_passes.fit.{key}"] = float(res.forward_passes)
    out[f"seconds.fit.{key}"] = res.seconds
    out[f"fit_loss.{key}"] = float(np.mean(res.losses[-10:]))
    log(
        f"{tag} NPPR[{part}] = {est.value:.3f} [{est.lo:.3f}, {est.hi:.3f}], "
        f"{shape['effective_components']:.2f} components ({shape['neff_excess']:+.2f} over the "
        f"floor's minimum), spread {shape['spread']:.2f}, within {shape['spread_within']:.2f}"
    )
    return out, gmm


def _nppr(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    ev: tuple[torch.Tensor, torch.Tensor],
    clean: np.ndarray,
    tag: str,
    seed: int,
    gmm_dir: Path | None,
) -> dict[str, float]:
    """NPPR in each form, its mixture's shape and cost; ``nppr.best``: the form lowest on the
    selection inputs; ``nppr.nofloor``: the best form refitted without the weight floor."""
    out: dict[str, float] = {}
    select: dict[str, float] = {}
    for form in cfg.forms:
        figures, gmm = _fit_form(cfg, model, splits, ev, clean, (form, form, tag), seed)
        out.update(figures)
        if gmm_dir is not None:
            _save_tensors(gmm.state_dict(), _gmm_path(gmm_dir, tag, form, cfg.eps))
        sel = kept_rates(
            model, (splits.x_select, splits.y_select), gmm.sampler, 16, cfg.eps, seed=seed
        )
        select[form] = float(sel.mean())
    best = min(select, key=lambda f: select[f])
    _alias(out, f"nppr.best.{tag}", f"nppr.{best}.{tag}")
    for part in _SHAPE:
        out[f"{part}.best.{tag}"] = out[f"{part}.{best}.{tag}"]
    out[f"nppr.best_form.{tag}"] = float(FORMS.index(best))
    figures, _ = _fit_form(cfg, model, splits, ev, clean, (best, "nofloor", tag), seed, 0.0)
    out.update(figures)
    return out


def measure_model(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    tag: str,
    seed: int,
    gmm_dir: Path | None = None,
) -> dict[str, float]:
    """Every figure of one model at the headline budget (see the module docstring).

    Args:
        cfg: the run's config.
        model: the classifier (eval mode, on ``cfg.device``).
        splits: the replicate's inputs.
        tag: the model's key part (``cnn_std``).
        seed: the replicate's seed (streams for attacks, noise, fitting and draws).
        gmm_dir: where to save the fitted mixtures (None: not saved).

    Returns:
        Flat metrics, including the ratios ``nppr_over_pr.<tag>`` (best NPPR over the lowest
        fixed PR) and ``nppr_over_pr_tuned.<tag>``.
    """
    t0 = time.perf_counter()
    ev = (splits.x_eval.to(cfg.device), splits.y_eval.to(cfg.device))
    clean = clean_accuracy(model, ev).rates.astype(bool)
    out = _attacks(cfg, model, ev, clean, tag, seed)
    out.update(_fixed_noise(cfg, model, splits, ev, clean, tag, seed))
    out.update(_universal(cfg, model, splits, ev, clean, tag, seed, gmm_dir))
    out.update(_nppr(cfg, model, splits, ev, clean, tag, seed, gmm_dir))
    out[f"nppr_over_pr.{tag}"] = out[f"nppr.best.{tag}"] / max(out[f"pr.min.{tag}"], 1e-12)
    out[f"nppr_over_pr_tuned.{tag}"] = out[f"nppr.best.{tag}"] / max(out[f"pr.tuned.{tag}"], 1e-12)
    out[f"mc_samples_needed.{tag}"] = float(
        samples_for_halfwidth(cfg.halfwidth, out[f"nppr.best.{tag}"])
    )
    log(
        f"{tag}: clean {out[f'clean_acc.{tag}']:.3f}  AR min {out[f'ar.min.{tag}']:.3f}  "
        f"PR min {out[f'pr.min.{tag}']:.3f}  UAP best {out[f'uap.best.{tag}']:.3f}  "
        f"NPPR best {out[f'nppr.best.{tag}']:.3f}  ({time.perf_counter() - t0:.0f}s)"
    )
    return out


def sweep_budgets(
    cfg: RunConfig,
    model: nn.Module,
    splits: Splits,
    tag: str,
    seed: int,
    headline: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """PGD, the fixed distributions and NPPR (``none`` form) at every ``sweep_eps`` (keys
    ``<metric>.<family>.<tag>.eps0p05``), on the first ``sweep_inputs`` test inputs.

    Args:
        cfg: the run's config.
        model: the classifier.
        splits: the replicate's inputs.
        tag: the model's key part.
        seed: the replicate's seed.
        headline: the same replicate's :func:`measure_model` figures: at the headline budget
            they are copied (on all ``n_eval`` inputs) instead of measured again.

    Returns:
        Flat metrics with ``.lo`` / ``.hi``.
    """
    out: dict[str, float] = {}
    families = ("ar.pgd", *(f"pr.{d}" for d in DISTRIBUTIONS), "nppr.none")
    n = cfg.sweep_inputs
    xs = (splits.x_eval[:n].to(cfg.device), splits.y_eval[:n].to(cfg.device))
    for eps in cfg.sweep_eps:
        et = eps_tag(eps)
        if headline is not None and eps == cfg.eps and f"nppr.none.{tag}" in headline:
            for key, suffix in itertools.product(families, ("", ".lo", ".hi")):
                out[f"{key}.{tag}.{et}{suffix}"] = headline[f"{key}.{tag}{suffix}"]
            continue
        pgd = pgd_ar(model, xs, eps, steps=cfg.pgd_steps, level=cfg.level, seed=seed)
        out.update(pgd.as_metrics(f"ar.pgd.{tag}.{et}"))
        for dist in DISTRIBUTIONS:
            est = estimate_fixed_pr(
                model,
                xs,
                dist,
                eps,
                cfg.sweep_mc_samples,
                scale=cfg.noise_scale,
                level=cfg.level,
                seed=seed_for(seed, "noise", dist, et),
            )
            out.update(est.as_metrics(f"pr.{dist}.{tag}.{et}"))
        torch.manual_seed(seed_for(seed, "gmm_init", "none", et))
        gmm = build_gmm(cfg, splits, "none", eps, model)
        fit_nppr(
            model,
            (splits.x_fit, splits.y_fit),
            gmm,
            fit_config(cfg, cfg.sweep_fit_steps),
            seed=seed_for(seed, "gmm_fit", "none", et),
        )
        est = estimate_nppr(model, xs, gmm, cfg.sweep_mc_samples, level=cfg.level, seed=seed)
        out.update(est.as_metrics(f"nppr.none.{tag}.{et}"))
        log(
            f"{tag} {et}: AR {pgd.value:.3f}  NPPR {est.value:.3f}  "
            f"PR uniform {out[f'pr.uniform.{tag}.{et}']:.3f}"
        )
    return out
