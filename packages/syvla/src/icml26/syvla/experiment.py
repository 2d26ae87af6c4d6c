"""``icml26 run syvla``: the paper's experiment as a recipe of named stages.

VQA data -> expert demonstrations -> VQA pretraining of the backbone -> behaviour cloning
(decoupled and joint) -> the RL stage of every method and seed -> evaluation (success on four
splits, held-out VQA) -> metrics, figures. Each step is a call into :mod:`icml26.syvla.steps`;
finished stages are kept in ``<run>/stages/`` so a killed run resumes where it stopped.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from icml26.shared import PICKLE, Stages, log, seed_for
from icml26.syvla.config import METHODS, RunConfig
from icml26.syvla.evaluate import evaluate_success, vqa_accuracy
from icml26.syvla.figures import plot_run
from icml26.syvla.levels import is_registry_level, observe
from icml26.syvla.rgb import rgb_observer
from icml26.syvla.steps import (
    behaviour_clone,
    evaluate_model,
    expert_demos,
    export_backbone,
    pretrain_backbone,
    reinforce,
    text_bank,
    tile_encoder,
    vqa_data,
)
from icml26.syvla.tables import summarise, summarise_levels, summarise_pretrain

__all__ = ["run", "run_levels", "run_pretrain"]


def run(cfg: RunConfig, run_dir: Any) -> dict[str, float]:
    """The whole experiment (see the module docstring); returns the flat metrics."""
    if cfg.pretrain_only:
        return run_pretrain(cfg, run_dir)
    if cfg.levels:
        return run_levels(cfg, run_dir)
    run_dir.update_env(device=cfg.device)
    stages = Stages(run_dir)
    bank = text_bank(cfg)
    vqa = stages.once("vqa-data", lambda: vqa_data(cfg), saver=PICKLE)
    log(f"syvla: {len(vqa[0])} VQA training views")
    pretrained: dict[int, tuple[Any, dict[str, Any]]] = {}
    evals: dict[str, list[dict[str, float]]] = {m: [] for m in cfg.methods}
    rl: dict[str, list[dict[str, Any]]] = {m: [] for m in cfg.methods if METHODS[m].rl}
    bc_info, demo_sets = [], []
    shown = None  # the first seed's syvla model, for the rollout strip
    for k in range(cfg.seeds):
        seed = cfg.seed + k
        base = cfg.seed if cfg.shared_backbone else seed
        if base not in pretrained:
            pretrained[base] = pretrain_backbone(cfg, stages, bank, vqa, base, run_dir)
        # every repetition: its own demonstrations (its demos stream) and its own BC models
        demos = stages.once(
            f"demos-seed{seed}", partial(expert_demos, cfg, bank, seed), saver=PICKLE
        )
        bcs = {
            d: behaviour_clone(
                cfg, stages, pretrained[base][0], demos, bank, seed, decouple=d, vqa_test=vqa[2]
            )
            for d in (True, False)
        }
        bc_info.append(bcs)
        demo_sets.append(demos)
        for method in cfg.methods:
            spec = METHODS[method]
            model = bcs[spec.decouple][0]
            if spec.rl:
                model, info = reinforce(
                    cfg, stages, method, model, demos, bank, seed, run_dir.log_metrics
                )
                rl[method].append(info)
                shown = model if method == "syvla" and shown is None else shown
            evals[method].append(
                stages.once(
                    f"eval-{method}-seed{seed}",
                    partial(evaluate_model, cfg, model, vqa[2], bank, seed),
                )
            )
        log(f"syvla: seed {seed} done ({len(demos)} expert steps)")
    strip: list[tuple[np.ndarray, str]] = []
    if shown is not None:
        evaluate_success(shown, bank, "train", 1, seed=cfg.seed, n_envs=1, frames=strip)
    pretrain = [p[1] for p in pretrained.values()]
    metrics = summarise(cfg, evals, rl, pretrain, bc_info, demo_sets)
    plot_run(cfg, run_dir, metrics, rl, strip)
    return metrics


def run_pretrain(cfg: RunConfig, run_dir: Any) -> dict[str, float]:
    """The ``pretrain`` profile: the VQA pretraining alone, written to ``<run>/backbone/`` as
    a shippable backbone with its provenance record (copy both files into the package's
    ``backbones/`` folder to ship them); returns the pretraining metrics."""
    run_dir.update_env(device=cfg.device)
    stages = Stages(run_dir)
    bank = text_bank(cfg)
    vqa = stages.once("vqa-data", lambda: vqa_data(cfg), saver=PICKLE)
    model, info = pretrain_backbone(cfg, stages, bank, vqa, cfg.seed, run_dir)
    weights, record = export_backbone(cfg, model, info, vqa, run_dir)
    log(f"syvla: backbone written to {weights} and {record}")
    return summarise_pretrain(info)


def run_levels(cfg: RunConfig, run_dir: Any) -> dict[str, float]:
    """The registry-level experiment: one VQA-pretrained backbone; per level of
    ``cfg.levels`` and seed the bot's demonstrations (the seed's ``demos`` stream), BC
    (decoupled and joint), the RL stage of every RL method, success on fresh rooms (with
    ``rgb_steps``: for ``cfg.rgb_methods`` also read from minigrid's RGB view by the tile
    encoder) and the final model's held-out VQA accuracy."""
    bad = [lv for lv in cfg.levels if not is_registry_level(lv)]
    if bad:
        raise ValueError(f"levels must be Gymnasium ids (BabyAI-GoToLocal-v0), got {bad}")
    run_dir.update_env(device=cfg.device)
    stages = Stages(run_dir)
    bank = text_bank(cfg)
    vqa = stages.once("vqa-data", lambda: vqa_data(cfg), saver=PICKLE)
    pre, pre_info = pretrain_backbone(cfg, stages, bank, vqa, cfg.seed, run_dir)
    # the RGB path: a per-tile encoder reads minigrid's partial RGB view into the same codes
    rgb = tile_encoder(cfg, stages) if cfg.rgb_steps else None
    views = {"": observe} | ({"rgb": rgb_observer(rgb[0])} if rgb else {})
    success: dict[str, dict[str, dict[str, list[float]]]] = {v: {} for v in views}
    vqa_acc: dict[str, dict[str, list[float]]] = {}
    budget: dict[str, list[dict[str, float]]] = {}
    for level in cfg.levels:
        for v in views:
            success[v][level] = {m: [] for m in cfg.methods if v == "" or m in cfg.rgb_methods}
        vqa_acc[level] = {m: [] for m in cfg.methods}
        budget[level] = []
        for k in range(cfg.seeds):
            seed = cfg.seed + k
            demos, out = _level_seed(cfg, stages, pre, bank, vqa[2], level, seed, views, run_dir)
            budget[level].append({"demo_episodes": demos.solved, "demo_steps": len(demos)})
            for method, (per_view, acc) in out.items():
                for v, value in per_view.items():
                    success[v][level][method].append(value)
                vqa_acc[level][method].append(acc)
            log(f"syvla: {level} seed {seed} done ({len(demos)} expert steps)")
    return summarise_levels(cfg, success, budget, pre_info, rgb[1] if rgb else None, vqa_acc)


