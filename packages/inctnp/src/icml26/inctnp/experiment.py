"""``icml26 run inctnp``: the paper's comparison as a recipe of resumable stages.

Per group and seed: train TNP-D and incTNP (one stage each: the converged weights and the
weights at the equal-targets budget), then score the pair (one stage); then time updates
(one stage). A killed run started again into the same folder resumes at the first
unfinished stage (and a killed training at its last checkpoint).
"""

from __future__ import annotations

from typing import Any

import torch

from icml26.inctnp.checkpoint import save_model
from icml26.inctnp.config import RunConfig
from icml26.inctnp.figures import plot_latency, plot_nll_vs_context, plot_streaming, plot_training
from icml26.inctnp.model import build_model
from icml26.inctnp.protocol import (
    MODELS,
    evaluate_seed,
    group_sources,
    model_config,
    time_updates,
    train_model,
)
from icml26.inctnp.summary import latency_metrics, predictive_metrics, training_metrics
from icml26.inctnp.tables import tables_markdown
from icml26.shared import TORCH, RunDir, Stages, seed_for

__all__ = ["run"]


def run(cfg: RunConfig, run_dir: RunDir) -> dict[str, float]:
    """Train over seeds, compare at equal targets and at convergence, time updates.

    Args:
        cfg: the run's config.
        run_dir: the run folder.

    Returns:
        The flat metrics (keys in :mod:`icml26.inctnp.summary`).
    """
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    stages = Stages(run_dir)
    ckpt = run_dir.path / "checkpoints"
    states: dict[str, list[dict[str, Any]]] = {}
    evals: dict[str, list[dict[str, Any]]] = {}
    for group in cfg.groups:
        states[group], evals[group] = [], []
        for k in range(cfg.seeds):
            pair = {
                m: stages.once(
                    f"train-{group}-{k}-{m}",
                    lambda m=m, k=k, g=group: train_model(cfg, g, k, m, ckpt),
                    saver=TORCH,
                )
                for m in MODELS
            }
            states[group].append(pair)
            evals[group].append(
                stages.once(
                    f"eval-{group}-{k}", lambda p=pair, k=k, g=group: evaluate_seed(cfg, g, k, p)
                )
            )
    first = cfg.groups[0]
    models = {m: _model(cfg, first, m, states[first][0][m]["best"]) for m in MODELS}
    latency = stages.once("latency", lambda: time_updates(cfg, models))
    metrics = predictive_metrics(evals, cfg.ctx_sizes) | training_metrics(evals)
    metrics |= latency_metrics(latency)
    for m, model in models.items():
        save_model(model, run_dir.path / f"{first}.{m}.safetensors")
    tasks = [t for g in evals for t in evals[g][0] if t != "info"]
    text = tables_markdown(metrics, cfg.groups, tasks)
    (run_dir.path / "tables.md").write_text(text, encoding="utf-8")
    _figures(cfg, run_dir, metrics, states, evals, latency)
    return metrics


def _model(cfg: RunConfig, group: str, name: str, state: dict[str, torch.Tensor]) -> Any:
    src, _ = group_sources(cfg, group)
    model = build_model(model_config(cfg, src.dim_x, name))
    model.load_state_dict(state)
    return model.eval()


def _figures(
    cfg: RunConfig,
    run_dir: RunDir,
    metrics: dict[str, float],
    states: dict[str, list[dict[str, Any]]],
    evals: dict[str, list[dict[str, Any]]],
    latency: dict[str, Any],
) -> None:
    plot_latency(cfg.latency_sizes, latency, run_dir.plot_path("latency_vs_n"))
    tasks = [t for g in evals for t in evals[g][0] if t != "info"]
    plot_nll_vs_context(metrics, tasks, cfg.ctx_sizes, run_dir.plot_path("nll_vs_context"))
    plot_training({g: [e["info"] for e in evals[g]] for g in evals}, run_dir.plot_path("training"))
    examples = {}
    for group in cfg.groups:
        _, srcs = group_sources(cfg, group)
        for task, src in srcs.items():
            if src.dim_x == 1:
                g = torch.Generator().manual_seed(seed_for(cfg.seed, "example", task))
                model = _model(cfg, group, "inctnp", states[group][0]["inctnp"]["best"])
                examples[task] = (src.sample(1, cfg.n_points, g, "test"), model)
    if examples:
        plot_streaming(examples, run_dir.plot_path("streaming_examples"))
