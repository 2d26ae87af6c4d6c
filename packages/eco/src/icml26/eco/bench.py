"""The ``icml26 bench eco`` job: optimizer-step time per scheme against ``torch.optim.AdamW``
on the same model, in the same process, and static memory.

Every scheme and AdamW take turns step by step (interleaved), so load on a shared machine
hits them alike; each step is timed in CPU time of the calling thread (``thread_time``: time
the process spent preempted by other jobs does not count) and in wall time. Per round the
median step time of each scheme is taken; the ratio to AdamW is the median over rounds of the
per-round ratios, with the smallest and largest round beside it. ``eco_fp8_rtn_reference`` is
ECO-FP8-RTN with the per-parameter reference step (``foreach=False``): what the batched step
saves; AdamW runs three ways, all with weight decay 0 as the ECO schemes: torch's default
(``adamw``: a per-tensor loop on the CPU; the claims' reference), ``adamw_foreach`` and
``adamw_fused`` (one fused kernel; several times faster on the CPU), with the ratios to each;
``eco_fp8_rtn_fused`` the same scheme through the compiled bucket step of
:mod:`icml26.eco.fused`, compiled during the first warm-up step, whose wall time is reported
apart (``fused_first_step_wall_s``: compiling, or loading inductor's disk cache); the ratios
are measured after the warm-up. The full training step (forward, backward, step) is timed too: ECO pays the
dequantization of its weights in the forward pass, not in the step.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import torch

from icml26.eco.config import BenchConfig
from icml26.eco.figures import scheme_style
from icml26.eco.memory import static_memory
from icml26.eco.models import LMConfig, TinyLM
from icml26.eco.optim import QuantizedOptimizer
from icml26.eco.schemes import make_optimizer
from icml26.shared import figure, seed_for
from icml26.shared.rundir import RunDir

__all__ = ["ADAMW", "ADAMW_VARIANTS", "BASELINES", "FUSED", "REFERENCE", "bench"]

ADAMW = "adamw"  # torch.optim.AdamW (torch's default implementation): the claims' reference
#: the other torch.optim.AdamW implementations, each the reference of its own ratios
#: (``step_time_ratio_vs_<name>``): the multi-tensor ``foreach`` step and the ``fused`` kernel
ADAMW_VARIANTS = {"adamw_foreach": {"foreach": True}, "adamw_fused": {"fused": True}}
BASELINES = (ADAMW, *ADAMW_VARIANTS)
REFERENCE = "eco_fp8_rtn_reference"  # ECO-FP8-RTN through the per-parameter reference step
FUSED = "eco_fp8_rtn_fused"  # ECO-FP8-RTN through the compiled kernels (fused=True)


def _setups(cfg: BenchConfig) -> dict[str, tuple[torch.nn.Module, torch.optim.Optimizer]]:
    lm = LMConfig(
        seq_len=cfg.seq_len,
        d_model=cfg.d_model,
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        d_ff=cfg.d_ff,
        n_experts=cfg.n_experts if cfg.model == "moe_lm" else 0,
        top_k=cfg.top_k,
    )
    out: dict[str, tuple[torch.nn.Module, torch.optim.Optimizer]] = {}
    variants = [REFERENCE, *([FUSED] if cfg.fused else [])] if "eco_fp8_rtn" in cfg.schemes else []
    names = [*cfg.schemes, *variants, *BASELINES]
    for name in names:
        torch.manual_seed(seed_for(cfg.seed, "model"))
        model = TinyLM(lm).to(cfg.device)
        if name in BASELINES:  # weight decay 0, as the ECO schemes here
            opt: torch.optim.Optimizer = torch.optim.AdamW(
                model.parameters(),
                lr=1e-3,
                betas=(0.9, 0.95),
                weight_decay=0.0,
                **ADAMW_VARIANTS.get(name, {}),
            )
        else:
            scheme = _scheme_of(name)
            opt = make_optimizer(
                scheme,
                model,
                lr=1e-3,
                fp8_group_size=cfg.fp8_group_size,
                int4_group_size=cfg.int4_group_size,
                seed=cfg.seed,
            )
            if name in (REFERENCE, FUSED):
                assert isinstance(opt, QuantizedOptimizer)
                opt.foreach = name == FUSED
                opt.fused = name == FUSED
        out[name] = (model, opt)
    return out


def _scheme_of(name: str) -> str:
    """The scheme a timed setup runs (the two ECO-FP8-RTN variants are that scheme)."""
    return "eco_fp8_rtn" if name in (REFERENCE, FUSED) else name


def _ratios(times: dict[str, list[list[float]]], name: str, base: str = ADAMW) -> list[float]:
    return [
        statistics.median(a) / statistics.median(b)
        for a, b in zip(times[name], times[base], strict=True)
    ]


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Time every scheme's step against AdamW's on one model (see the module docstring).

    Args:
        cfg: the bench config.
        run_dir: the run folder.

    Returns:
        ``step_time_ms`` / ``step_wall_ms`` / ``train_step_ms`` per scheme (medians),
        ``step_time_ratio`` (to torch's default AdamW, median over rounds) with
        ``step_time_ratio_min`` / ``_max``, ``step_time_ratio_vs_adamw_foreach`` and
        ``step_time_ratio_vs_adamw_fused`` (to the other two AdamW implementations),
        ``train_step_ratio``, ``static_bytes_per_param``, ``memory_ratio``, ``n_params``, and
        ``fused_first_step_wall_s`` (the compiling first step, when the fused step is timed).
    """
    run_dir.update_env(torch=torch.__version__, threads=torch.get_num_threads())
    setups = _setups(cfg)
    gen = torch.Generator().manual_seed(seed_for(cfg.seed, "batches"))
    x = torch.randint(0, 256, (cfg.batch_size, cfg.seq_len + 1), generator=gen).to(cfg.device)
    cuda = cfg.device.startswith("cuda")
    step_cpu: dict[str, list[list[float]]] = {n: [] for n in setups}
    step_wall: dict[str, list[float]] = {n: [] for n in setups}
    train_cpu: dict[str, list[list[float]]] = {n: [] for n in setups}

    def one_step(name: str) -> tuple[float, float, float]:
        model, opt = setups[name]
        t0 = time.thread_time()
        _, loss = model(x[:, :-1], x[:, 1:])
        assert loss is not None
        loss.backward()
        if cuda:
            torch.cuda.synchronize()
        t1, w1 = time.thread_time(), time.perf_counter()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        t2, w2 = time.thread_time(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        return t2 - t1, w2 - w1, t2 - t0

    first_step_s: dict[str, float] = {}
    for _ in range(cfg.warmup_steps):
        for name in setups:
            start = time.perf_counter()
            one_step(name)
            first_step_s.setdefault(name, time.perf_counter() - start)
    for _ in range(cfg.rounds):
        for name in setups:
            step_cpu[name].append([])
            train_cpu[name].append([])
        for _ in range(cfg.timed_steps):
            for name in setups:  # interleaved: each step of each scheme next to one of AdamW
                cpu, wall, full = one_step(name)
                step_cpu[name][-1].append(cpu)
                step_wall[name].append(wall)
                train_cpu[name][-1].append(full)
    flat = {n: [t for r in rounds for t in r] for n, rounds in step_cpu.items()}
    metrics: dict[str, Any] = {
        "step_time_ms": {n: 1e3 * statistics.median(t) for n, t in flat.items()},
        "step_wall_ms": {n: 1e3 * statistics.median(t) for n, t in step_wall.items()},
        "train_step_ms": {
            n: 1e3 * statistics.median([t for r in rounds for t in r])
            for n, rounds in train_cpu.items()
        },
    }
    if FUSED in first_step_s:  # compiling happens in the first step, not in the timed ones
        metrics["fused_first_step_wall_s"] = first_step_s[FUSED]
    names = [n for n in setups if n != ADAMW]
    for key, times in (("step_time_ratio", step_cpu), ("train_step_ratio", train_cpu)):
        ratios = {n: _ratios(times, n) for n in names}
        metrics[key] = {n: statistics.median(r) for n, r in ratios.items()}
        if key == "step_time_ratio":
            metrics[f"{key}_min"] = {n: min(r) for n, r in ratios.items()}
            metrics[f"{key}_max"] = {n: max(r) for n, r in ratios.items()}
    for base in ADAMW_VARIANTS:
        metrics[f"step_time_ratio_vs_{base}"] = {
            n: statistics.median(_ratios(step_cpu, n, base)) for n in names if n not in BASELINES
        }
    memory = {
        n: static_memory(list(setups[n][0].parameters()), setups[n][1]).bytes_per_param
        for n in cfg.schemes
    }
    metrics["static_bytes_per_param"] = memory
    metrics["memory_ratio"] = {
        f"eco_{f}_vs_master_{f}": memory[f"eco_{f}_rtn"] / memory[f"master_{f}_rtn"]
        for f in ("fp8", "int4")
        if f"eco_{f}_rtn" in memory and f"master_{f}_rtn" in memory
    }
    metrics["n_params"] = sum(p.numel() for p in setups[ADAMW][0].parameters())
    run_dir.update_env(cpu_seconds=time.process_time())
    _plot(cfg, metrics, run_dir, names)
    return metrics


def _plot(cfg: BenchConfig, metrics: dict[str, Any], run_dir: RunDir, names: list[str]) -> None:
    with figure(run_dir.plot_path("step_time"), width=7.5, height=3.2) as (_fig, ax):
        ratio = metrics["step_time_ratio"]
        lo, hi = metrics["step_time_ratio_min"], metrics["step_time_ratio_max"]
        colours = [
            scheme_style("fp32" if n in BASELINES else _scheme_of(n))["color"] for n in names
        ]
        ax.bar(
            range(len(names)),
            [ratio[n] for n in names],
            yerr=[[ratio[n] - lo[n] for n in names], [hi[n] - ratio[n] for n in names]],
            color=colours,
        )
        ax.axhline(1.0, color="grey", lw=0.8)  # torch.optim.AdamW
        ax.axhline(1.5, color="grey", lw=0.8, ls="--", label="1.5x AdamW")
        if cfg.reference in ratio:
            ax.axhline(ratio[cfg.reference], color="grey", lw=0.8, ls=":", label=cfg.reference)
        ax.legend(fontsize=7)
        ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("step CPU time / torch.optim.AdamW")
