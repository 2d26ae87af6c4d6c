"""Tables from a run: markdown for the README's results block and ``RESULTS.md``, and the
JSON artefacts of a run folder (``memory.json``, ``pareto_<workload>.json``).

``python -m icml26.eco.tables RUN_DIR`` prints a run's README block;
``--readme packages/eco/README.md`` rewrites the block between ``<!-- results:begin -->`` and
``<!-- results:end -->`` (a bench folder: between the ``bench`` markers), ``--results
packages/eco/RESULTS.md`` writes every table there (no figure typed by hand).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from icml26.eco.config import ALL_SCHEMES, RunConfig
from icml26.eco.jobs import Job
from icml26.eco.study import Records, memory_workload
from icml26.shared.results import load_results
from icml26.shared.rundir import RunDir

__all__ = [
    "bench_table",
    "markdown_tables",
    "readme_block",
    "replace_readme_block",
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


def single_seed_table(m: dict[str, Any]) -> str:
    """Every scheme at the first seed: validation loss and gap per workload, peak memory."""
    ws = _workloads(m)
    schemes = _schemes(m, "val_loss.")
    head = "| scheme |" + "".join(f" {w} val loss (gap) | {w} peak MB |" for w in ws)
    lines = [head, "|---|" + "---|---|" * len(ws)]
    for s in schemes:
        row = f"| `{s}` |"
        for w in ws:
            gap = m.get(f"loss_gap_vs_master.{w}.{s}")
            gap_text = "" if gap is None else f" ({100 * gap:+.1f}%)"
            row += f" {_num(m.get(f'val_loss.{w}.{s}'))}{gap_text} |"
            row += f" {_num(m.get(f'peak_memory_mb.{w}.{s}'), '.2f')} |"
        lines.append(row)
    return "\n".join(lines)


def sweep_table(m: dict[str, Any]) -> str:
    """Gap to master weights at each rate of the sweep (± SE), and the log-log slope."""
    lrs = sorted(
        (k for k in m if k.startswith("lr_sweep.lr.")), key=lambda k: int(k.rsplit("lr", 1)[1])
    )
    schemes = _schemes(m, "lr_sweep.loglog_slope.")
    if not lrs or not schemes:
        return ""
    head = "| scheme |" + "".join(f" gap at lr={m[k]:g} |" for k in lrs) + " log-log slope |"
    lines = [head, "|---|" + "---|" * (len(lrs) + 1)]
    for s in schemes:
        row = f"| `{s}` |"
        for k in lrs:
            tag = k.rsplit(".", 1)[1]
            g, se = m.get(f"lr_sweep.gap.{s}.{tag}"), m.get(f"lr_sweep.gap_se.{s}.{tag}")
            row += f" {_num(g)}" + ("" if se is None else f" ± {_num(se)}") + " |"
        lines.append(row + f" {_num(m.get(f'lr_sweep.loglog_slope.{s}'), '.2f')} |")
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


def claims_table(results: dict[str, Any]) -> str:
    """The claims: rule, whether it holds, and whether it holds under its placebo."""
    lines = ["| claim | rule | holds | under placebo |", "|---|---|---|---|"]
    for c in results.get("claims", []):
        placebo = c.get("placebo_holds", "-" if c.get("kind") == "absolute" else None)
        lines.append(f"| `{c['id']}` | `{c['rule']}` | **{c['holds']}** | {placebo} |")
    return "\n".join(lines)


def markdown_tables(results: dict[str, Any]) -> str:
    """Every table of a run's ``results.json`` (what ``RESULTS.md`` keeps).

    Args:
        results: a loaded ``results.json``.

    Returns:
        Markdown.
    """
    m = results["metrics"]
    parts = [paired_table(m), single_seed_table(m), sweep_table(m), ablation_table(m)]
    parts.append(claims_table(results))
    return "\n\n".join(p for p in parts if p)


def readme_block(results: dict[str, Any], env: dict[str, Any] | None = None) -> str:
    """The README's results block: a header naming the run, the paired table, the ablations
    and the claims (the sweep and the first seed's table are in ``RESULTS.md``).

    Args:
        results: a loaded ``results.json``.
        env: the run's ``env.json`` (commit, torch version, threads), if at hand.

    Returns:
        Markdown.
    """
    m = results["metrics"]
    env = env or {}
    git = env.get("git") or {}
    header = (
        f"`icml26 run eco --profile {results.get('profile')}` ({str(env.get('time', ''))[:10]}, "
        "commit "
        f"{str(git.get('commit', '?'))[:7]}{'+dirty' if git.get('dirty') else ''}, torch {env.get('torch', '?')}, "
        f"{env.get('threads', '?')} thread(s), {_num(results.get('seconds'), '.0f')} s wall, "
        f"{_num(results.get('cpu_seconds'), '.0f')} CPU-s). Gaps: validation loss relative to "
        "master weights of the same format, mean ± SE over paired seeds; in brackets the "
        "share of naive removal's gap recovered (± SE)."
    )
    parts = [header, paired_table(m), ablation_table(m), claims_table(results)]
    return "\n\n".join(p for p in parts if p)


README_BENCH_ROWS = ("master_fp8_rtn", "eco_fp8_rtn", "eco_fp8_rtn_reference", "eco_fp8_rtn_fused")


def bench_table(
    results: dict[str, Any],
    env: dict[str, Any] | None = None,
    rows: Sequence[str] | None = None,
) -> str:
    """The bench: per scheme, the step's CPU time against AdamW's (median over rounds, with
    the smallest and largest round), the full training step's ratio, and static memory.

    Args:
        results: a bench's ``results.json``.
        env: its ``env.json``.
        rows: the schemes to show (all by default).

    Returns:
        Markdown.
    """
    m = results["metrics"]
    env = env or {}
    git = env.get("git") or {}
    names = sorted({k.split(".", 1)[1] for k in m if k.startswith("step_time_ratio.")})
    names.sort(key=lambda n: ALL_SCHEMES.index(n) if n in ALL_SCHEMES else len(ALL_SCHEMES))
    if rows is not None:
        names = [n for n in rows if n in names]
    lines = [
        f"`icml26 bench eco --profile {results.get('profile')}` ({str(env.get('time', ''))[:10]}, "
        f"commit {str(git.get('commit', '?'))[:7]}, {_num(m.get('n_params'), '.0f')} parameters, "
        f"{env.get('threads', '?')} thread(s); step CPU time of the calling thread, medians)",
        "",
        "| scheme | step ms | step / AdamW (min-max over rounds) | train step / AdamW | B/param |",
        "|---|---|---|---|---|",
        f"| `adamw` | {_num(m.get('step_time_ms.adamw'), '.2f')} | 1 | 1 | - |",
    ]
    for n in names:
        ratio = f"{_num(m.get(f'step_time_ratio.{n}'), '.2f')} "
        ratio += f"({_num(m.get(f'step_time_ratio_min.{n}'), '.2f')}-"
        ratio += f"{_num(m.get(f'step_time_ratio_max.{n}'), '.2f')})"
        lines.append(
            f"| `{n}` | {_num(m.get(f'step_time_ms.{n}'), '.2f')} | {ratio} | "
            f"{_num(m.get(f'train_step_ratio.{n}'), '.2f')} | "
            f"{_num(m.get(f'static_bytes_per_param.{n}'), '.2f')} |"
        )
    return "\n".join([*lines, "", claims_table(results)])


def replace_readme_block(readme: str, block: str, name: str = "results") -> str:
    """``readme`` with the text between ``<!-- name:begin -->`` and ``<!-- name:end -->``
    replaced by ``block``.

    Args:
        readme: the README's text.
        block: the new block.
        name: the markers' name.

    Returns:
        The new text.

    Raises:
        ValueError: the markers are missing.
    """
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in readme or end not in readme:
        raise ValueError(f"the file has no {begin} ... {end} block")
    head, rest = readme.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}\n{end}{tail}"


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


def main(argv: Sequence[str] | None = None) -> int:
    """Print a run's tables, or write them between a file's markers.

    ``--readme FILE``: the README block of a run (``results`` markers) or of a bench
    (``bench`` markers); ``--results FILE``: every table of a run (``results`` markers).
    """
    parser = argparse.ArgumentParser(prog="python -m icml26.eco.tables")
    parser.add_argument("run", type=Path, help="a run or bench folder, or its results.json")
    parser.add_argument("--readme", type=Path, help="rewrite this file's block (README)")
    parser.add_argument("--results", type=Path, help="rewrite this file's block (all tables)")
    args = parser.parse_args(argv)
    path = args.run / "results.json" if args.run.is_dir() else args.run
    results = load_results(path)
    env_path = path.parent / "env.json"
    env = json.loads(env_path.read_text(encoding="utf-8")) if env_path.is_file() else None
    bench = results.get("kind") == "bench"
    if bench:
        rows = None if args.results is not None else README_BENCH_ROWS
        block, name = bench_table(results, env, rows), "bench"
    elif args.results is not None:
        header = readme_block(results, env).split("\n\n", 1)[0]
        block, name = f"{header}\n\n{markdown_tables(results)}", "results"
    else:
        block, name = readme_block(results, env), "results"
    target = args.results or args.readme
    if target is None:
        print(block)
        return 0
    text = target.read_text(encoding="utf-8")
    target.write_text(replace_readme_block(text, block, name), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
