"""From per-seed records to the run's metrics: means and standard errors over seeds.

Keys (``<regime>``: ``targets`` (equal targets seen) or ``converged``; ``<model>``: ``tnp``,
``inctnp``, ``gp_oracle``, ``gp_prior``):

* ``nll.<task>.<regime>.<model>``, ``rmse.<task>.<regime>.<model>`` (mean over seeds of the
  mean over context sizes) with ``nll_se`` / ``rmse_se`` (standard error over seeds; the GP
  references are the same for every seed, so theirs is 0); ``nll_at.<task>.c<n>.<regime>.<model>``;
* ``nll.<regime>.<model>``: the mean over every task; ``gap.nll.<regime>.<model>`` and
  ``gap_se.nll.<regime>.<model>``: the paired difference ``model − tnp`` of the task-mean NLL
  over seeds (< 0: better than TNP-D; TNP-D's own is 0 ± 0);
  ``excess_nll.<regime>.<model>`` (± ``excess_nll_se``): the task-mean NLL above the GP's;
* ``exchangeability_kl.<task>.<model>`` and ``implicit_bayes_gap.<task>.<model>`` (converged
  models, ± ``_se`` over seeds) and their task means ``<measure>.all.<model>``, with the
  paired difference to TNP-D over seeds ``gap.<measure>.all.<model>`` (± ``gap_se``);
  ``implicit_bayes_gap`` is the spread over orders of the streaming log-likelihood, 0 for the
  exact GP (the chain rule), so it is the gap to that reference;
* training: ``steps``, ``targets_seen``, ``converged`` (share of seeds that met the rule before
  the cap), ``budget_step`` per ``<group>.<model>``;
* latency: ``update_ms.<model>.n<N>`` (median over repeats) with ``update_ms_q25`` /
  ``update_ms_q75``, ``speedup.n<N>`` (median over median) and ``speedup_low.n<N>`` (TNP-D's
  lower quartile over incTNP's upper one), ``scaling_exponent.<model>`` with
  ``scaling_exponent_se.<model>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.inctnp.evaluation import scaling_exponent
from icml26.shared.keys import metric_key
from icml26.shared.stats import mean_se, paired_difference

__all__ = ["latency_metrics", "predictive_metrics", "training_metrics"]

Records = Mapping[str, Sequence[Mapping[str, Any]]]  # group -> per-seed evaluate_seed values


def _se(values: Sequence[float]) -> float:
    return mean_se(values).se if len(values) > 1 else float("nan")


def _tasks(evals: Records) -> list[tuple[str, str]]:
    return [(g, t) for g, seeds in evals.items() for t in seeds[0] if t != "info"]


def predictive_metrics(evals: Records, ctx_sizes: Sequence[int]) -> dict[str, float]:
    """Predictive and implicit-Bayes metrics over seeds (see the module docstring).

    Args:
        evals: group -> per-seed records from :func:`icml26.inctnp.protocol.evaluate_seed`.
        ctx_sizes: the context sizes behind ``nll_at``.

    Returns:
        The metrics.
    """
    out: dict[str, float] = {}
    tasks = _tasks(evals)
    n_seeds = min(len(seeds) for seeds in evals.values())
    first = evals[tasks[0][0]][0][tasks[0][1]]
    for regime in first:
        models = list(first[regime])
        per_seed = {m: np.zeros((n_seeds, len(tasks))) for m in models}
        for j, (group, task) in enumerate(tasks):
            for m in models:
                rows = [evals[group][k][task][regime][m] for k in range(n_seeds)]
                for metric in ("nll", "rmse"):
                    vals = [r[metric] for r in rows]
                    out[metric_key(metric, task, regime, m)] = float(np.mean(vals))
                    out[metric_key(f"{metric}_se", task, regime, m)] = _se(vals)
                per_seed[m][:, j] = [r["nll"] for r in rows]
                for i, c in enumerate(ctx_sizes):
                    v = float(np.mean([r["nll_at"][i] for r in rows]))
                    out[metric_key("nll_at", task, f"c{c}", regime, m)] = v
        for m in models:
            mean_nll = per_seed[m].mean(1)  # the task mean, per seed
            out[metric_key("nll", regime, m)] = float(mean_nll.mean())
            gap = (0.0, 0.0) if m == "tnp" else _paired(mean_nll, per_seed["tnp"].mean(1))
            (
                out[metric_key("gap", "nll", regime, m)],
                out[metric_key("gap_se", "nll", regime, m)],
            ) = gap
            excess = mean_nll - per_seed["gp_oracle"].mean(1)
            out[metric_key("excess_nll", regime, m)] = float(excess.mean())
            out[metric_key("excess_nll_se", regime, m)] = _se(list(excess))
    _bayes(evals, tasks, n_seeds, out)
    return out


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    if len(a) < 2:
        return float(np.mean(a - b)), float("nan")
    d = paired_difference(list(a), list(b))
    return d.mean, d.se


def _bayes(
    evals: Records, tasks: list[tuple[str, str]], n_seeds: int, out: dict[str, float]
) -> None:
    for measure in ("exchangeability_kl", "implicit_bayes_gap"):
        pooled: dict[str, list[np.ndarray]] = {}
        for group, task in tasks:
            conv = evals[group][0][task]["converged"]
            for m, r in conv.items():
                if measure not in r:
                    continue
                vals = np.array(
                    [evals[group][k][task]["converged"][m][measure] for k in range(n_seeds)]
                )
                out[metric_key(measure, task, m)] = float(vals.mean())
                out[metric_key(f"{measure}_se", task, m)] = _se(list(vals))
                pooled.setdefault(m, []).append(vals)
        task_mean = {m: np.mean(cols, axis=0) for m, cols in pooled.items()}  # per seed
        for m, per_seed in task_mean.items():
            out[metric_key(measure, "all", m)] = float(per_seed.mean())
            out[metric_key(f"{measure}_se", "all", m)] = _se(list(per_seed))
            if "tnp" in task_mean:
                gap = (0.0, 0.0) if m == "tnp" else _paired(per_seed, task_mean["tnp"])
                out[metric_key("gap", measure, "all", m)] = gap[0]
                out[metric_key("gap_se", measure, "all", m)] = gap[1]


def training_metrics(evals: Records) -> dict[str, float]:
    """Steps, targets seen, convergence and the budget snapshot per group and model.

    Args:
        evals: group -> per-seed records (their ``"info"``).

    Returns:
        ``steps.<group>.<model>`` etc. (means over seeds; ``converged``: the share).
    """
    out: dict[str, float] = {}
    for group, seeds in evals.items():
        for m in seeds[0]["info"]:
            infos = [s["info"][m] for s in seeds]
            for key in ("steps", "targets_seen", "budget_step"):
                out[metric_key(key, group, m)] = float(np.mean([i[key] for i in infos]))
            out[metric_key("converged", group, m)] = float(np.mean([i["converged"] for i in infos]))
            out[metric_key("budget_reached", group, m)] = float(
                np.mean([i["budget_reached"] for i in infos])
            )
    return out


def latency_metrics(latency: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, float]:
    """Latency keys and the scaling exponents (see the module docstring).

    Args:
        latency: ``{model: {"n<N>": {"median", "q25", "q75"}}}``.

    Returns:
        The metrics.
    """
    out: dict[str, float] = {}
    for m, per in latency.items():
        for size, t in per.items():
            out[metric_key("update_ms", m, size)] = t["median"]
            out[metric_key("update_ms_q25", m, size)] = t["q25"]
            out[metric_key("update_ms_q75", m, size)] = t["q75"]
        sizes = [int(s[1:]) for s in per]
        slope = scaling_exponent(sizes, [per[s]["median"] for s in per])
        out[metric_key("scaling_exponent", m)] = slope.slope
        out[metric_key("scaling_exponent_se", m)] = slope.se
    if "tnp" in latency and "inctnp" in latency:
        for size in latency["tnp"]:
            tnp, inc = latency["tnp"][size], latency["inctnp"][size]
            out[metric_key("speedup", size)] = tnp["median"] / inc["median"]
            out[metric_key("speedup_low", size)] = tnp["q25"] / inc["q75"]
    return out
