"""From per-split records to the run's metrics: means, standard errors, paired gains, pools.

Keys (``<m>`` a method, ``<set>`` a data set or OOD set):

* ``<metric>.<set>.<m>`` and ``<metric>_se.<set>.<m>``: the mean over the splits / seeds and
  its standard error (``std(ddof=1)/√n``, :func:`icml26.shared.stats.mean_se`);
* ``gain.<metric>.<set>.<m>`` and ``gain_se.<metric>.<set>.<m>``: the paired gain of ``<m>``
  over ``bll`` (> 0: ``<m>`` better; ``bll``'s own gain is 0 with standard error 0), over the
  splits / seeds that every method shares;
* pools: ``<metric>.regression.<m>`` (mean of the per-set means) and ``gain.<metric>.<group>.<m>``
  for the groups ``regression``, ``classification`` and ``all``, the standard error
  ``√Σse²/k`` over the ``k`` data sets (independent: each has its own splits and seeds);
* OOD: per data set and seed the gain is first averaged over that data set's OOD sets (they
  share the seed's network), so the standard error is over seeds, not over OOD sets
  (``gain.ood_auroc.<data set>.<m>``); ``gain.ood_auroc.all.<m>`` pools the data sets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.shared.keys import metric_key
from icml26.shared.stats import mean_se, paired_difference

__all__ = [
    "BETTER",
    "bandit_metrics",
    "classification_metrics",
    "cost_metrics",
    "pool_gains",
    "regression_metrics",
]

#: +1: higher is better; -1: lower is better (the sign of a gain).
BETTER = {
    "nll": -1,
    "rmse": -1,
    "ece": -1,
    "brier": -1,
    "accuracy": +1,
    "coverage90": 0,
    "ood_auroc": +1,
    "ood_auroc_var": +1,
}
#: Metrics without a standard error (timings are not claims on noise).
_NO_SE = ("fit_seconds",)

Records = Sequence[Mapping[str, Any]]


def _se(values: Sequence[float]) -> float:
    return mean_se(values).se if len(values) > 1 else math.nan


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of ``a − b`` (NaN standard error with one pair)."""
    if len(a) < 2:
        return float(np.mean(np.subtract(a, b))), math.nan
    d = paired_difference(a, b)
    return d.mean, d.se


def _values(records: Records, method: str, metric: str) -> list[float]:
    return [
        float(r["metrics"][method][metric])
        for r in records
        if method in r["metrics"] and metric in r["metrics"][method]
    ]


def _means(records: Records, label: str, out: dict[str, float]) -> None:
    """``<metric>.<label>.<m>`` (OOD metrics: ``<kind>.<ood set>.<m>``) and their ``_se``."""
    for method in records[0]["metrics"]:
        for metric in records[0]["metrics"][method]:
            vals = _values(records, method, metric)
            kind, where = metric.split(".", 1) if "." in metric else (metric, label)
            out[metric_key(kind, where, method)] = float(np.mean(vals))
            if kind not in _NO_SE:
                out[metric_key(f"{kind}_se", where, method)] = _se(vals)


def _gains(
    records: Records, label: str, metrics: Sequence[str], out: dict[str, float]
) -> dict[str, tuple[float, float]]:
    """``gain.<metric>.<label>.<m>`` over bll; returns ``{"<metric>/<m>": (gain, se)}``."""
    found: dict[str, tuple[float, float]] = {}
    ref = records[0]["metrics"]["bll"]
    for method in records[0]["metrics"]:
        for metric in metrics:
            sign = BETTER[metric]
            mine = records[0]["metrics"][method]
            if metric in ref:
                if metric not in mine:
                    continue
                a = [sign * v for v in _values(records, method, metric)]
                b = [sign * v for v in _values(records, "bll", metric)]
            else:  # an OOD kind: per seed, the mean over this data set's OOD sets
                keys = [k for k in ref if k.startswith(metric + ".")]
                if not keys or any(k not in mine for k in keys):
                    continue
                a = [
                    sign * float(np.mean([r["metrics"][method][k] for k in keys])) for r in records
                ]
                b = [sign * float(np.mean([r["metrics"]["bll"][k] for k in keys])) for r in records]
                for k in keys:  # per OOD set too (a standard error over seeds)
                    ga, gb = _values(records, method, k), _values(records, "bll", k)
                    g, se = (
                        _paired([sign * v for v in ga], [sign * v for v in gb])
                        if method != "bll"
                        else (0.0, 0.0)
                    )
                    where = k.split(".", 1)[1]
                    out[metric_key("gain", metric, where, method)] = g
                    out[metric_key("gain_se", metric, where, method)] = se
            if any(math.isnan(v) for v in a + b):
                continue
            g, se = _paired(a, b) if method != "bll" else (0.0, 0.0)
            out[metric_key("gain", metric, label, method)] = g
            out[metric_key("gain_se", metric, label, method)] = se
            found[f"{metric}/{method}"] = (g, se)
    return found


