"""``icml26 bench scfm-grn``: what the probes cost, and the memory of 20,000 genes.

1. CPU seconds per gene pair for VVP, GT (jvp and jacrev) and GENIE3 as the gene count grows
   (an untrained scFM: cost does not depend on the weights), fitted exponents, peak memory;
2. ``memory_genes`` (20,000) genes x 300 cells of sparse counts: the most variable
   ``memory_top_genes`` genes (TFs kept) and ``memory_tfs`` TFs as regulators; the peak
   resident memory (above the process's before) of the selection and of VVP on the TF -> gene
   candidates (Linux: ``/proc/self/clear_refs`` resets the peak), beside what dense
   all-pairs features of 20,000 genes would take (``G^2 M`` float32).
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from icml26.scfm_grn.baselines import genie3_scores
from icml26.scfm_grn.candidates import candidate_pairs, feature_bytes, highly_variable
from icml26.scfm_grn.config import BenchConfig
from icml26.scfm_grn.data import ExpressionData
from icml26.scfm_grn.features import gradient_trajectory, virtual_value_perturbation
from icml26.scfm_grn.model import ScFM, ScFMConfig
from icml26.scfm_grn.networks import scale_free_universe, subnetwork
from icml26.scfm_grn.simulation import SimulationSpec, simulate
from icml26.shared import PALETTE, RunDir, Stages, figure, log
from icml26.shared.stats import loglog_slope

__all__ = ["bench"]


def _peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def _costs(cfg: BenchConfig) -> dict[str, float]:
    """Best-of CPU seconds per pair for each job and gene count."""
    universe = scale_free_universe(max(500, 2 * max(cfg.gene_counts)), seed=cfg.seed)
    model = ScFM(universe.genes, ScFMConfig(cfg.width, cfg.layers, cfg.heads)).to(cfg.device).eval()
    out: dict[str, float] = {}
    for g in cfg.gene_counts:
        net = subnetwork(universe, g, seed=cfg.seed + g)
        spec = SimulationSpec(n_cell_types=2, cells_per_type=cfg.n_cells // 2, seed=cfg.seed)
        data = ExpressionData.build(f"bench{g}", net.genes, simulate(net, spec), net, "continuous")
        jobs = {
            "vvp": lambda d=data: virtual_value_perturbation(model, d.genes),
            "gt_jvp": lambda d=data: gradient_trajectory(model, d.genes, mode="jvp"),
            "genie3": lambda d=data: genie3_scores(
                d.values, n_trees=cfg.genie3_trees, seed=cfg.seed
            ),
        }
        if g <= cfg.jacrev_max_genes:
            jobs["gt_jacrev"] = lambda d=data: gradient_trajectory(model, d.genes, mode="jacrev")
        for name, job in jobs.items():
            if g == cfg.gene_counts[0]:
                job()  # warm-up: first-call costs are not per pair
            best = float("inf")
            for _ in range(cfg.repeats):
                t0 = time.process_time()
                job()
                best = min(best, time.process_time() - t0)
            out[f"seconds.{name}.g{g}"] = best
            out[f"us_per_pair.{name}.g{g}"] = best / (g * (g - 1)) * 1e6
            out[f"peak_rss_mib.after_{name}.g{g}"] = _peak_rss_mib()
            log(f"G={g:4d} {name:10s} {best:8.3f} s")
    return out


def _status_kib(field: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return float(line.split()[1])
    except OSError:
        return None
    return None


def _extra_peak_mib(fn: Any) -> tuple[Any, float | None]:
    """``fn()`` and the process's peak resident memory above its resident memory before, in
    MiB (Linux: the peak is reset through ``/proc/self/clear_refs``; None elsewhere)."""
    before = _status_kib("VmRSS")
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        before = None
    out = fn()
    peak = _status_kib("VmHWM")
    if before is None or peak is None:
        return out, None
    return out, max(0.0, peak - before) / 1024


def _memory(cfg: BenchConfig) -> dict[str, float]:
    """Selection and TF -> gene VVP on ``memory_genes`` genes: peak memory and sizes."""
    rng = np.random.default_rng(cfg.seed)
    genes = tuple(f"G{i:05d}" for i in range(cfg.memory_genes))
    counts = sp.random(
        cfg.n_cells,
        cfg.memory_genes,
        density=0.05,
        random_state=rng,
        data_rvs=lambda n: rng.poisson(3.0, n) + 1.0,
        format="csr",
    )
    tfs = genes[: cfg.memory_tfs]
    idx, selection_peak = _extra_peak_mib(
        lambda: highly_variable(counts, cfg.memory_top_genes, keep=range(cfg.memory_tfs))
    )
    chosen = tuple(genes[k] for k in idx)
    sources, pairs = candidate_pairs(chosen, tfs)
    model = ScFM(chosen, ScFMConfig(cfg.width, cfg.layers, cfg.heads)).eval()
    t0 = time.process_time()
    vvp, vvp_peak = _extra_peak_mib(
        lambda: virtual_value_perturbation(model, chosen, sources=sources, chunk=16)
    )
    seconds = time.process_time() - t0
    m = vvp.shape[-1]
    out = {
        "memory.genes": float(cfg.memory_genes),
        "memory.selected_genes": float(len(chosen)),
        "memory.tfs": float(len(sources)),
        "memory.candidate_pairs": float(len(pairs)),
        "memory.vvp_cpu_seconds": seconds,
        "memory.features_mib": feature_bytes(len(sources), len(chosen), m) / 2**20,
        "memory.dense_features_gib": feature_bytes(cfg.memory_genes, cfg.memory_genes, m) / 2**30,
        "memory.peak_rss_mib": _peak_rss_mib(),
    }
    for key, value in (("selection", selection_peak), ("vvp", vvp_peak)):
        if value is not None:
            out[f"memory.{key}_extra_peak_mib"] = value
    return out


def bench(cfg: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """The cost and memory benchmark (see the module docstring).

    Args:
        cfg: the bench config.
        run_dir: the run folder.

    Returns:
        ``seconds.*``, ``us_per_pair.*``, ``exponent.per_pair.*``, ``gt_jacrev_over_jvp``,
        ``memory.*``.
    """
    stages = Stages(run_dir)
    # memory first: later jobs leave pages resident that would hide its peak
    memory = stages.once("memory", lambda: _memory(cfg))
    metrics: dict[str, Any] = dict(stages.once("costs", lambda: _costs(cfg)))
    per_pair: dict[str, list[tuple[int, float]]] = {}
    for g in cfg.gene_counts:
        for name in ("vvp", "gt_jvp", "gt_jacrev", "genie3"):
            if f"us_per_pair.{name}.g{g}" in metrics:
                per_pair.setdefault(name, []).append((g, metrics[f"us_per_pair.{name}.g{g}"]))
    for name, pts in per_pair.items():
        if len(pts) >= 2:
            slope = loglog_slope([p[0] for p in pts], [p[1] for p in pts]).slope
            metrics[f"exponent.per_pair.{name}"] = slope
            metrics[f"exponent.total.{name}"] = slope + 2.0
    common = [g for g, _ in per_pair.get("gt_jacrev", [])]
    if common:
        g = max(common)
        metrics["gt_jacrev_over_jvp"] = (
            metrics[f"seconds.gt_jacrev.g{g}"] / metrics[f"seconds.gt_jvp.g{g}"]
        )
    metrics.update(memory)
    with figure(run_dir.plot_path("bench_cost"), width=4.8, height=3.6) as (_fig, ax):
        for k, (name, pts) in enumerate(per_pair.items()):
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", color=PALETTE[k], label=name)
        ax.set(xlabel="genes G", ylabel="µs per gene pair", title="feature cost per pair")
        ax.legend(fontsize=8)
    return metrics
