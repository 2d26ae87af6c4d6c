"""The ``icml26 run eco`` and ``icml26 bench eco`` jobs.

``run``: train every scheme on every workload with the same seed, data and steps; record
final/validation loss, the relative loss gap to the master-weight baseline of the same format
and rounding, measured static bytes per parameter and peak memory; then sweep the learning
rate on one workload to show naive removal's error growing like ``1/lr`` while ECO's does not.
Every finished (workload, scheme) is checkpointed, so a killed run resumes where it stopped.

``bench``: time ``optimizer.step()`` (+ re-materializing the working weights) per scheme,
interleaving schemes round-robin so that machine load affects all alike, relative to the
master-weight AdamW step; and the static-memory ratio ECO-FP8 / master-FP8.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from icml26.eco.config import BenchConfig, ECOConfig
from icml26.eco.data import load_mnist, load_text
from icml26.eco.memory import static_memory
from icml26.eco.models import LMConfig, TinyLM
from icml26.eco.optim import QuantizedOptimizer
from icml26.eco.schemes import make_optimizer, parse_scheme
from icml26.eco.train import LMWorkload, MLPWorkload, TrainResult, TrainSpec, train
from icml26.shared import PALETTE, figure, log, seed_everything
from icml26.shared.rundir import RunDir

__all__ = [
    "AblationResult",
    "SweepResult",
    "ablation_stage",
    "bench",
    "lower_memory_gaps",
    "lr_sweep",
    "pareto_front",
    "pareto_metrics",
    "run",
    "scheme_metrics",
    "train_schemes",
]


def _setup(seed: int, threads: int, device: str) -> None:
    if threads:
        torch.set_num_threads(threads)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    seed_everything(seed, torch=True)


def _lm_config(cfg: ECOConfig, moe: bool) -> LMConfig:
    return LMConfig(
        seq_len=cfg.seq_len,
        d_model=cfg.d_model,
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        d_ff=cfg.moe_d_ff if moe else cfg.d_ff,
        n_experts=cfg.n_experts if moe else 0,
        top_k=cfg.top_k,
    )


def _workloads(cfg: ECOConfig, names: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if names & {"dense_lm", "moe_lm"}:
        text = load_text(cfg.text_file or None, cfg.corpus_bytes)
        log(
            f"eco: text corpus {text.source}: {text.train.numel()} train / {text.val.numel()} val bytes"
        )
        for name in ("dense_lm", "moe_lm"):
            if name in names:
                out[name] = LMWorkload(
                    name,
                    text,
                    _lm_config(cfg, moe=name == "moe_lm"),
                    cfg.lm_batch_size,
                    val_batches=cfg.val_batches,
                    seed=cfg.seed,
                    device=cfg.device,
                )
    if names & {"mlp", "logreg"}:
        mnist = load_mnist(seed=cfg.seed)
        if "mlp" in names:
            out["mlp"] = MLPWorkload(
                mnist, (cfg.mlp_hidden,), cfg.mlp_batch_size, device=cfg.device
            )
        if "logreg" in names:
            out["logreg"] = MLPWorkload(
                mnist, (), cfg.mlp_batch_size, name="logreg", device=cfg.device
            )
    return out


def _spec(
    cfg: ECOConfig, workload: str, lr: float | None = None, steps: int | None = None
) -> TrainSpec:
    lm = workload in ("dense_lm", "moe_lm")
    return TrainSpec(
        steps=steps or (cfg.lm_steps if lm else cfg.mlp_steps),
        lr=lr or (cfg.lm_lr if lm else cfg.mlp_lr),
        betas=(cfg.beta1, cfg.beta2),
        weight_decay=cfg.weight_decay,
        fp8_group_size=cfg.fp8_group_size,
        int4_group_size=cfg.int4_group_size,
    )


def pareto_front(points: dict[str, tuple[float, float]]) -> list[str]:
    """Names whose ``(memory, loss)`` no other point dominates (≤ in both, < in one)."""
    front = []
    for name, (mem, loss) in points.items():
        dominated = any(
            m2 <= mem and l2 <= loss and (m2 < mem or l2 < loss)
            for other, (m2, l2) in points.items()
            if other != name
        )
        if not dominated:
            front.append(name)
    return sorted(front, key=lambda n: points[n][0])


def _relative_gap(val: float, ref: float) -> float:
    return (val - ref) / ref


Records = dict[str, dict[str, dict[str, Any]]]  # workload -> scheme -> TrainResult as a dict


@dataclass
class _Trainings:
    """Runs one (workload, scheme, spec) training at a time, checkpointing every finished one
    so that a killed run resumes where it stopped."""

    cfg: ECOConfig
    run_dir: RunDir
    done: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __call__(
        self, key: str, workload: Any, scheme: str, spec: TrainSpec, seed: int | None = None
    ) -> dict[str, Any]:
        if key in self.done:
            return self.done[key]
        t0 = time.perf_counter()
        res: TrainResult = train(workload, scheme, spec, self.cfg.seed if seed is None else seed)
        record = asdict(res)
        record["seconds"] = time.perf_counter() - t0
        self.done[key] = record
        self.run_dir.checkpoints.save(len(self.done), self.done)
        self.run_dir.log_metrics(
            len(self.done),
            job=key,
            final_loss=res.final_loss,
            val_loss=res.val_loss,
            static_bytes_per_param=res.static_bytes_per_param,
            seconds=record["seconds"],
        )
        log(
            f"eco: {key}: val {res.val_loss:.4f} final {res.final_loss:.4f} "
            f"{res.static_bytes_per_param:.2f} B/param ({record['seconds']:.1f}s)"
        )
        return record


@dataclass(frozen=True)
class SweepResult:
    """The learning-rate sweep: its metrics (``lr_sweep.*``), validation losses
    (``val_loss.lr_sweep.*``) and the curves plotted (scheme -> lr -> validation loss)."""

    metrics: dict[str, Any]
    val_loss: dict[str, dict[str, float]]
    curves: dict[str, dict[float, float]]


def run(cfg: ECOConfig, run_dir: RunDir) -> dict[str, Any]:
    """The main job (see the module docstring). Returns the metrics of the issue's contract."""
    trainings = _start(cfg, run_dir)
    needed = set(cfg.workloads) | ({cfg.sweep_workload} if cfg.sweep_lrs else set())
    needed |= set(cfg.ablation_workloads) if cfg.ablations else set()
    workloads = _workloads(cfg, needed)
    records = train_schemes(cfg, workloads, trainings)
    metrics = scheme_metrics(records, run_dir)
    metrics["pareto"] = pareto_metrics(records, run_dir)
    sweep = lr_sweep(cfg, workloads[cfg.sweep_workload], trainings) if cfg.sweep_lrs else None
    if sweep is not None:
        metrics["val_loss"]["lr_sweep"] = sweep.val_loss
        metrics["lr_sweep"] = sweep.metrics
    if cfg.ablations:
        ablation = ablation_stage(cfg, workloads, trainings)
        for wname, per in ablation.final_loss.items():
            metrics["final_loss"].setdefault(wname, {}).update(per)
        metrics["ablation"] = ablation.summary
        _ablation_plot(run_dir, ablation.summary)
    _plots(cfg, run_dir, records, sweep.curves if sweep is not None else {})
    run_dir.update_env(cpu_seconds=time.process_time())
    return metrics