def _diagnostics(records: Records, label: str, out: dict[str, float]) -> None:
    """``trace_ratio.<label>``, ``var_ge_bll_fraction.<label>``, ``var_ratio.<where>`` and the
    chosen ``alpha.<label>.<m>`` (geometric mean over splits)."""
    for key, name in (("trace_ratio", "trace_ratio"), ("var_ge_bll", "var_ge_bll_fraction")):
        vals = [r[key] for r in records if key in r]
        if vals:
            out[metric_key(name, label)] = float(np.mean(vals))
    for where in records[0].get("var_ratio", {}):
        vals = [r["var_ratio"][where] for r in records]
        out[metric_key("var_ratio", label if where == "test" else where)] = float(np.median(vals))
    for method in records[0].get("alpha", {}):
        vals = [r["alpha"][method] for r in records if method in r["alpha"]]
        out[metric_key("alpha", label, method)] = float(np.exp(np.mean(np.log(vals))))


def regression_metrics(
    per_set: Mapping[str, Records], subsample: Mapping[str, Mapping[str, Mapping[str, float]]]
) -> tuple[dict[str, float], dict[str, dict[str, tuple[float, float]]]]:
    """Metrics of the regression sets and their pool ``regression``.

    Args:
        per_set: data set label -> its split records (from
            :func:`icml26.bll_ntk.evaluate.evaluate_regression`).
        subsample: data set label -> ``{"both": ..., "proj": ...}`` subsampling errors.

    Returns:
        ``(metrics, gains)`` with ``gains[label]["<metric>/<method>"] = (gain, se)``.
    """
    out: dict[str, float] = {}
    gains: dict[str, dict[str, tuple[float, float]]] = {}
    for label, records in per_set.items():
        _means(records, label, out)
        gains[label] = _gains(records, label, ("nll", "rmse", "ece"), out)
        _diagnostics(records, label, out)
    for label, errs in subsample.items():
        for kind, name in (("both", "subsample_error"), ("proj", "subsample_error_proj")):
            for size, v in errs.get(kind, {}).items():
                out[metric_key(name, label, size)] = float(v)
    labels = list(per_set)
    for metric in ("nll", "rmse", "ece", "coverage90"):
        for method in per_set[labels[0]][0]["metrics"]:
            keys = [metric_key(metric, lab, method) for lab in labels]
            if all(k in out for k in keys):
                out[metric_key(metric, "regression", method)] = float(
                    np.mean([out[k] for k in keys])
                )
                ses = [out[metric_key(f"{metric}_se", lab, method)] for lab in labels]
                out[metric_key(f"{metric}_se", "regression", method)] = _pooled_se(ses)
    return out, gains


def classification_metrics(
    per_set: Mapping[str, Records], subsample: Mapping[str, Mapping[str, Mapping[str, float]]]
) -> tuple[dict[str, float], dict[str, dict[str, tuple[float, float]]]]:
    """Metrics of the classification sets (and their OOD sets).

    Args:
        per_set: data set -> its seed records (from
            :func:`icml26.bll_ntk.evaluate.evaluate_classification`).
        subsample: data set -> subsampling errors.

    Returns:
        ``(metrics, gains)`` as :func:`regression_metrics`.
    """
    out: dict[str, float] = {}
    gains: dict[str, dict[str, tuple[float, float]]] = {}
    for label, records in per_set.items():
        _means(records, label, out)
        wanted = ("nll", "ece", "brier", "accuracy", "ood_auroc", "ood_auroc_var")
        gains[label] = _gains(records, label, wanted, out)
        _diagnostics(records, label, out)
    for label, errs in subsample.items():
        for kind, name in (("both", "subsample_error"), ("proj", "subsample_error_proj")):
            for size, v in errs.get(kind, {}).items():
                out[metric_key(name, label, size)] = float(v)
    return out, gains