def _level_seed(
    cfg: RunConfig,
    stages: Stages,
    pre: Any,
    bank: Any,
    vqa_test: Any,
    level: str,
    seed: int,
    views: dict[str, Any],
    run_dir: Any,
) -> tuple[Any, dict[str, tuple[dict[str, float], float]]]:
    """One level and seed of :func:`run_levels`: the bot's demonstrations, BC (decoupled and
    joint), every method's RL stage, its success per view (the same rooms for every view and
    method: the seed's ``eval`` stream) and its held-out VQA accuracy."""
    tag = f"-{level}"
    demos = stages.once(
        f"demos{tag}-seed{seed}", partial(expert_demos, cfg, bank, seed, (level,)), saver=PICKLE
    )
    bcs = {
        d: behaviour_clone(cfg, stages, pre, demos, bank, seed, decouple=d, tag=tag)[0]
        for d in (True, False)
    }
    out: dict[str, tuple[dict[str, float], float]] = {}
    for method in cfg.methods:
        model = bcs[METHODS[method].decouple]
        if METHODS[method].rl:
            model, _ = reinforce(
                cfg,
                stages,
                method,
                model,
                demos,
                bank,
                seed,
                run_dir.log_metrics,
                levels=(level,),
                tag=tag,
            )
        per_view = {}
        for v, observer in views.items():
            if v and method not in cfg.rgb_methods:
                continue
            per_view[v] = stages.once(
                f"eval{v and '-' + v}{tag}-{method}-seed{seed}",
                partial(
                    evaluate_success,
                    model,
                    bank,
                    "train",
                    cfg.eval_episodes,
                    seed=seed_for(seed, "eval", level),
                    levels=(level,),
                    observer=observer,
                ),
            )[0]
        out[method] = (per_view, vqa_accuracy(model, vqa_test, bank))
    return demos, out
