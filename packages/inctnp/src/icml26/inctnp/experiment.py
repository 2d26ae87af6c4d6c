"""``icml26 run inctnp`` and ``icml26 bench inctnp``.

The run, as the paper's experiment: for every task group, :func:`train_pair` trains TNP-D and
incTNP with equal budgets; per evaluation task :func:`predictive_metrics` scores them (and the
GP reference) against the context size and :func:`exchangeability_metrics` measures their
implicit Bayesianness under one-at-a-time streaming; :func:`latency_metrics` times a
streaming update against the context size; then the plots.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from icml26.inctnp.checkpoint import save_model
from icml26.inctnp.config import BenchConfig, RunConfig
from icml26.inctnp.data import (
    GPSource,
    TabularSource,
    TaskBatch,
    TemperatureSource,
    make_source,
)
from icml26.inctnp.evaluation import (
    Marginals,
    exchangeability_kl,
    incremental_marginals,
    model_predictor,
    ordered_marginals,
    permutation_spread,
    predictive_scores,
    scaling_exponent,
    streaming_marginals,
    update_latency_ms,
    update_memory,
)
from icml26.inctnp.model import ModelConfig, NeuralProcess, build_model
from icml26.inctnp.train import TrainConfig, train
from icml26.shared import PALETTE, figure, log, seed_everything

__all__ = [
    "bench",
    "exchangeability_metrics",
    "latency_metrics",
    "make_source",  # re-exported from icml26.inctnp.data
    "predictive_metrics",
    "run",
    "train_pair",
]

MODELS = ("tnp", "inctnp")
Source = GPSource | TabularSource | TemperatureSource


def _group_sources(cfg: RunConfig, group: str) -> tuple[Source, dict[str, Source]]:
    """(training source, {evaluation task name: source}) for a training group."""
    if group == "gp":
        return GPSource("mix"), {f"gp_{k}": GPSource(k) for k in ("rbf", "matern52", "periodic")}
    if group == "gp2d":
        src = GPSource("rbf", dim_x=2)
        return src, {"gp2d_rbf": src}
    if group == "diabetes":
        tab = TabularSource.diabetes(cfg.seed)
        return tab, {"diabetes": tab}
    if group == "temperature":
        temp = TemperatureSource(cfg.seed)
        return temp, {"temperature": temp}
    assert cfg.csv_path is not None
    csv = TabularSource.from_csv(cfg.csv_path, cfg.csv_target, cfg.seed)
    return csv, {csv.name.replace("-", "_"): csv}


def _test_batches(source: Any, cfg: RunConfig, seed: int, n: int, count: int) -> list[TaskBatch]:
    g = torch.Generator().manual_seed(10_000 + seed)
    batch = 16
    return [source.sample(min(batch, count - i), n, g, "test") for i in range(0, count, batch)]


def _oracle_predictor(source: Any):  # type: ignore[no-untyped-def]
    return lambda tb, n_ctx, xt: source.oracle(tb, n_ctx, xt)


@dataclass(frozen=True)
class TrainedPair:
    """TNP-D and incTNP trained on one group with the same budget (CPU models)."""

    models: dict[str, NeuralProcess]
    seconds: dict[str, float]


@dataclass(frozen=True)
class TaskScores:
    """Predictive scores of one evaluation task: metric entries and the NLL curves against
    the context sizes (per model, for the plot)."""

    metrics: dict[str, float]
    curves: dict[str, list[float]]
    example: TaskBatch  # the first test batch (plotted)


@dataclass(frozen=True)
class Latency:
    """Update latency per model against ``sizes`` (ms) and its metric entries."""

    metrics: dict[str, float]
    millis: dict[str, list[float]]


def run(cfg: RunConfig, run_dir: Any) -> dict[str, Any]:
    """Train, score, measure exchangeability and time updates (see the module docstring)."""
    _start(cfg, run_dir)
    metrics: dict[str, Any] = {}
    curves: dict[str, dict[str, list[float]]] = {}
    examples: dict[str, Any] = {}
    latency_models: dict[str, NeuralProcess] = {}
    for group in cfg.groups:
        train_src, eval_srcs = _group_sources(cfg, group)
        pair = train_pair(cfg, group, train_src, run_dir)
        metrics.update({f"train_seconds.{group}.{m}": s for m, s in pair.seconds.items()})
        for name in MODELS:
            latency_models.setdefault(name, pair.models[name])
        for task, src in eval_srcs.items():
            scores = predictive_metrics(cfg, task, src, pair.models)
            metrics.update(scores.metrics)
            curves[task] = scores.curves
            metrics.update(exchangeability_metrics(cfg, task, src, pair.models))
            examples[task] = (scores.example, pair.models)
            log(
                f"{task}: nll tnp {metrics[f'nll.{task}.tnp']:.3f} inctnp "
                f"{metrics[f'nll.{task}.inctnp']:.3f} oracle {metrics[f'nll.{task}.gp_oracle']:.3f}"
            )
    latency = latency_metrics(cfg, latency_models)
    metrics.update(latency.metrics)
    _plots(cfg, run_dir, curves, examples, latency.millis)
    return metrics


def _start(cfg: RunConfig, run_dir: Any) -> None:
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)


def train_pair(cfg: RunConfig, group: str, source: Source, run_dir: Any) -> TrainedPair:
    """Stage 1: TNP-D (random context/target splits) and incTNP (autoregressive, causal)
    from the same seed and budget; checkpointed, saved as ``<group>.<model>.safetensors``."""
    tcfg = TrainConfig(
        steps=cfg.steps,
        batch_size=cfg.batch_size,
        n_points=cfg.n_points,
        lr=cfg.lr,
        checkpoint_every=max(50, cfg.steps // 4),
    )
    models: dict[str, NeuralProcess] = {}
    seconds: dict[str, float] = {}
    for name in MODELS:
        causal = name == "inctnp"
        torch.manual_seed(cfg.seed)
        model = build_model(
            ModelConfig(
                dim_x=source.dim_x,
                width=cfg.width,
                layers=cfg.layers,
                heads=cfg.heads,
                causal=causal,
            )
        )
        t0 = time.perf_counter()
        train(
            model,
            source,
            tcfg,
            strategy="autoregressive" if causal else "split",
            seed=cfg.seed,
            checkpoint_dir=run_dir.path / "checkpoints",
            tag=f"{group}.{name}",
            device=cfg.device,
            log_metrics=run_dir.log_metrics,
        )
        seconds[name] = time.perf_counter() - t0
        model.cpu()
        save_model(model, run_dir.path / f"{group}.{name}.safetensors")
        models[name] = model
        log(f"{group}/{name}: trained in {seconds[name]:.0f}s")
    return TrainedPair(models, seconds)


def predictive_metrics(
    cfg: RunConfig, task: str, source: Source, models: dict[str, NeuralProcess]
) -> TaskScores:
    """Stage 2: test NLL and RMSE per target point at every context size, for both models
    and the GP reference (``nll_at``/``rmse_at`` per size, ``nll``/``rmse`` their mean)."""
    batches = _test_batches(source, cfg, cfg.seed, cfg.n_points, cfg.n_test_tasks)
    predictors = {
        "tnp": model_predictor(models["tnp"]),
        "inctnp": model_predictor(models["inctnp"]),
        "gp_oracle": _oracle_predictor(source),
    }
    metrics: dict[str, float] = {}
    curves: dict[str, list[float]] = {}
    for name, predict in predictors.items():
        per_ctx = [predictive_scores(predict, batches, c) for c in cfg.ctx_sizes]
        for c, (nll, rmse) in zip(cfg.ctx_sizes, per_ctx, strict=True):
            metrics[f"nll_at.{task}.c{c}.{name}"] = nll
            metrics[f"rmse_at.{task}.c{c}.{name}"] = rmse
        metrics[f"nll.{task}.{name}"] = float(np.mean([p[0] for p in per_ctx]))
        metrics[f"rmse.{task}.{name}"] = float(np.mean([p[1] for p in per_ctx]))
        curves[name] = [p[0] for p in per_ctx]
    return TaskScores(metrics, curves, batches[0])


def exchangeability_metrics(
    cfg: RunConfig, task: str, source: Source, models: dict[str, NeuralProcess]
) -> dict[str, float]:
    """Stage 3: implicit Bayesianness under one-at-a-time streaming, on ``bayes_tasks``
    sequences of ``bayes_points``, from the same ``bayes_perms`` orders for both measures:
    ``exchangeability_kl`` (the paper's KL to the permutation mixture, nats per task) and
    ``implicit_bayes_gap`` (ours: spread of the sequential log-likelihood over orders)."""
    g = torch.Generator().manual_seed(20_000 + cfg.seed)
    tb = source.sample(cfg.bayes_tasks, cfg.bayes_points, g, "test")
    marginals: dict[str, Marginals] = {
        "tnp": lambda b: streaming_marginals(model_predictor(models["tnp"]), b, 1),
        "inctnp": lambda b: incremental_marginals(models["inctnp"], b, 1),
        "gp_oracle": lambda b: streaming_marginals(_oracle_predictor(source), b, 1),
    }
    out: dict[str, float] = {}
    for name, fn in marginals.items():
        gp = torch.Generator().manual_seed(30_000 + cfg.seed)
        om = ordered_marginals(fn, tb, cfg.bayes_perms, gp)
        out[f"implicit_bayes_gap.{task}.{name}"] = permutation_spread(om)
        gs = torch.Generator().manual_seed(40_000 + cfg.seed)
        out[f"exchangeability_kl.{task}.{name}"] = exchangeability_kl(om, cfg.bayes_samples, gs)
    return out


def latency_metrics(cfg: RunConfig, models: dict[str, NeuralProcess]) -> Latency:
    """Stage 4: add one point to a context of N and predict one target, per model and N
    (``update_ms``), incTNP's speed-up and both log-log slopes (``scaling_exponent``)."""
    metrics: dict[str, float] = {}
    millis: dict[str, list[float]] = {m: [] for m in MODELS}
    for n in cfg.latency_sizes:
        for name in MODELS:
            ms, _ = update_latency_ms(
                models[name], n, cfg.latency_repeats, device=cfg.device, seed=cfg.seed
            )
            metrics[f"update_ms.{name}.n{n}"] = ms
            millis[name].append(ms)
        metrics[f"speedup.n{n}"] = (
            metrics[f"update_ms.tnp.n{n}"] / metrics[f"update_ms.inctnp.n{n}"]
        )
    for name in MODELS:
        metrics[f"scaling_exponent.{name}"] = scaling_exponent(cfg.latency_sizes, millis[name])
    return Latency(metrics, millis)


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
                tb, trained = examples[task]
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
    """Update latency and memory against N on the paper's model size.

    Memory per N: ``cache_mb`` (bytes the incTNP cache has allocated after an update: its
    capacity, which doubles), ``cache_used_mb`` (the N tokens it holds), ``cache_peak_mb``
    (its buffers at their largest, the old and the doubled one together) and
    ``update_peak_mb.<model>`` (the allocator's peak during one update, see
    :func:`~icml26.inctnp.evaluation.update_memory`), with log-log slopes
    ``cache_scaling_exponent`` (allocated) and ``update_peak_scaling_exponent.<model>``."""
    _start_bench(cfg, run_dir)
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
    peaks: dict[str, list[int]] = {m: [] for m in MODELS}
    cache_bytes = []
    for n in cfg.sizes:
        for name in MODELS:
            ms, allocated = update_latency_ms(
                models[name], n, cfg.repeats, device=cfg.device, seed=cfg.seed
            )
            metrics[f"update_ms.{name}.n{n}"] = ms
            lat[name].append(ms)
            mem = update_memory(models[name], n, device=cfg.device, seed=cfg.seed)
            metrics[f"update_peak_mb.{name}.n{n}"] = mem.peak / 2**20
            peaks[name].append(mem.peak)
            if name == "inctnp":
                metrics[f"cache_mb.n{n}"] = allocated / 2**20
                metrics[f"cache_used_mb.n{n}"] = mem.cache_used / 2**20
                metrics[f"cache_peak_mb.n{n}"] = mem.cache_peak / 2**20
                cache_bytes.append(allocated)
        metrics[f"speedup.n{n}"] = (
            metrics[f"update_ms.tnp.n{n}"] / metrics[f"update_ms.inctnp.n{n}"]
        )
        log(
            f"N={n}: tnp {metrics[f'update_ms.tnp.n{n}']:.2f} ms, inctnp "
            f"{metrics[f'update_ms.inctnp.n{n}']:.2f} ms; update peak tnp "
            f"{metrics[f'update_peak_mb.tnp.n{n}']:.2f} MiB, inctnp "
            f"{metrics[f'update_peak_mb.inctnp.n{n}']:.2f} MiB"
        )
    for name in MODELS:
        metrics[f"scaling_exponent.{name}"] = scaling_exponent(cfg.sizes, lat[name])
        metrics[f"update_peak_scaling_exponent.{name}"] = scaling_exponent(cfg.sizes, peaks[name])
    metrics["cache_scaling_exponent"] = scaling_exponent(cfg.sizes, cache_bytes)
    if cfg.device.startswith("cuda"):
        metrics["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
    with figure(run_dir.plot_path("bench_latency"), 1, 2) as (_fig, (ax1, ax2)):
        for name, color in (("tnp", PALETTE[1]), ("inctnp", PALETTE[0])):
            ax1.loglog(cfg.sizes, lat[name], "o-", color=color, label=name)
            ax2.loglog(
                cfg.sizes,
                np.asarray(peaks[name]) / 2**20,
                "o-",
                color=color,
                label=f"{name}: update peak",
            )
        ax1.set_xlabel("context size N")
        ax1.set_ylabel("ms per update + prediction")
        ax1.legend()
        ax2.loglog(
            cfg.sizes,
            np.asarray(cache_bytes) / 2**20,
            "s--",
            color=PALETTE[0],
            label="incTNP cache (allocated)",
        )
        ax2.set_xlabel("context size N")
        ax2.set_ylabel("MiB")
        ax2.legend(fontsize=7)
    return metrics


def _start_bench(cfg: BenchConfig, run_dir: Any) -> None:
    torch.set_num_threads(cfg.threads)
    seed_everything(cfg.seed, torch=True)
    run_dir.update_env(device=cfg.device, torch_threads=cfg.threads)