def _start(cfg: ECOConfig, run_dir: RunDir) -> _Trainings:
    """Threads, seeds, environment record; the finished trainings of an interrupted run."""
    _setup(cfg.seed, cfg.threads, cfg.device)
    run_dir.update_env(torch=torch.__version__, threads=torch.get_num_threads())
    trainings = _Trainings(cfg, run_dir)
    latest = run_dir.checkpoints.latest()
    if latest is not None:
        trainings.done = latest[1]
        log(f"eco: resuming with {len(trainings.done)} finished trainings")
    return trainings


def train_schemes(cfg: ECOConfig, workloads: dict[str, Any], trainings: _Trainings) -> Records:
    """Stage 1: every scheme on every workload (same seed, data, steps)."""
    return {
        wname: {
            scheme: trainings(f"{wname}/{scheme}", workloads[wname], scheme, _spec(cfg, wname))
            for scheme in cfg.schemes
        }
        for wname in cfg.workloads
    }


def scheme_metrics(records: Records, run_dir: RunDir) -> dict[str, Any]:
    """Stage 2: losses, gaps to the master-weight scheme of the same format and rounding,
    memory (static bytes per parameter measured on the largest model; ``memory.json``)."""
    metrics: dict[str, Any] = {
        "final_loss": {},
        "val_loss": {},
        "loss_gap_vs_master": {},
        "static_bytes_per_param": {},
        "held_memory_mb": {},
        "n_params": {},
    }
    for wname, per in records.items():
        metrics["n_params"][wname] = next(iter(per.values()))["n_params"]
        for scheme, rec in per.items():
            metrics["final_loss"].setdefault(wname, {})[scheme] = rec["final_loss"]
            metrics["val_loss"].setdefault(wname, {})[scheme] = rec["val_loss"]
            if rec.get("held_memory_mb") is not None:
                metrics["held_memory_mb"].setdefault(wname, {})[scheme] = rec["held_memory_mb"]
            if rec.get("peak_memory_mb") is not None and "held_memory_mb" in rec:  # CUDA only
                metrics.setdefault("peak_memory_mb", {}).setdefault(wname, {})[scheme] = rec[
                    "peak_memory_mb"
                ]
            if "val_accuracy" in rec["extra"]:
                metrics.setdefault("val_accuracy", {}).setdefault(wname, {})[scheme] = rec["extra"][
                    "val_accuracy"
                ]
            ref_name = parse_scheme(scheme).master_name or "master_fp8_rtn"
            if ref_name in per:
                metrics["loss_gap_vs_master"].setdefault(wname, {})[scheme] = _relative_gap(
                    rec["val_loss"], per[ref_name]["val_loss"]
                )
    mem_workload = max(records, key=lambda w: metrics["n_params"][w])
    for scheme, rec in records[mem_workload].items():
        metrics["static_bytes_per_param"][scheme] = rec["static_bytes_per_param"]
    run_dir.write_json(
        "memory.json",
        {
            "static_bytes_per_param_measured_on": mem_workload,
            "breakdown": {
                w: {s: r["memory"] for s, r in per.items()} for w, per in records.items()
            },
        },
    )
    return metrics


