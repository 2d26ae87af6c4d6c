"""Tables from a run: the paper's own Markdown tables for ``icml26 readme`` (the README's
results block and ``RESULTS.md``: :func:`readme_tables`), and the JSON artefacts of a run
folder (``memory.json``, ``pareto_<workload>.json``: :func:`write_tables`).

``icml26 readme eco RUN_DIR`` (from the workspace root) rewrites the README block and adds the
run's section to ``RESULTS.md``; no figure is typed by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from icml26.eco.config import ALL_SCHEMES, RunConfig
from icml26.eco.jobs import Job
from icml26.eco.study import Records, memory_workload
from icml26.shared.rundir import RunDir

__all__ = [
    "ablation_table",
    "bench_table",
    "first_seed_line",
    "paired_table",
    "readme_tables",
    "write_tables",
]

_WORKLOADS = ("dense_lm", "moe_lm", "mlp")


def _num(value: Any, spec: str = ".4f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def _pct(m: dict[str, Any], key: str, se_key: str | None = None) -> str:
    value = m.get(key)
    if value is None:
        return "-"
    se = m.get(se_key) if se_key else None
    return f"{100 * value:+.1f}%" + ("" if se is None else f" ± {100 * se:.1f}")


def _workloads(m: dict[str, Any]) -> list[str]:
    return [w for w in _WORKLOADS if any(k.startswith(f"val_loss.{w}.") for k in m)]


def _schemes(m: dict[str, Any], prefix: str) -> list[str]:
    return [s for s in ALL_SCHEMES if any(k.startswith(prefix) and k.endswith(f".{s}") for k in m)]


def paired_table(m: dict[str, Any]) -> str:
    """Schemes x workloads: the paired validation-loss gap to master weights (± SE) and, for
    ECO and naive removal, the share of naive removal's gap recovered; memory on the MoE."""
    ws = _workloads(m)
    schemes = _schemes(m, "val_loss_mean.")
    head = "| scheme | B/param | MoE static / peak MB |" + "".join(
        f" {w} gap (recovered) |" for w in ws
    )
    lines = [head, "|---|---|---|" + "---|" * len(ws)]
    for s in schemes:
        static, peak = m.get(f"static_memory_mb.moe_lm.{s}"), m.get(f"peak_memory_mb.moe_lm.{s}")
        row = f"| `{s}` | {_num(m.get(f'static_bytes_per_param.{s}'), '.2f')} | "
        row += f"{_num(static, '.2f')} / {_num(peak, '.2f')} |"
        for w in ws:
            cell = _pct(m, f"gap.{w}.{s}", f"gap_se.{w}.{s}")
            if f"recovered.{w}.{s}" in m:
                cell += f" ({_pct(m, f'recovered.{w}.{s}', f'recovered_se.{w}.{s}')})"
            row += f" {cell} |"
        lines.append(row)
    return "\n".join(lines)


def ablation_table(m: dict[str, Any]) -> str:
    """Ablations x (workload, ECO scheme): ECO's paired gap to master weights (± SE) and the
    change of ECO's validation loss against its default (± SE)."""
    keys = [k.split(".") for k in m if k.startswith("ablation.") and k.endswith(".gap")]
    pairs = sorted({(k[1], k[2]) for k in keys})
    names = sorted({k[3] for k in keys}, key=lambda a: (a != "default", a))
    if not pairs:
        return ""
    head = "| ablation |" + "".join(f" {s} on {w}: gap (Δ val loss) |" for w, s in pairs)
    lines = [head, "|---|" + "---|" * len(pairs)]
    for a in names:
        row = f"| `{a}` |"
        for w, s in pairs:
            p = f"ablation.{w}.{s}.{a}."
            cell = _pct(m, p + "gap", p + "gap_se")
            if p + "delta" in m:
                cell += f" ({_num(m[p + 'delta'], '+.4f')} ± {_num(m.get(p + 'delta_se'))})"
            row += f" {cell} |"
        lines.append(row)
    return "\n".join(lines)


def first_seed_line(m: dict[str, Any]) -> str:
    """One sentence: the schemes trained at the first seed only (fp32, stochastic rounding),
    their validation-loss gap to master weights of the same format, per workload."""
    paired = set(_schemes(m, "val_loss_mean."))
    parts = []
    for w in _workloads(m):
        gaps = [
            f"`{s}` {_pct(m, f'loss_gap_vs_master.{w}.{s}')}"
            for s in _schemes(m, f"loss_gap_vs_master.{w}.")
            if s not in paired and not s.startswith("master_")
        ]
        if gaps:
            parts.append(f"{w}: " + ", ".join(gaps))
    if not parts:
        return ""
    return "First seed only, gap to master weights of the same format: " + "; ".join(parts) + "."