def _pooled_se(ses: Sequence[float]) -> float:
    s = np.asarray(ses, dtype=float)
    return float(math.sqrt(float(np.sum(s**2))) / len(s)) if len(s) else math.nan


def pool_gains(
    gains: Mapping[str, Mapping[str, tuple[float, float]]], group: str
) -> dict[str, float]:
    """``gain.<metric>.<group>.<m>``: the mean of the per-set gains, with standard error
    ``√Σse²/k`` (the sets are independent experiments).

    Args:
        gains: data set -> ``"<metric>/<method>"`` -> (gain, se).
        group: the pool's name.

    Returns:
        The pooled gain keys.
    """
    rows: dict[str, list[tuple[float, float]]] = {}
    for per in gains.values():
        for key, pair in per.items():
            rows.setdefault(key, []).append(pair)
    out: dict[str, float] = {}
    for key, pairs in rows.items():
        metric, method = key.split("/")
        out[metric_key("gain", metric, group, method)] = float(np.mean([g for g, _ in pairs]))
        out[metric_key("gain_se", metric, group, method)] = _pooled_se([s for _, s in pairs])
    return out


def bandit_metrics(runs: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, float]:
    """Wheel-bandit metrics over seeds.

    Args:
        runs: policy -> ``{"regret": final regret per seed, "found": ..., "trace_ratio": ...}``
            (every policy on the same seeds, in the same order).

    Returns:
        ``bandit_regret.<p>`` (mean), ``bandit_regret_se.<p>``, ``bandit_regret_ratio.<p>``
        (mean regret over BLL's), ``bandit_regret_gain.<p>`` (paired ``bll − p`` over seeds,
        > 0: less regret than BLL) with ``bandit_regret_gain_se.<p>``, ``bandit_outer_found.<p>``
        (share of outer-ring contexts whose arm was pulled), ``bandit_trace_ratio.<p>`` and
        the diagnostics ``bandit_var_ratio.<p>``, ``bandit_prior_share.<p>``,
        ``bandit_block_spread.<p>`` (:class:`icml26.bll_ntk.bandit.BanditRun`).
    """
    out: dict[str, float] = {}
    ref = list(runs["bll"]["regret"])
    for policy, r in runs.items():
        regret = list(r["regret"])
        out[metric_key("bandit_regret", policy)] = float(np.mean(regret))
        out[metric_key("bandit_regret_se", policy)] = _se(regret)
        out[metric_key("bandit_regret_ratio", policy)] = float(np.mean(regret) / np.mean(ref))
        g, se = _paired(ref, regret) if policy != "bll" else (0.0, 0.0)
        out[metric_key("bandit_regret_gain", policy)] = g
        out[metric_key("bandit_regret_gain_se", policy)] = se
        out[metric_key("bandit_outer_found", policy)] = float(np.nanmean(r["found"]))
        out[metric_key("bandit_trace_ratio", policy)] = float(np.mean(r["trace_ratio"]))
        for key in ("var_ratio", "prior_share", "block_spread"):
            if key in r:
                out[metric_key(f"bandit_{key}", policy)] = float(np.mean(r[key]))
    return out


def cost_metrics(
    costs: Mapping[str, Mapping[str, float]], steps: Mapping[str, Mapping[str, Any]]
) -> dict[str, float]:
    """The cost comparison and the chosen training steps.

    Args:
        costs: data set -> ``{method: median fit + predict seconds}`` (same rule for both).
        steps: data set -> ``{"steps": chosen, "val_nll": {...}}`` (regression sets).

    Returns:
        ``cost_seconds.<set>.<m>``, ``cost_ratio.<set>.<m>`` (over ``lla``'s; ``lla``'s own
        is 1) and ``train_steps.<set>``, ``train_steps_val_nll.<set>.s<steps>``.
    """
    out: dict[str, float] = {}
    for label, per in costs.items():
        for m, secs in per.items():
            out[metric_key("cost_seconds", label, m)] = float(secs)
            if "lla" in per:
                out[metric_key("cost_ratio", label, m)] = float(secs / per["lla"])
    for label, chosen in steps.items():
        out[metric_key("train_steps", label)] = float(chosen["steps"])
        for cand, v in chosen.get("val_nll", {}).items():
            out[metric_key("train_steps_val_nll", label, f"s{cand}")] = float(v)
    return out