def lower_memory_gaps(per: dict[str, dict[str, Any]]) -> dict[str, float]:
    """ECO's relative validation-loss gap to the master-weight scheme of the same format and
    rounding, for every ECO scheme whose measured static memory is below that scheme's.

    This is the comparison the Pareto claim rests on: ECO buys lower static memory, and the
    question is what it costs in loss against the baseline it replaces (``{}`` when no ECO
    point sits below its master-weight counterpart, or the counterpart was not run)."""
    out: dict[str, float] = {}
    for scheme, rec in per.items():
        ref = parse_scheme(scheme).master_name
        if not scheme.startswith("eco_") or ref not in per:
            continue
        if rec["static_bytes_per_param"] < per[ref]["static_bytes_per_param"]:
            out[scheme] = _relative_gap(rec["val_loss"], per[ref]["val_loss"])
    return out


def pareto_metrics(records: Records, run_dir: RunDir) -> dict[str, Any]:
    """Stage 3: static memory vs validation loss per workload (``pareto_<w>.json``): the
    front, ECO points no baseline dominates, and ECO's loss gap to master weights at lower
    static memory (``eco_gap_at_lower_memory.<scheme>``, counted in
    ``eco_points_at_lower_memory``)."""
    out: dict[str, Any] = {}
    for wname, per in records.items():
        points = {s: (r["static_bytes_per_param"], r["val_loss"]) for s, r in per.items()}
        front = pareto_front(points)
        eco = [s for s in per if s.startswith("eco_")]
        baselines = {s: p for s, p in points.items() if not s.startswith("eco_")}
        undominated = [
            s
            for s in eco
            if not any(m <= points[s][0] and loss < points[s][1] for m, loss in baselines.values())
        ]
        gaps = lower_memory_gaps(per)
        out[wname] = {
            "undominated_eco": len(undominated),
            "eco_on_front": sum(s in front for s in eco),
            "eco_points_at_lower_memory": len(gaps),
            "eco_gap_at_lower_memory": gaps,
        }
        run_dir.write_json(f"pareto_{wname}.json", {"front": front, "points": points})
    return out