def readme_tables(results: dict[str, Any]) -> str:
    """The paper's tables for ``icml26 readme`` (README block and ``RESULTS.md``): for a run,
    the paired table, the first-seed-only schemes and the ablations; for a bench, the step
    times.

    Args:
        results: a loaded ``results.json``.

    Returns:
        Markdown.
    """
    if results.get("kind") == "bench":
        return bench_table(results)
    m = results["metrics"]
    parts = [paired_table(m), first_seed_line(m), ablation_table(m)]
    return "\n\n".join(p for p in parts if p)


def bench_table(results: dict[str, Any], rows: Sequence[str] | None = None) -> str:
    """The bench: per scheme, the step's CPU time against AdamW's (median over rounds, with
    the smallest and largest round), the full training step's ratio, and static memory.

    Args:
        results: a bench's ``results.json``.
        rows: the schemes to show (all by default).

    Returns:
        Markdown.
    """
    m = results["metrics"]
    names = sorted({k.split(".", 1)[1] for k in m if k.startswith("step_time_ratio.")})
    first = ("adamw_foreach", "adamw_fused")
    order = [*first, *ALL_SCHEMES]
    names.sort(key=lambda n: order.index(n) if n in order else len(order))
    if rows is not None:
        names = [n for n in rows if n in names]
    lines = [
        f"Optimizer step on a {_num(m.get('n_params'), ',.0f')}-parameter MoE LM against "
        "`torch.optim.AdamW` (weight decay 0, as ECO here) on the same model: torch's default "
        "implementation (a per-tensor loop on the CPU), `foreach` and `fused`; interleaved "
        "step by step; CPU time of the calling thread (time preempted by other jobs does not "
        "count), medians; a ratio is the median over rounds (smallest-largest round in "
        "brackets for the default).",
        "",
        "| scheme | step ms | / AdamW default (min-max) | / foreach | / fused "
        "| train step / AdamW | B/param |",
        "|---|---|---|---|---|---|---|",
        f"| `adamw` | {_num(m.get('step_time_ms.adamw'), '.2f')} | 1 | - | - | 1 | - |",
    ]
    for n in names:
        ratio = f"{_num(m.get(f'step_time_ratio.{n}'), '.2f')} "
        ratio += f"({_num(m.get(f'step_time_ratio_min.{n}'), '.2f')}-"
        ratio += f"{_num(m.get(f'step_time_ratio_max.{n}'), '.2f')})"
        vs = [
            "-" if n in first else _num(m.get(f"step_time_ratio_vs_{b}.{n}"), ".2f") for b in first
        ]
        lines.append(
            f"| `{n}` | {_num(m.get(f'step_time_ms.{n}'), '.2f')} | {ratio} | {vs[0]} | {vs[1]} | "
            f"{_num(m.get(f'train_step_ratio.{n}'), '.2f')} | "
            f"{_num(m.get(f'static_bytes_per_param.{n}'), '.2f')} |"
        )
    if m.get("fused_first_step_wall_s") is not None:
        lines += [
            "",
            "`eco_fp8_rtn_fused` (`fused=True`, `icml26.eco.fused`) compiled in its first "
            "warm-up step, "
            f"{_num(m.get('fused_first_step_wall_s'), '.1f')} s wall (or loaded inductor's "
            "disk cache); its ratios are timed after the warm-up.",
        ]
    return "\n".join(lines)


def write_tables(
    cfg: RunConfig,
    jobs: Sequence[Job],
    records: Sequence[dict[str, Any]],
    metrics: dict[str, Any],
    run_dir: RunDir,
) -> None:
    """Write ``memory.json`` (static memory by role and peak memory, per workload and scheme
    at the first seed) and ``pareto_<workload>.json`` (static memory vs mean validation loss).

    Args:
        cfg: the run's config.
        jobs: the planned jobs.
        records: their records.
        metrics: :func:`~icml26.eco.study.summarise`'s metrics.
        run_dir: the run folder.
    """
    rec = Records(jobs, records)
    seed = cfg.seeds[0]
    breakdown: dict[str, dict[str, Any]] = {}
    for job in jobs:
        if job.seed == seed and job.ablation == "default" and job.lr_index is None:
            r = rec.get(job.workload, job.scheme, seed)
            if r is not None:
                breakdown.setdefault(job.workload, {})[job.scheme] = {
                    "static": r["memory"],
                    "peak": r["peak"],
                }
    on = memory_workload(cfg, metrics.get("n_params", {})) if metrics.get("n_params") else None
    run_dir.write_json("memory.json", {"static_bytes_per_param_measured_on": on, **breakdown})
    for w, loss in metrics.get("val_loss_mean", {}).items():
        static = metrics.get("static_memory_mb", {}).get(w, {})
        points = {s: [static.get(s), v] for s, v in loss.items()}
        run_dir.write_json(f"pareto_{w}.json", {"static_mb_vs_val_loss": points})
