"""The run's tables: the metric tree from the finished stages, and the README's results block.

Metric keys (contracts, unchanged since the issue that named them):

* ``<stat>.<task>.<method>`` for ``stat`` in :data:`METHOD_STATS` (``ndcg10.sim_pl.blitzrank_k10``,
  ``tokens.minilm.sliding_window``); the first stage and MiniLM's own order appear as methods
  ``first_stage`` / ``minilm_order`` under ``ndcg10``;
* ``position_flip.<task>``; ``repaired_calls.<llm task>.<method>``;
* ``calls_perfect.k<k>``, ``calls_perfect_entropy.k<k>``;
* ``certified_rate.sim_cyclic.blitzrank_k<k>``, ``calls.sim_cyclic.*``,
  ``calls_over_perfect.sim_cyclic.*``, ``budget_calls.sim_cyclic.*``,
  ``tier_purity.sim_cyclic``, ``cycles_found.sim_cyclic``;
* ``noise_sweep.<ndcg10|tokens>.t<temperature>.<method>`` (``t0p25``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.blitzrank.evaluate import ORACLE, TaskResult

__all__ = ["METHOD_STATS", "readme_tables", "run_metrics"]

#: Per-method statistics reported for every task.
METHOD_STATS = (
    "ndcg10",
    "ndcg10_se",
    "calls",
    "tokens",
    "tokens_in",
    "rounds",
    "certified_rate",
    "verify_calls",
    "ndcg10_gain",
    "ndcg10_gain_se",
    "ndcg10_diff_sw",
    "ndcg10_diff_sw_se",
    "ndcg10_diff_setwise",
    "ndcg10_diff_setwise_se",
    "ndcg10_diff_pairwise",
    "ndcg10_diff_pairwise_se",
    "ndcg10_diff_tourrank",
    "ndcg10_diff_tourrank_se",
)


def run_metrics(
    tasks: Mapping[str, TaskResult],
    *,
    perfect: Mapping[str, Mapping[str, float]] | None = None,
    cyclic: Mapping[str, Any] | None = None,
    sweep: Mapping[str, TaskResult] | None = None,
    llm: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The metric tree of a run (nested; the runner flattens it to dotted keys).

    Args:
        tasks: every reranking task's result (simulated, spectrum, MiniLM, LLM).
        perfect: :func:`~icml26.blitzrank.tasks.certification.perfect_calls`'s value.
        cyclic: :func:`~icml26.blitzrank.tasks.certification.cyclic_task`'s value.
        sweep: :func:`~icml26.blitzrank.tasks.simulated.noise_sweep`'s value.
        llm: :func:`~icml26.blitzrank.tasks.llm.llm_task`'s value.

    Returns:
        The metrics named in the module docstring, for the stages given.
    """
    metrics: dict[str, Any] = {
        key: {
            task: {meth: rec[key] for meth, rec in res.items() if key in rec and meth != ORACLE}
            for task, res in tasks.items()
        }
        for key in METHOD_STATS
    }
    metrics["position_flip"] = {
        task: res[ORACLE]["position_flip"] for task, res in tasks.items() if ORACLE in res
    }
    if llm is not None:
        metrics["repaired_calls"] = {
            llm["task"]: {
                m: r["repaired_calls"] for m, r in llm["res"].items() if "repaired_calls" in r
            }
        }
    if perfect is not None:
        metrics["calls_perfect"] = dict(perfect["reach"])
        metrics["calls_perfect_entropy"] = dict(perfect["entropy"])
    if cyclic is not None:
        metrics["certified_rate"]["sim_cyclic"] = cyclic["certified_rate"]
        metrics["calls"]["sim_cyclic"] = cyclic["calls"]
        metrics["calls_over_perfect"] = {"sim_cyclic": cyclic["calls_over_perfect"]}
        metrics["budget_calls"] = {"sim_cyclic": cyclic["budget"]}
        metrics["tier_purity"] = {"sim_cyclic": cyclic["tier_purity"]}
        metrics["cycles_found"] = {"sim_cyclic": cyclic["cycles_found"]}
    if sweep is not None:
        metrics["noise_sweep"] = {
            key: {
                t: {m: rec[key] for m, rec in res.items() if key in rec} for t, res in sweep.items()
            }
            for key in ("ndcg10", "tokens")
        }
    return metrics


#: The README's columns: method key part -> header.
_COLUMNS = {
    "blitzrank_k10": "BlitzRank k=10",
    "blitzrank_k20": "k=20",
    "blitzrank_reask_k20": "k=20 + re-ask",
    "blitzrank_prior_k10": "k=10, first-stage order",
    "sliding_window": "sliding window",
    "setwise": "setwise",
    "pairwise": "PRP, both orders",
    "tourrank": "TourRank-1",
}


def _cell(m: Mapping[str, Any], task: str, meth: str) -> str:
    ndcg, tokens = m.get(f"ndcg10.{task}.{meth}"), m.get(f"tokens.{task}.{meth}")
    if ndcg is None or tokens is None:
        return ""
    return f"{ndcg:.3f} / {tokens / 1000:.1f}k"


def readme_tables(results: Mapping[str, Any]) -> str:
    """The paper's own tables for ``icml26 readme`` (``Paper.readme_tables``), in Markdown.

    Args:
        results: a blitzrank ``results.json`` object.

    Returns:
        A table of nDCG@10 / tokens per query for every oracle (rows) and method (columns),
        the LLM task's line and the perfect-oracle calls.
    """
    m = results["metrics"]
    rows = [  # sim_persist0 is sim_pl again (no persistent share): one row
        k.split(".")[1]
        for k in m
        if k.startswith("ndcg10.") and k.endswith(".blitzrank_k10") and ".sim_persist0." not in k
    ]
    cols = [c for c in _COLUMNS if any(f"ndcg10.{t}.{c}" in m for t in rows)]
    lines = [
        "nDCG@10 / tokens per query (`ndcg10.<oracle>.<method>`, `tokens.<oracle>.<method>`; "
        "flip: `position_flip.<oracle>`):",
        "",
        "| oracle | flip | " + " | ".join(_COLUMNS[c] for c in cols) + " |",
        "|---" * (len(cols) + 2) + "|",
    ]
    for task in rows:
        flip = m.get(f"position_flip.{task}")
        cells = " | ".join(_cell(m, task, c) for c in cols)
        lines.append(f"| `{task}` | {'' if flip is None else f'{flip:.3f}'} | {cells} |")
    llm = sorted(
        {k.split(".")[1] for k in m if k.startswith("ndcg10.") and ".first_stage" in k}
        - set(rows)
        - {"sim_persist0"}
    )
    for task in llm:
        meths = [
            k.split(".")[2] for k in m if k.startswith(f"ndcg10.{task}.") and "first_stage" not in k
        ]
        lines += [
            "",
            f"`{task}` (LLM): first stage {m[f'ndcg10.{task}.first_stage']:.3f}; "
            + "; ".join(f"{x} {_cell(m, task, x)}" for x in meths)
            + ".",
        ]
    ks = sorted(int(k.split(".")[1][1:]) for k in m if k.startswith("calls_perfect.k"))
    if ks:
        lines += [
            "",
            "Calls to certify the ordered top-10 with a perfect oracle (`calls_perfect.k<k>`): "
            + ", ".join(f"k = {k}: {m[f'calls_perfect.k{k}']:.1f}" for k in ks)
            + ".",
        ]
    return "\n".join(lines)