def lr_sweep(cfg: ECOConfig, workload: Any, trainings: _Trainings) -> SweepResult:
    """Stage 4: naive removal's error against the learning rate (∝ 1/η in the theorem), with
    ECO beside it; with ``sweep_equal_budget`` every rate gets the same lr·steps budget."""
    lrs = sorted(cfg.sweep_lrs, reverse=True)
    metrics: dict[str, Any] = {
        "lr": {},
        "gap": {},
        "gap_at_min_lr": {},
        "gap_at_max_lr": {},
        "loglog_slope": {},
    }
    val_sweep: dict[str, dict[str, float]] = {}
    curves: dict[str, dict[float, float]] = {}
    for k, lr in enumerate(lrs):
        metrics["lr"][f"lr{k}"] = lr
        steps = cfg.sweep_steps
        if cfg.sweep_equal_budget:
            steps = round(cfg.sweep_steps * lrs[0] / lr)
        metrics.setdefault("steps", {})[f"lr{k}"] = steps
        for scheme in cfg.sweep_schemes:
            rec = trainings(
                f"sweep/{cfg.sweep_workload}/{scheme}/lr{lr:g}",
                workload,
                scheme,
                _spec(cfg, cfg.sweep_workload, lr=lr, steps=steps),
            )
            val_sweep.setdefault(scheme, {})[f"lr{k}"] = rec["val_loss"]
            curves.setdefault(scheme, {})[lr] = rec["val_loss"]
    for scheme in cfg.sweep_schemes:
        ref = parse_scheme(scheme).master_name
        if ref is None or ref not in val_sweep or ref == scheme:
            continue
        gaps = {k: val_sweep[scheme][k] - val_sweep[ref][k] for k in val_sweep[scheme]}
        metrics["gap"][scheme] = gaps
        metrics["gap_at_min_lr"][scheme] = gaps[f"lr{len(lrs) - 1}"]
        metrics["gap_at_max_lr"][scheme] = gaps["lr0"]
        if len(lrs) > 1 and all(g > 0 for g in gaps.values()):
            xs = [math.log(lr) for lr in lrs]
            ys = [math.log(gaps[f"lr{k}"]) for k in range(len(lrs))]
            metrics["loglog_slope"][scheme] = _slope(xs, ys)
        else:
            metrics["loglog_slope"][scheme] = float("nan")
    return SweepResult(metrics, val_sweep, curves)


@dataclass(frozen=True)
class AblationResult:
    """The ablation stage: ``final_loss`` (workload -> ``"<scheme>.<ablation>"`` -> ECO's final
    loss, mean over the paired seeds) and ``summary`` (workload -> scheme -> ablation ->
    figures; see :func:`ablation_stage`)."""

    final_loss: dict[str, dict[str, float]]
    summary: dict[str, dict[str, dict[str, dict[str, float]]]]


def _mean_se(xs: list[float]) -> tuple[float, float]:
    """Mean and its standard error (``nan`` from a single value)."""
    mean = statistics.fmean(xs)
    se = statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("nan")
    return mean, se


def ablation_stage(
    cfg: ECOConfig, workloads: dict[str, Any], trainings: _Trainings
) -> AblationResult:
    """Stage 5: each ablation of each ECO scheme, over paired seeds.

    For every seed the master-weight scheme, naive removal and ECO train in the default
    (paper's) setting, and ECO under every ablation, next to master weights under the same
    change when the change affects them (:mod:`icml26.eco.ablations`); the same seed means the
    same initial weights and batches for all. Per ablation the summary holds ``eco`` and
    ``master`` (mean final loss), ``gap`` (mean relative gap of ECO to that master, paired by
    seed) with ``gap_se``, ``delta`` (ECO ablated minus ECO default, paired) with
    ``delta_se``, and ``closes`` (the share of the default's gap the ablation closes); the
    ``default`` entry adds ``naive`` and ``recovered`` (the share of naive removal's gap ECO
    recovers). The default at ``cfg.seed`` reuses the main stage's run when it has one."""
    final: dict[str, dict[str, float]] = {}
    summary: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for wname in cfg.ablation_workloads:
        for scheme in cfg.ablation_schemes:
            entry = _ablate_scheme(cfg, wname, workloads[wname], scheme, trainings)
            summary.setdefault(wname, {})[scheme] = entry
            for abl, row in entry.items():
                if abl != "default":
                    final.setdefault(wname, {})[f"{scheme}.{abl}"] = row["eco"]
    return AblationResult(final, summary)


