"""The run's figures from its trainings' records: losses, paired gaps with standard errors,
recovery, memory, the Pareto comparison, the learning-rate sweep and the ablations.

Pure Python over the records :func:`~icml26.eco.jobs.run_job` returns (no torch), so every
figure can be checked by hand. Conventions:

* a *gap* is the relative validation-loss difference to the master-weight scheme of the same
  format and rounding (``fp32`` is compared with ``master_fp8_rtn``), paired by seed (same
  initialisation, batches and rounding stream), averaged over seeds with its standard error;
  ``gap_ub`` is ``gap + 2 SE`` (what a claim of *at most* a gap is decided on);
* *vs_naive* is naive removal's gap minus the scheme's, paired by seed (``vs_naive_lb`` =
  mean - 2 SE): how much loss error feedback saves against removing master weights naively
  (naive removal itself scores exactly 0);
* *recovered* is the share of naive removal's gap a scheme removes, as a ratio of the mean
  paired gaps, ``1 - mean(g) / mean(g_naive)``, with a delta-method SE (``SE`` of the mean of
  ``g_i - R g_naive_i`` over ``|mean(g_naive)|``, ``R`` the ratio) and ``recovered_lb =
  recovered - 2 SE``; every seed counts (no per-seed ratios, none dropped); naive removal
  scores 0. It is reported only where naive removal's paired gap is above noise
  (``mean - 2 SE > 0``): where naive removal loses nothing there is nothing to recover.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from icml26.eco.config import RunConfig
from icml26.eco.jobs import DEFAULT, Job
from icml26.eco.schemes import parse_scheme
from icml26.shared import stats as shared_stats

__all__ = [
    "Records",
    "ablation_metrics",
    "loglog_slope",
    "main_metrics",
    "master_of",
    "mean_se",
    "memory_workload",
    "paired_metrics",
    "pareto_metrics",
    "recovered_share",
    "summarise",
    "sweep_metrics",
]

Record = dict[str, Any]
MB = 2.0**20


def mean_se(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error (:func:`icml26.shared.stats.mean_se`; ``nan`` for no value,
    ``nan`` SE for one).

    Args:
        xs: the values.

    Returns:
        ``(mean, se)``.
    """
    if not xs:
        return math.nan, math.nan
    stat = shared_stats.mean_se(xs)
    return stat.mean, stat.se


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Slope of ``log y`` against ``log x`` (:func:`icml26.shared.stats.loglog_slope`), ``nan``
    when a ``y`` is not positive (a gap that closed has no logarithm).

    Args:
        xs: positive abscissae.
        ys: ordinates.

    Returns:
        The slope.
    """
    if len(xs) < 2 or any(not y > 0 for y in ys):
        return math.nan
    return shared_stats.loglog_slope(xs, ys).slope


def master_of(scheme: str) -> str:
    """The master-weight scheme a scheme's gap is taken to (``fp32``: ``master_fp8_rtn``).

    Args:
        scheme: a scheme name.

    Returns:
        The reference scheme's name.
    """
    return parse_scheme(scheme).master_name or "master_fp8_rtn"


class Records:
    """The records of a run's jobs, looked up by what they trained.

    Args:
        jobs: the planned jobs.
        records: their records, in the same order.
    """

    def __init__(self, jobs: Iterable[Job], records: Iterable[Record]) -> None:
        self._by: dict[tuple[Any, ...], Record] = {}
        for job, rec in zip(jobs, records, strict=True):
            self._by[(job.workload, job.scheme, job.ablation, job.seed, job.lr_index)] = rec

    def get(
        self,
        workload: str,
        scheme: str,
        seed: int,
        ablation: str = DEFAULT,
        lr_index: int | None = None,
    ) -> Record | None:
        """The record of one training, or ``None`` when the run did not train it.

        Args:
            workload: the workload.
            scheme: the scheme.
            seed: the training seed.
            ablation: ``"default"`` or an ablation.
            lr_index: the sweep rate's index.

        Returns:
            The record.
        """
        return self._by.get((workload, scheme, ablation, seed, lr_index))


def _rel(a: float, b: float) -> float:
    return (a - b) / b


def main_metrics(cfg: RunConfig, rec: Records) -> dict[str, Any]:
    """Losses, gaps and memory of every scheme at the first seed (the main table).

    Args:
        cfg: the run's config.
        rec: the records.

    Returns:
        Nested metrics: ``final_loss``, ``val_loss``, ``val_accuracy``,
        ``loss_gap_vs_master``, ``static_memory_mb``, ``peak_memory_mb``,
        ``transient_memory_mb`` (per workload and scheme), ``static_bytes_per_param`` (per
        scheme, on the MoE when it ran, else the largest model) and ``n_params``.
    """
    seed = cfg.seeds[0]
    out: dict[str, Any] = {k: {} for k in ("final_loss", "val_loss", "loss_gap_vs_master")}
    out.update({k: {} for k in ("static_memory_mb", "peak_memory_mb", "transient_memory_mb")})
    out["n_params"], out["static_bytes_per_param"] = {}, {}
    schemes = [*cfg.schemes, *(s for s in cfg.extra_schemes if s not in cfg.schemes)]
    for w in cfg.workloads:
        per = {s: r for s in schemes if (r := rec.get(w, s, seed)) is not None}
        for s, r in per.items():
            out["n_params"][w] = r["n_params"]
            out["final_loss"].setdefault(w, {})[s] = r["final_loss"]
            out["val_loss"].setdefault(w, {})[s] = r["val_loss"]
            if "val_accuracy" in r["extra"]:
                out.setdefault("val_accuracy", {}).setdefault(w, {})[s] = r["extra"]["val_accuracy"]
            if master_of(s) in per:
                out["loss_gap_vs_master"].setdefault(w, {})[s] = _rel(
                    r["val_loss"], per[master_of(s)]["val_loss"]
                )
            out["static_memory_mb"].setdefault(w, {})[s] = r["memory"]["total"] / MB
            if r["peak"] is not None:
                out["peak_memory_mb"].setdefault(w, {})[s] = r["peak"]["peak"] / MB
                out["transient_memory_mb"].setdefault(w, {})[s] = r["peak"]["transient"] / MB
    ran = [w for w in cfg.workloads if w in out["n_params"]]
    if ran:
        on = memory_workload(cfg, out["n_params"])
        for s in schemes:
            r = rec.get(on, s, seed)
            if r is not None:
                out["static_bytes_per_param"][s] = r["memory"]["bytes_per_param"]
    return {k: v for k, v in out.items() if v != {}}


def memory_workload(cfg: RunConfig, n_params: dict[str, int]) -> str:
    """The workload ``static_bytes_per_param`` is measured on: the MoE if it ran, else the
    largest model.

    Args:
        cfg: the run's config.
        n_params: parameters per workload that ran.

    Returns:
        The workload's name.
    """
    ran = [w for w in cfg.workloads if w in n_params]
    return "moe_lm" if "moe_lm" in ran else max(ran, key=lambda w: n_params[w])


def _paired_gaps(rec: Records, w: str, s: str, ref: str, seeds: Sequence[int]) -> list[float]:
    gaps = []
    for seed in seeds:
        a, b = rec.get(w, s, seed), rec.get(w, ref, seed)
        if a is not None and b is not None:
            gaps.append(_rel(a["val_loss"], b["val_loss"]))
    return gaps


def recovered_share(gaps: Sequence[float], naive_gaps: Sequence[float]) -> tuple[float, float]:
    """The share of naive removal's gap a scheme removes, ``1 - mean(g) / mean(g_naive)``,
    and its delta-method standard error.

    Args:
        gaps: the scheme's paired gaps to master weights, one per seed.
        naive_gaps: naive removal's on the same seeds (their mean must not be 0).

    Returns:
        ``(share, se)``; ``se`` is ``nan`` for one seed.

    Raises:
        ValueError: different lengths, or naive removal's mean gap is 0.
    """
    if len(gaps) != len(naive_gaps) or not gaps:
        raise ValueError("paired gaps: the same non-empty seeds for both schemes")
    mean_naive = statistics.fmean(naive_gaps)
    if mean_naive == 0:
        raise ValueError("naive removal's mean gap is 0: there is no share to recover")
    ratio = statistics.fmean(gaps) / mean_naive
    resid = [g - ratio * gn for g, gn in zip(gaps, naive_gaps, strict=True)]
    return 1.0 - ratio, mean_se(resid)[1] / abs(mean_naive)


def _recovery(
    out: dict[str, Any], rec: Records, w: str, s: str, naive: str, ref: str, seeds: Sequence[int]
) -> None:
    """``vs_naive*`` and ``recovered*`` of scheme ``s`` (``recovered`` only where naive
    removal's paired gap is above noise, ``mean - 2 SE > 0``)."""
    naive_gaps = _paired_gaps(rec, w, naive, ref, seeds)
    gaps = _paired_gaps(rec, w, s, ref, seeds)
    if not gaps or len(gaps) != len(naive_gaps):
        return
    diff, diff_se = mean_se([gn - g for g, gn in zip(gaps, naive_gaps, strict=True)])
    out["vs_naive"].setdefault(w, {})[s] = diff
    out["vs_naive_se"].setdefault(w, {})[s] = diff_se
    out["vs_naive_lb"].setdefault(w, {})[s] = diff - 2 * diff_se
    mean, se = mean_se(naive_gaps)
    if not (mean - 2 * se > 0):  # also False for a nan SE (one seed)
        return
    share, share_se = recovered_share(gaps, naive_gaps)
    out["recovered"].setdefault(w, {})[s] = share
    out["recovered_se"].setdefault(w, {})[s] = share_se
    out["recovered_lb"].setdefault(w, {})[s] = share - 2 * share_se


def paired_metrics(cfg: RunConfig, rec: Records) -> dict[str, Any]:
    """Per workload and scheme, over the paired seeds: validation loss, gap to master weights
    and recovery of naive removal's gap (see the module docstring).

    Args:
        cfg: the run's config.
        rec: the records.

    Returns:
        Nested metrics ``val_loss_mean``, ``val_loss_se``, ``gap``, ``gap_se``, ``gap_ub``,
        ``vs_naive``, ``vs_naive_se``, ``vs_naive_lb``, ``recovered``, ``recovered_se``,
        ``recovered_lb`` (workload -> scheme -> value).
    """
    keys = ("val_loss_mean", "val_loss_se", "gap", "gap_se", "gap_ub")
    keys += ("vs_naive", "vs_naive_se", "vs_naive_lb", "recovered", "recovered_se")
    out: dict[str, Any] = {k: {} for k in (*keys, "recovered_lb")}
    for w in cfg.workloads:
        for s in cfg.schemes:
            vals = [r["val_loss"] for seed in cfg.seeds_for(w) if (r := rec.get(w, s, seed))]
            if not vals:
                continue
            mean, se = mean_se(vals)
            out["val_loss_mean"].setdefault(w, {})[s] = mean
            out["val_loss_se"].setdefault(w, {})[s] = se
            ref = master_of(s)
            if s == ref or ref not in cfg.schemes:
                continue
            gap, gap_se = mean_se(_paired_gaps(rec, w, s, ref, cfg.seeds_for(w)))
            out["gap"].setdefault(w, {})[s] = gap
            out["gap_se"].setdefault(w, {})[s] = gap_se
            out["gap_ub"].setdefault(w, {})[s] = gap + 2 * gap_se
            scheme = parse_scheme(s)
            naive = str(scheme.naive_name)
            if scheme.kind in ("eco", "naive") and naive in cfg.schemes:
                _recovery(out, rec, w, s, naive, ref, cfg.seeds_for(w))
    return {k: v for k, v in out.items() if v}


def pareto_metrics(main: dict[str, Any], paired: dict[str, Any]) -> dict[str, Any]:
    """Static memory against validation loss, per workload: for every quantized scheme that
    is not master weights and holds less static memory than the master-weight scheme of its
    format and rounding (measured on that workload), its paired gap's upper bound
    (``gap_at_lower_memory.<scheme>``), and how many such points there are.

    Args:
        main: :func:`main_metrics`.
        paired: :func:`paired_metrics`.

    Returns:
        Workload -> ``{"gap_at_lower_memory": {...}, "points_at_lower_memory": n}``.
    """
    out: dict[str, Any] = {}
    for w, ub in paired.get("gap_ub", {}).items():
        static = main.get("static_memory_mb", {}).get(w, {})
        below = {
            s: g
            for s, g in ub.items()
            if s != "fp32" and s in static and static[s] < static.get(master_of(s), -1.0)
        }
        out[w] = {"gap_at_lower_memory": below, "points_at_lower_memory": len(below)}
    return out


def sweep_metrics(cfg: RunConfig, rec: Records) -> dict[str, Any]:
    """The learning-rate sweep: validation losses, and each scheme's absolute gap to master
    weights at each rate (mean and SE over ``sweep_seeds``), at the smallest and largest rate,
    and its log-log slope against the rate (naive removal: about -1 in the theorem).

    Args:
        cfg: the run's config.
        rec: the records.

    Returns:
        ``(val_loss, lr_sweep)``: ``val_loss`` maps scheme -> ``lr<k>`` -> mean validation
        loss; ``lr_sweep`` holds ``lr``, ``steps``, ``gap``, ``gap_se``, ``gap_at_min_lr``,
        ``gap_at_min_lr_se``, ``gap_at_max_lr``, ``gap_at_max_lr_se`` and ``loglog_slope``.
    """
    lrs = sorted(cfg.sweep_lrs, reverse=True)
    w = cfg.sweep_workload
    val: dict[str, dict[str, float]] = {}
    out: dict[str, Any] = {"lr": {f"lr{k}": lr for k, lr in enumerate(lrs)}}
    for k in range(len(lrs)):
        for s in cfg.sweep_schemes:
            vals = [r["val_loss"] for sd in cfg.sweep_seeds if (r := rec.get(w, s, sd, lr_index=k))]
            if vals:
                val.setdefault(s, {})[f"lr{k}"] = statistics.fmean(vals)
    for s in cfg.sweep_schemes:
        ref = master_of(s)
        if s == ref or ref not in cfg.sweep_schemes:
            continue
        means = []
        for k in range(len(lrs)):
            gaps = []
            for sd in cfg.sweep_seeds:
                a, b = rec.get(w, s, sd, lr_index=k), rec.get(w, ref, sd, lr_index=k)
                if a is not None and b is not None:
                    gaps.append(a["val_loss"] - b["val_loss"])
            mean, se = mean_se(gaps)
            means.append(mean)
            out.setdefault("gap", {}).setdefault(s, {})[f"lr{k}"] = mean
            out.setdefault("gap_se", {}).setdefault(s, {})[f"lr{k}"] = se
        last = f"lr{len(lrs) - 1}"
        for tag, k in (("min", last), ("max", "lr0")):
            out.setdefault(f"gap_at_{tag}_lr", {})[s] = out["gap"][s][k]
            out.setdefault(f"gap_at_{tag}_lr_se", {})[s] = out["gap_se"][s][k]
        out.setdefault("loglog_slope", {})[s] = loglog_slope(lrs, means)
    return {"val_loss": val, "lr_sweep": out}


def _ablation_entry(
    rec: Records, w: str, scheme: str, seeds: Sequence[int], ablations: Sequence[str]
) -> dict[str, dict[str, float]]:
    s = parse_scheme(scheme)
    master, naive = str(s.master_name), str(s.naive_name)

    def losses(name: str, abl: str, key: str = "val_loss") -> list[float] | None:
        rs = [rec.get(w, name, sd, abl) for sd in seeds]
        return None if any(r is None for r in rs) else [r[key] for r in rs]  # type: ignore[index]

    eco0, master0, naive0 = losses(scheme, DEFAULT), losses(master, DEFAULT), losses(naive, DEFAULT)
    if eco0 is None or master0 is None or naive0 is None:
        return {}
    gap0 = [_rel(e, m) for e, m in zip(eco0, master0, strict=True)]
    naive_gap0 = [_rel(n, m) for n, m in zip(naive0, master0, strict=True)]
    default = {
        k: statistics.fmean(v) for k, v in (("eco", eco0), ("master", master0), ("naive", naive0))
    }
    default["gap"], default["gap_se"] = mean_se(gap0)
    default["recovered"], default["recovered_se"] = (
        recovered_share(gap0, naive_gap0) if statistics.fmean(naive_gap0) else (math.nan,) * 2
    )
    entry = {DEFAULT: default}
    for abl in ablations:
        eco = losses(scheme, abl)
        if eco is None:
            continue
        mas = losses(master, abl) or master0
        row = {"eco": statistics.fmean(eco), "master": statistics.fmean(mas)}
        row["gap"], row["gap_se"] = mean_se([_rel(e, m) for e, m in zip(eco, mas, strict=True)])
        row["delta"], row["delta_se"] = mean_se([e - e0 for e, e0 in zip(eco, eco0, strict=True)])
        row["closes"] = (
            (default["gap"] - row["gap"]) / default["gap"] if default["gap"] else math.nan
        )
        final = losses(scheme, abl, "final_loss")
        row["final_loss"] = statistics.fmean(final) if final else math.nan
        entry[abl] = row
    return entry


def ablation_metrics(cfg: RunConfig, rec: Records) -> dict[str, Any]:
    """Each ablation of each ECO scheme, over the paired ablation seeds, on validation loss.

    Per ablation: ``eco`` and ``master`` (mean validation loss; master under the same change
    when the change affects it), ``gap`` (ECO's relative gap to that master, paired) with
    ``gap_se``, ``delta`` (ECO ablated minus ECO default, paired) with ``delta_se``,
    ``closes`` (the share of the default's gap the ablation closes; negative: it widens) and
    ``final_loss`` (ECO's mean final training loss). The ``default`` entry adds ``naive`` and
    ``recovered`` (the share of naive removal's gap ECO recovers).

    Args:
        cfg: the run's config.
        rec: the records.

    Returns:
        Workload -> scheme -> ablation -> figures.
    """
    out: dict[str, Any] = {}
    for w in cfg.ablation_workloads:
        for scheme in cfg.ablation_schemes:
            entry = _ablation_entry(rec, w, scheme, cfg.ablation_seeds, cfg.ablations)
            if entry:
                out.setdefault(w, {})[scheme] = entry
    return out


def summarise(cfg: RunConfig, jobs: Sequence[Job], records: Sequence[Record]) -> dict[str, Any]:
    """Every metric of the run (nested; the runner flattens it to dotted keys).

    Args:
        cfg: the run's config.
        jobs: the planned jobs.
        records: their records.

    Returns:
        The metrics (see the README's key list).
    """
    rec = Records(jobs, records)
    metrics = main_metrics(cfg, rec)
    paired = paired_metrics(cfg, rec)
    metrics.update(paired)
    metrics["pareto"] = pareto_metrics(metrics, paired)
    if cfg.sweep_lrs and cfg.sweep_seeds:
        sweep = sweep_metrics(cfg, rec)
        metrics["lr_sweep"] = {**sweep["lr_sweep"], "val_loss": sweep["val_loss"]}
    if cfg.ablations:
        ablation = ablation_metrics(cfg, rec)
        metrics["ablation"] = ablation
        for w, by_scheme in ablation.items():
            for s, by_abl in by_scheme.items():
                for abl, row in by_abl.items():
                    if abl != DEFAULT:
                        metrics["final_loss"].setdefault(w, {})[f"{s}.{abl}"] = row["final_loss"]
    return metrics
