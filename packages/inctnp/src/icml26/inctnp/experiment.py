"""``icml26 run inctnp`` and ``icml26 bench inctnp``."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from icml26.inctnp.checkpoint import save_model
from icml26.inctnp.data import GPSource, TabularSource, TaskBatch, TemperatureSource
from icml26.inctnp.evaluation import (
    implicit_bayes_gap,
    incremental_loglik,
    model_predictor,
    predictive_scores,
    scaling_exponent,
    sequential_loglik,
    update_latency_ms,
)
from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.inctnp.paper import BenchConfig, RunConfig
from icml26.inctnp.train import TrainConfig, train
from icml26.shared import PALETTE, figure, log, seed_everything

__all__ = ["bench", "make_source", "run"]

MODELS = ("tnp", "inctnp")


def make_source(task: str, seed: int = 0) -> Any:
    """A task source by name: ``gp-<kernel>``, ``gp-mix``, ``gp2d-rbf``, ``diabetes``,
    ``temperature`` or ``csv:PATH:TARGET``."""
    if task.startswith("gp2d-"):
        return GPSource(task.removeprefix("gp2d-"), dim_x=2)
    if task.startswith("gp-"):
        return GPSource(task.removeprefix("gp-"), dim_x=1)
    if task == "diabetes":
        return TabularSource.diabetes(seed)
    if task == "temperature":
        return TemperatureSource(seed)
    if task.startswith("csv:"):
        path, sep, target = task.removeprefix("csv:").rpartition(":")
        if not sep or not path or not target:
            raise ValueError(
                f"task {task!r} must have the form csv:PATH:TARGET (the CSV file, then the "
                "name of its target column), e.g. csv:data/houses.csv:price"
            )
        return TabularSource.from_csv(path, target, seed)
    raise ValueError(f"unknown task {task!r}")


def _group_sources(cfg: RunConfig, group: str) -> tuple[Any, dict[str, Any]]:
    """(training source, {evaluation task name: source}) for a training group."""
    if group == "gp":
        return GPSource("mix"), {f"gp_{k}": GPSource(k) for k in ("rbf", "matern52", "periodic")}
    if group == "gp2d":
        src = GPSource("rbf", dim_x=2)
        return src, {"gp2d_rbf": src}
    if group == "diabetes":
        src = TabularSource.diabetes(cfg.seed)
        return src, {"diabetes": src}
    if group == "temperature":
        src = TemperatureSource(cfg.seed)
        return src, {"temperature": src}
    assert cfg.csv_path is not None
    src = TabularSource.from_csv(cfg.csv_path, cfg.csv_target, cfg.seed)
    return src, {src.name.replace("-", "_"): src}


def _test_batches(source: Any, cfg: RunConfig, seed: int, n: int, count: int) -> list[TaskBatch]:
    g = torch.Generator().manual_seed(10_000 + seed)
    batch = 16
    return [source.sample(min(batch, count - i), n, g, "test") for i in range(0, count, batch)]


def _oracle_predictor(source: Any):  # type: ignore[no-untyped-def]
    return lambda tb, n_ctx, xt: source.oracle(tb, n_ctx, xt)


def run(cfg: RunConfig, run_dir: Any) -> dict[str, Any]:
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {cfg.device!r} requested but CUDA is not available")
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    metrics: dict[str, Any] = {}
    tcfg = TrainConfig(
        steps=cfg.steps,
        batch_size=cfg.batch_size,
        n_points=cfg.n_points,
        lr=cfg.lr,
        checkpoint_every=max(50, cfg.steps // 4),
    )
    curves: dict[str, dict[str, list[float]]] = {}
    examples: dict[str, Any] = {}
    latency_model: dict[str, NeuralProcess] = {}
    for group in cfg.groups:
        train_src, eval_srcs = _group_sources(cfg, group)
        trained: dict[str, NeuralProcess] = {}
        for name in MODELS:
            causal = name == "inctnp"
            torch.manual_seed(cfg.seed)
            model = build_model(
                ModelConfig(
                    dim_x=train_src.dim_x,
                    width=cfg.width,
                    layers=cfg.layers,
                    heads=cfg.heads,
                    causal=causal,
                )
            )
            t0 = time.perf_counter()
            train(
                model,
                train_src,
                tcfg,
                strategy="autoregressive" if causal else "split",
                seed=cfg.seed,
                checkpoint_dir=run_dir.path / "checkpoints",
                tag=f"{group}.{name}",
                device=cfg.device,
                log_metrics=run_dir.log_metrics,
            )
            metrics[f"train_seconds.{group}.{name}"] = time.perf_counter() - t0
            model.cpu()
            save_model(model, run_dir.path / f"{group}.{name}.safetensors")
            trained[name] = model
            log(f"{group}/{name}: trained in {metrics[f'train_seconds.{group}.{name}']:.0f}s")
        latency_model.setdefault("tnp", trained["tnp"])
        latency_model.setdefault("inctnp", trained["inctnp"])
        for task, src in eval_srcs.items():
            batches = _test_batches(src, cfg, cfg.seed, cfg.n_points, cfg.n_test_tasks)
            predictors = {
                "tnp": model_predictor(trained["tnp"]),
                "inctnp": model_predictor(trained["inctnp"]),
                "gp_oracle": _oracle_predictor(src),
            }
            curves[task] = {}
            for name, predict in predictors.items():
                per_ctx = [predictive_scores(predict, batches, c) for c in cfg.ctx_sizes]
                for c, (nll, rmse) in zip(cfg.ctx_sizes, per_ctx, strict=True):
                    metrics[f"nll_at.{task}.c{c}.{name}"] = nll
                    metrics[f"rmse_at.{task}.c{c}.{name}"] = rmse
                metrics[f"nll.{task}.{name}"] = float(np.mean([p[0] for p in per_ctx]))
                metrics[f"rmse.{task}.{name}"] = float(np.mean([p[1] for p in per_ctx]))
                curves[task][name] = [p[0] for p in per_ctx]
            # Streaming implicit Bayesianness on short sequences.
            g = torch.Generator().manual_seed(20_000 + cfg.seed)
            bayes_tb = src.sample(cfg.bayes_tasks, cfg.bayes_points, g, "test")
            logliks = {
                "tnp": lambda tb, m=trained["tnp"]: sequential_loglik(model_predictor(m), tb, 1),
                "inctnp": lambda tb, m=trained["inctnp"]: incremental_loglik(m, tb, 1),
                "gp_oracle": lambda tb, s=src: sequential_loglik(_oracle_predictor(s), tb, 1),
            }
            for name, fn in logliks.items():
                gp = torch.Generator().manual_seed(30_000 + cfg.seed)
                metrics[f"implicit_bayes_gap.{task}.{name}"] = implicit_bayes_gap(
                    fn, bayes_tb, cfg.bayes_perms, gp
                )
            examples[task] = (batches[0], trained, src)
            log(
                f"{task}: nll tnp {metrics[f'nll.{task}.tnp']:.3f} inctnp {metrics[f'nll.{task}.inctnp']:.3f} oracle {metrics[f'nll.{task}.gp_oracle']:.3f}"
            )

    # Update latency: add one point to a context of N and predict one target.
    lat: dict[str, list[float]] = {m: [] for m in MODELS}
    for n in cfg.latency_sizes:
        for name in MODELS:
            ms, _ = update_latency_ms(
                latency_model[name], n, cfg.latency_repeats, device=cfg.device, seed=cfg.seed
            )
            metrics[f"update_ms.{name}.n{n}"] = ms
            lat[name].append(ms)
        metrics[f"speedup.n{n}"] = (
            metrics[f"update_ms.tnp.n{n}"] / metrics[f"update_ms.inctnp.n{n}"]
        )
    for name in MODELS:
        metrics[f"scaling_exponent.{name}"] = scaling_exponent(cfg.latency_sizes, lat[name])
    _plots(cfg, run_dir, curves, examples, lat)
    return metrics


def _plots(
    cfg: RunConfig,
    run_dir: Any,
    curves: dict[str, Any],
    examples: dict[str, Any],
    lat: dict[str, list[float]],
) -> None:
    colors = {"tnp": PALETTE[1], "inctnp": PALETTE[0], "gp_oracle": PALETTE[7]}
    with figure(
        run_dir.plot_path("latency_vs_n"), title="Add one point to N, predict one target"
    ) as (_fig, ax):
        for name in MODELS:
            ax.loglog(cfg.latency_sizes, lat[name], "o-", color=colors[name], label=name)
        ax.set_xlabel("context size N")
        ax.set_ylabel("milliseconds (median)")
        ax.legend()
    tasks = list(curves)
    with figure(
        run_dir.plot_path("nll_vs_context"), 1, len(tasks), title="Test NLL per target point"
    ) as (_fig, axes):
        for ax, task in zip(np.atleast_1d(axes), tasks, strict=True):
            for name, ys in curves[task].items():
                ax.plot(cfg.ctx_sizes, ys, "o-", color=colors[name], label=name)
            ax.set_title(task)
            ax.set_xlabel("context points")
        np.atleast_1d(axes)[0].set_ylabel("NLL")
        np.atleast_1d(axes)[0].legend()
    one_d = [t for t in examples if examples[t][0].x.shape[-1] == 1]
    if one_d:
        with figure(
            run_dir.plot_path("streaming_examples"),
            1,
            len(one_d),
            title="incTNP streaming: predictions after k points (cached updates)",
        ) as (_fig, axes):
            for ax, task in zip(np.atleast_1d(axes), one_d, strict=True):
                tb, trained, _src = examples[task]
                x, y = tb.x[:1], tb.y[:1]
                order = torch.argsort(x[0, :, 0])
                grid = torch.linspace(float(x.min()), float(x.max()), 200).view(1, -1, 1)
                stream = trained["inctnp"].stream()
                k_small = min(8, x.shape[1] - 1)
                stream.condition(x[:, :k_small], y[:, :k_small])
                for k, color in ((k_small, PALETTE[4]), (x.shape[1] // 2, PALETTE[0])):
                    if k > stream.size:
                        stream.update(x[:, stream.size : k], y[:, stream.size : k])
                    mean, std = stream.predict(grid)
                    m, s = mean[0, :, 0].numpy(), std[0, :, 0].numpy()
                    ax.plot(grid[0, :, 0], m, color=color, label=f"after {k} points")
                    ax.fill_between(
                        grid[0, :, 0].numpy(), m - 2 * s, m + 2 * s, color=color, alpha=0.2
                    )
                ax.plot(x[0, order, 0], y[0, order, 0], "k.", ms=3, label="all points")
                ax.set_title(task)
            np.atleast_1d(axes)[0].legend()


def bench(cfg: BenchConfig, run_dir: Any) -> dict[str, Any]:
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
    metrics: dict[str, Any] = {}
    models = {}
    for name in MODELS:
        torch.manual_seed(cfg.seed)
        models[name] = build_model(
            ModelConfig(
                width=cfg.width, layers=cfg.layers, heads=cfg.heads, causal=name == "inctnp"
            )
        )
    lat: dict[str, list[float]] = {m: [] for m in MODELS}
    cache_bytes = []
    for n in cfg.sizes:
        for name in MODELS:
            ms, nbytes = update_latency_ms(
                models[name], n, cfg.repeats, device=cfg.device, seed=cfg.seed
            )
            metrics[f"update_ms.{name}.n{n}"] = ms
            lat[name].append(ms)
            if name == "inctnp":
                metrics[f"cache_mb.n{n}"] = nbytes / 2**20
                cache_bytes.append(nbytes)
        metrics[f"speedup.n{n}"] = (
            metrics[f"update_ms.tnp.n{n}"] / metrics[f"update_ms.inctnp.n{n}"]
        )
        log(
            f"N={n}: tnp {metrics[f'update_ms.tnp.n{n}']:.2f} ms, inctnp {metrics[f'update_ms.inctnp.n{n}']:.2f} ms"
        )
    for name in MODELS:
        metrics[f"scaling_exponent.{name}"] = scaling_exponent(cfg.sizes, lat[name])
    metrics["cache_scaling_exponent"] = scaling_exponent(cfg.sizes, cache_bytes)
    if cfg.device.startswith("cuda"):
        metrics["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
    with figure(run_dir.plot_path("bench_latency"), 1, 2) as (_fig, (ax1, ax2)):
        for name, color in (("tnp", PALETTE[1]), ("inctnp", PALETTE[0])):
            ax1.loglog(cfg.sizes, lat[name], "o-", color=color, label=name)
        ax1.set_xlabel("context size N")
        ax1.set_ylabel("ms per update + prediction")
        ax1.legend()
        ax2.loglog(cfg.sizes, np.asarray(cache_bytes) / 2**20, "o-", color=PALETTE[0])
        ax2.set_xlabel("context size N")
        ax2.set_ylabel("KV cache (MiB)")
    return metrics