def _ablate_scheme(
    cfg: ECOConfig, wname: str, workload: Any, scheme: str, trainings: _Trainings
) -> dict[str, dict[str, float]]:
    """The ablation summary of one ECO scheme on one workload (see :func:`ablation_stage`)."""
    from icml26.eco.ablations import ablated_spec

    base = _spec(cfg, wname)
    s = parse_scheme(scheme)
    master, naive = f"master_{s.fmt}_{s.rounding}", f"naive_{s.fmt}_{s.rounding}"

    def run(name: str, abl: str, spec: TrainSpec, seed: int) -> float:
        main = abl == "default" and seed == cfg.seed
        main = main and wname in cfg.workloads and name in cfg.schemes
        key = f"{wname}/{name}" if main else f"ablation/{wname}/{name}/{abl}/seed{seed}"
        return float(trainings(key, workload, name, spec, seed)["final_loss"])

    seeds = cfg.ablation_seeds
    eco0 = [run(scheme, "default", base, sd) for sd in seeds]
    master0 = [run(master, "default", base, sd) for sd in seeds]
    naive0 = [run(naive, "default", base, sd) for sd in seeds]
    gap0 = [(e - m) / m for e, m in zip(eco0, master0, strict=True)]
    rec = [(n - e) / (n - m) for n, e, m in zip(naive0, eco0, master0, strict=True)]
    default = {
        "eco": statistics.fmean(eco0),
        "master": statistics.fmean(master0),
        "naive": statistics.fmean(naive0),
    }
    default["gap"], default["gap_se"] = _mean_se(gap0)
    default["recovered"], default["recovered_se"] = _mean_se(rec)
    entry = {"default": default}
    for abl in cfg.ablations:
        specs = ablated_spec(abl, base, s.fmt or "fp8")
        if specs is None:  # this ablation is the format's default
            continue
        eco = [run(scheme, abl, specs.eco, sd) for sd in seeds]
        mas = (
            [run(master, abl, specs.master, sd) for sd in seeds]
            if specs.affects_master
            else master0
        )
        gaps = [(e - m) / m for e, m in zip(eco, mas, strict=True)]
        deltas = [e - e0 for e, e0 in zip(eco, eco0, strict=True)]
        row = {"eco": statistics.fmean(eco), "master": statistics.fmean(mas)}
        row["gap"], row["gap_se"] = _mean_se(gaps)
        row["delta"], row["delta_se"] = _mean_se(deltas)
        row["closes"] = (
            (default["gap"] - row["gap"]) / default["gap"] if default["gap"] else math.nan
        )
        entry[abl] = row
    return entry


def _slope(xs: list[float], ys: list[float]) -> float:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    den = sum((x - mx) ** 2 for x in xs)
    return num / den


def _style(scheme: str) -> dict[str, Any]:
    s = parse_scheme(scheme)
    colour = {"fp32": PALETTE[7], "master": PALETTE[0], "naive": PALETTE[1], "eco": PALETTE[2]}[
        s.kind
    ]
    return {
        "color": colour,
        "linestyle": "-" if s.rounding in (None, "rtn") else "--",
        "marker": {None: "*", "fp8": "o", "int4": "s"}[s.fmt],
    }


def _smooth(xs: list[float], k: int) -> list[float]:
    out, acc = [], 0.0
    for i, x in enumerate(xs):
        acc = x if i == 0 else 0.9 * acc + 0.1 * x
        out.append(acc)
    return out[::k] if k > 1 else out


def _as_list(axes: Any) -> list[Any]:
    return list(axes.flat) if hasattr(axes, "flat") else [axes]


