"""The run's and the bench's figures (``<run>/plots/*.png``), from the stages' values.

* ``pareto_ndcg_vs_tokens``: nDCG@10 against tokens per query, one panel per task;
* ``calls_perfect_vs_k``: perfect-oracle calls to certify against k, both schedules and the
  authors' code;
* ``ndcg_vs_noise``: the Plackett-Luce noise sweep;
* ``engine_overhead`` (bench): the engine's time per oracle call and the calls, against n.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from icml26.blitzrank.evaluate import FIRST_STAGE, ORACLE, TaskResult
from icml26.blitzrank.tasks.certification import REFERENCE_CALLS
from icml26.shared import figure

__all__ = ["calls_plot", "engine_overhead_plot", "pareto_plot", "run_figures", "sweep_plot"]


def pareto_plot(run_dir: Any, tasks: Mapping[str, TaskResult]) -> None:
    """nDCG@10 against tokens per query, one panel per task (the first stage as a line).

    Args:
        run_dir: the run folder (``plot_path``).
        tasks: every reranking task's result.
    """
    names = list(tasks)
    cols = min(4, len(names))
    rows = math.ceil(len(names) / cols)
    with figure(
        run_dir.plot_path("pareto_ndcg_vs_tokens"),
        rows,
        cols,
        title="nDCG@10 vs tokens per query (up-left is better)",
        squeeze=False,
    ) as (_fig, axes):
        flat = list(axes.ravel())
        for ax in flat[len(names) :]:
            ax.set_visible(False)
        for ax, task in zip(flat, names, strict=False):
            for meth, rec in tasks[task].items():
                if "tokens" not in rec:
                    if "ndcg10" in rec:
                        ax.axhline(rec["ndcg10"], color="grey", ls=":", lw=1)
                    continue
                star = meth.startswith("blitzrank")
                ax.scatter(
                    rec["tokens"], rec["ndcg10"], marker="*" if star else "o", s=70 if star else 30
                )
                ax.annotate(
                    meth,
                    (rec["tokens"], rec["ndcg10"]),
                    fontsize=7,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
            ax.set_xscale("log")
            ax.set_xlabel("tokens per query (in + out)")
            ax.set_ylabel("nDCG@10")
            ax.set_title(task)


def calls_plot(
    run_dir: Any,
    reach: Mapping[str, float],
    entropy: Mapping[str, float],
    reference: Mapping[int, float] = REFERENCE_CALLS,
) -> None:
    """Perfect-oracle calls to certify against k.

    Args:
        run_dir: the run folder.
        reach: ``k<k>`` -> calls with the reach schedule.
        entropy: the same with the entropy schedule.
        reference: k -> the authors' code's calls.
    """
    with figure(run_dir.plot_path("calls_perfect_vs_k")) as (_fig, ax):
        ks = sorted(int(k[1:]) for k in reach)
        ax.plot(ks, [reach[f"k{k}"] for k in ks], "o-", label="BlitzRank (reach schedule)")
        ax.plot(ks, [entropy[f"k{k}"] for k in ks], "s--", label="entropy schedule")
        ref = [(k, reference[k]) for k in ks if k in reference]
        if ref:
            ax.plot(*zip(*ref, strict=True), "x:", color="grey", label="authors' code (notes)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("k (items per call)")
        ax.set_ylabel("calls to certify ordered top-10 (n=100)")
        ax.legend()


def sweep_plot(run_dir: Any, sweep: Mapping[str, TaskResult]) -> None:
    """nDCG@10 and tokens against the Plackett-Luce temperature.

    Args:
        run_dir: the run folder.
        sweep: temperature key (``t0p25``) -> the task's result.
    """
    temps = list(sweep)
    xs = [float(t[1:].replace("p", ".")) for t in temps]
    methods = [m for m in sweep[temps[0]] if m not in (FIRST_STAGE, ORACLE)]
    title = "Plackett-Luce oracle noise sweep"
    with figure(run_dir.plot_path("ndcg_vs_noise"), 1, 2, title=title) as (_fig, (ax1, ax2)):
        for meth in methods:
            style = "o-" if meth.startswith("blitzrank") else "s--"
            ax1.plot(xs, [sweep[t][meth]["ndcg10"] for t in temps], style, label=meth)
            ax2.plot(xs, [sweep[t][meth]["tokens"] for t in temps], style, label=meth)
        first = [sweep[t][FIRST_STAGE]["ndcg10"] for t in temps]
        ax1.plot(xs, first, ":", color="grey", label="first stage")
        for ax in (ax1, ax2):
            ax.set_xscale("log")
            ax.set_xlabel("oracle temperature T (noise)")
        ax1.set_ylabel("nDCG@10")
        ax2.set_ylabel("tokens per query")
        ax2.set_yscale("log")
        ax1.legend(fontsize=6)


def run_figures(
    run_dir: Any,
    tasks: Mapping[str, TaskResult],
    *,
    perfect: Mapping[str, Mapping[str, float]] | None = None,
    sweep: Mapping[str, TaskResult] | None = None,
) -> None:
    """Every figure of the main job whose stage ran.

    Args:
        run_dir: the run folder.
        tasks: every reranking task's result.
        perfect: the perfect-oracle calls (``reach`` / ``entropy``), when that stage ran.
        sweep: the noise sweep, when it ran.
    """
    if perfect is not None:
        calls_plot(run_dir, perfect["reach"], perfect["entropy"])
    if sweep is not None:
        sweep_plot(run_dir, sweep)
    if tasks:
        pareto_plot(run_dir, tasks)


def engine_overhead_plot(
    run_dir: Any,
    ns: Sequence[int],
    ms: Mapping[str, float],
    calls: Mapping[str, float],
    *,
    llm_call_ms: float,
    k: int,
    m: int,
) -> None:
    """The bench's figure: engine milliseconds per oracle call and calls, against n.

    Args:
        run_dir: the bench's run folder.
        ns: the item counts.
        ms: ``n<n>`` -> engine milliseconds per call.
        calls: ``n<n>`` -> calls to certify.
        llm_call_ms: the LLM call time drawn for comparison.
        k: items per call.
        m: the top items certified.
    """
    with figure(run_dir.plot_path("engine_overhead"), 1, 2) as (_fig, (ax1, ax2)):
        xs = list(ns)
        ax1.plot(xs, [ms[f"n{n}"] for n in xs], "o-")
        ax1.axhline(llm_call_ms, color="grey", ls=":", label=f"one LLM call ({llm_call_ms:.0f} ms)")
        ax1.set_xscale("log")
        ax1.set_yscale("log")
        ax1.set_xlabel("n items")
        ax1.set_ylabel("engine ms per oracle call")
        ax1.legend()
        ax2.plot(xs, [calls[f"n{n}"] for n in xs], "o-")
        ax2.set_xlabel("n items")
        ax2.set_ylabel(f"calls (k={k}, ordered top-{m})")