def _plots(
    cfg: ECOConfig,
    run_dir: RunDir,
    records: dict[str, dict[str, dict[str, Any]]],
    sweep: dict[str, dict[float, float]],
) -> None:
    n = len(records)
    with figure(run_dir.plot_path("loss_curves"), 1, n, width=4.2 * n + 1.5, height=3.4) as (
        _fig,
        axes,
    ):
        axes = _as_list(axes)
        for ax, (wname, per) in zip(axes, records.items(), strict=True):
            for scheme, rec in per.items():
                st = _style(scheme)
                ax.plot(
                    _smooth(rec["losses"], 1),
                    color=st["color"],
                    linestyle=st["linestyle"],
                    linewidth=1.0,
                    label=scheme,
                    alpha=0.9 if "fp8" in scheme or scheme == "fp32" else 0.6,
                )
            ax.set_title(f"{wname}: training loss (EMA 0.9)")
            ax.set_xlabel("step")
            ax.set_ylabel("loss")
        axes[-1].legend(loc="upper right", ncol=2, fontsize=6)
    with figure(run_dir.plot_path("pareto"), 1, n, width=4.2 * n + 0.5, height=3.4) as (_fig, axes):
        axes = _as_list(axes)
        for ax, (wname, per) in zip(axes, records.items(), strict=True):
            points = {s: (r["static_bytes_per_param"], r["val_loss"]) for s, r in per.items()}
            front = pareto_front(points)
            for scheme, (mem, loss) in points.items():
                st = _style(scheme)
                ax.scatter(
                    mem,
                    loss,
                    color=st["color"],
                    marker=st["marker"],
                    facecolors="none" if st["linestyle"] == "--" else st["color"],
                    s=36,
                    label=scheme,
                )
            fx = [points[s][0] for s in front]
            fy = [points[s][1] for s in front]
            ax.step(fx, fy, where="post", color="grey", linewidth=0.8, alpha=0.7)
            ax.set_title(f"{wname}: static memory vs validation loss")
            ax.set_xlabel("static bytes / parameter (measured)")
            ax.set_ylabel("validation loss")
        axes[0].legend(fontsize=6, ncol=2)
    if sweep:
        with figure(run_dir.plot_path("lr_sweep"), 1, 2, width=8.5, height=3.4) as (
            _fig,
            (ax1, ax2),
        ):
            for scheme, vals in sweep.items():
                lrs = sorted(vals)
                st = _style(scheme)
                ax1.plot(
                    lrs,
                    [vals[lr] for lr in lrs],
                    color=st["color"],
                    linestyle=st["linestyle"],
                    marker=st["marker"],
                    label=scheme,
                )
                ref = parse_scheme(scheme).master_name
                if ref in sweep and ref != scheme:
                    gaps = [max(vals[lr] - sweep[ref][lr], 1e-5) for lr in lrs]
                    ax2.plot(
                        lrs,
                        gaps,
                        color=st["color"],
                        linestyle=st["linestyle"],
                        marker=st["marker"],
                        label=f"{scheme} − {ref}",
                    )
            for ax in (ax1, ax2):
                ax.set_xscale("log")
                ax.set_xlabel("peak learning rate")
            ax2.set_yscale("log")
            ax1.set_ylabel(f"{cfg.sweep_workload} validation loss")
            ax2.set_ylabel("gap to master weights")
            ax1.legend(fontsize=6)
            ax2.legend(fontsize=6)


def _ablation_plot(
    run_dir: RunDir, summary: dict[str, dict[str, dict[str, dict[str, float]]]]
) -> None:
    """ECO's gap to master weights per ablation (± 1 SE over the paired seeds), one panel per
    (workload, scheme); a symmetric-log axis keeps the diverged ablations on the page."""
    panels = [(w, s, per) for w, by in summary.items() for s, per in by.items()]
    n = len(panels)
    with figure(run_dir.plot_path("ablations"), 1, n, width=4.0 * n + 0.5, height=3.6) as (
        _fig,
        axes,
    ):
        for ax, (wname, scheme, per) in zip(_as_list(axes), panels, strict=True):
            names = list(per)
            gaps = [100 * per[a]["gap"] for a in names]
            errs = [0.0 if math.isnan(se := per[a]["gap_se"]) else 100 * se for a in names]
            colours = [PALETTE[0] if a == "default" else PALETTE[2] for a in names]
            ax.barh(range(len(names)), gaps, xerr=errs, color=colours)
            ax.axvline(0.0, color="grey", linewidth=0.8)
            ax.axvline(2.0, color="grey", linewidth=0.8, linestyle="--")  # the 2% rule
            ax.set_xscale("symlog", linthresh=10.0)
            ax.set_yticks(range(len(names)), names, fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel("ECO final-loss gap to master weights (%)")
            ax.set_title(f"{wname}: {scheme}", fontsize=9)


_ADAMW = "adamw"  # torch.optim.AdamW on the same model: the step-time reference


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Optimizer step time per scheme relative to ``torch.optim.AdamW`` on the same model
    (``step_time_ratio.<scheme>``; every scheme and AdamW take turns step by step, so load on
    the machine hits them alike); static memory ratio."""
    _setup(cfg.seed, cfg.threads, cfg.device)
    run_dir.update_env(torch=torch.__version__, threads=torch.get_num_threads())
    lm_cfg = LMConfig(
        seq_len=cfg.seq_len,
        d_model=cfg.d_model,
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        d_ff=cfg.d_ff,
        n_experts=cfg.n_experts if cfg.model == "moe_lm" else 0,
        top_k=cfg.top_k,
    )
    gen = torch.Generator().manual_seed(cfg.seed)
    x = torch.randint(0, lm_cfg.vocab_size, (cfg.batch_size, cfg.seq_len + 1), generator=gen).to(
        cfg.device
    )
    setups: dict[str, tuple[torch.nn.Module, torch.optim.Optimizer]] = {}
    n_params = 0
    for scheme in cfg.schemes:
        torch.manual_seed(cfg.seed)
        model: torch.nn.Module = TinyLM(lm_cfg).to(cfg.device)
        n_params = sum(p.numel() for p in model.parameters())  # before a release empties them
        opt = make_optimizer(
            scheme,
            model,
            lr=1e-3,
            fp8_group_size=cfg.fp8_group_size,
            int4_group_size=cfg.int4_group_size,
            seed=cfg.seed,
        )
        setups[scheme] = (model, opt)
    torch.manual_seed(cfg.seed)
    adamw_model = TinyLM(lm_cfg).to(cfg.device)
    adamw_opt = torch.optim.AdamW(adamw_model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    setups[_ADAMW] = (adamw_model, adamw_opt)
    order = [*cfg.schemes, _ADAMW]
    times: dict[str, list[float]] = {s: [] for s in order}

    def one_step(scheme: str, timed: bool) -> None:
        model, opt = setups[scheme]
        _, loss = model(x[:, :-1], x[:, 1:])
        assert loss is not None
        loss.backward()
        if cfg.device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.step()
        if isinstance(opt, QuantizedOptimizer):
            opt.materialize()
        if cfg.device.startswith("cuda"):
            torch.cuda.synchronize()
        if timed:
            times[scheme].append(time.perf_counter() - t0)
        opt.zero_grad(set_to_none=True)

    for _ in range(cfg.warmup_steps):
        for scheme in order:
            one_step(scheme, timed=False)
    for _ in range(cfg.rounds * cfg.timed_steps):
        for scheme in order:  # interleaved: each step of each scheme next to one of AdamW
            one_step(scheme, timed=True)
    median = {s: statistics.median(t) for s, t in times.items()}
    memory = {}
    for scheme in cfg.schemes:
        model, opt = setups[scheme]
        if isinstance(opt, QuantizedOptimizer):
            opt.release()
        memory[scheme] = static_memory(list(model.parameters()), opt).bytes_per_param
    adamw = median[_ADAMW]
    metrics: dict[str, Any] = {
        "step_time_ratio": {s: median[s] / adamw for s in cfg.schemes},
        "step_time_ms": {s: 1e3 * median[s] for s in order},
        "static_bytes_per_param": memory,
        "n_params": n_params,
    }
    ratios = {}
    for fmt in ("fp8", "int4"):
        eco, master = f"eco_{fmt}_rtn", f"master_{fmt}_rtn"
        if eco in memory and master in memory:
            ratios[f"eco_{fmt}_vs_master_{fmt}"] = memory[eco] / memory[master]
    metrics["memory_ratio"] = ratios
    run_dir.update_env(cpu_seconds=time.process_time())
    with figure(run_dir.plot_path("step_time"), width=7.5, height=3.2) as (_fig, ax):
        names = list(cfg.schemes)
        ax.bar(
            range(len(names)),
            [metrics["step_time_ratio"][s] for s in names],
            color=[_style(s)["color"] for s in names],
        )
        ax.axhline(1.0, color="grey", linewidth=0.8)  # torch.optim.AdamW
        ref = metrics["step_time_ratio"][cfg.reference]
        ax.axhline(ref, color="grey", linewidth=0.8, linestyle="--", label=cfg.reference)
        ax.legend(fontsize=7)
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("step time / torch.optim.AdamW")
    return metrics
