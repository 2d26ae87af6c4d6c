"""From per-seed figures to the run's metrics: seed means, standard errors, paired gains.

Every seed trains its own models and draws its own noise; within a seed every variant is
sampled from the *same* noise, so a variant's change over the baseline is a paired
difference: computed per seed, then averaged, with its standard error over seeds
(:func:`icml26.shared.stats.mean_se`)::

    fd_gain.<d>.<r>.<v>.nfe<k>        = (FD_baseline@k - FD_v@k) / FD_baseline@k     (> 0: better)
    fd_gain_vs_ref.<d>.<r>.<v>.nfe<k> = (FD_baseline@ref - FD_v@k) / FD_baseline@ref (ref: 250 NFE)
    sw_gain[_vs_ref].<d>.<r>.<v>.nfe<k>  the same for the sliced Wasserstein distance (at the
                                      selection budget only)

FD compares two Gaussian fits and barely sees a sample set's spread (samples collapsed toward
their modes move it by a few %); SW is a distance between the distributions themselves, so a
claim of better samples reads both.

and ``<prefix>_se`` (SE over seeds), ``<prefix>_lcb`` / ``_ucb`` for the gains: the two-sided
95% Student-t interval over seeds, mean -/+ t(0.975, n - 1) SE (4.30 SE with 3 seeds: a
normal "2 SE" bound on 3 seeds covers only about 82%).
The baseline's own gain is written too (0 by definition, SE 0); the claims' placebos are
variants of their own (``ssc_random``, ``mafm_random``, ``mafm_paper_random``), whose gains are
computed like any method's.

``deficit_slope_vs_dim.<r>.learned``: per seed, the slope of ``learned_vs_exact_mean`` of the
baseline over ``log2 d`` across the mixtures, then mean, SE and the t-interval's upper end
(``deficit_slope_vs_dim_ucb``), per regime: the under-trained regime's slope is the claim's
figure, the near-exact control's (``.fit.``) its placebo, measured the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from icml26.shared.keys import metric_key
from icml26.shared.stats import MeanSE, mean_se

__all__ = ["SPREAD", "deficit_slope", "fd_gains", "merge_seeds", "t_interval"]

#: Prefixes that get a ``_se`` key; the gains also get ``_lcb`` / ``_ucb``.
GAINS = ("fd_gain", "fd_gain_vs_ref", "sw_gain", "sw_gain_vs_ref")
SPREAD = (
    *GAINS,
    "fd",
    "sw",
    "loglik_gap",
    "learned_vs_exact",
    "learned_vs_exact_mean",
    "fm_excess_loss",
    "ssc_gamma0",
    "ssc_random_gamma0",
)


def fd_gains(
    metrics: Mapping[str, float],
    name: str,
    regime: str,
    nfe: Sequence[int],
    ref_nfe: int,
    select_nfe: int,
) -> dict[str, float]:
    """One seed's relative FD changes over the baseline (module docstring).

    Args:
        metrics: the seed's flat metrics.
        name: the dataset's key name.
        regime: ``fit`` or ``short``.
        nfe: the budgets every variant was sampled at.
        ref_nfe: the baseline's long budget.
        select_nfe: the budget of ``fd_gain_vs_ref``.

    Returns:
        ``fd_gain.*`` at every budget and ``fd_gain_vs_ref.*`` at ``select_nfe``, for every
        variant present (the baseline included); ``sw_gain.*`` / ``sw_gain_vs_ref.*`` at
        ``select_nfe`` where the SW figures are present.
    """

    def get(metric: str, variant: str, k: int) -> float:
        return metrics.get(metric_key(metric, name, regime, variant, f"nfe{k}"), math.nan)

    def rel(base: float, value: float) -> float:
        ok = base > 0 and math.isfinite(base) and math.isfinite(value)
        return (base - value) / base if ok else math.nan

    prefix = f"fd.{name}.{regime}."
    variants = sorted({k[len(prefix) :].partition(".")[0] for k in metrics if k.startswith(prefix)})
    out: dict[str, float] = {}
    for v in variants:
        for k in nfe:
            out[metric_key("fd_gain", name, regime, v, f"nfe{k}")] = rel(
                get("fd", "baseline", k), get("fd", v, k)
            )
        at = f"nfe{select_nfe}"
        out[metric_key("fd_gain_vs_ref", name, regime, v, at)] = rel(
            get("fd", "baseline", ref_nfe), get("fd", v, select_nfe)
        )
        if metric_key("sw", name, regime, v, at) in metrics:
            out[metric_key("sw_gain", name, regime, v, at)] = rel(
                get("sw", "baseline", select_nfe), get("sw", v, select_nfe)
            )
            out[metric_key("sw_gain_vs_ref", name, regime, v, at)] = rel(
                get("sw", "baseline", ref_nfe), get("sw", v, select_nfe)
            )
    return out


def deficit_slope(
    per_seed: Sequence[Mapping[str, float]], dims: Mapping[str, int], regime: str
) -> dict[str, float]:
    """Slope of the learned-vs-exact ratio over ``log2 d`` across mixtures (module docstring).

    Args:
        per_seed: each seed's flat metrics.
        dims: mixture key name -> dimension (at least two distinct dimensions).
        regime: the regime read.

    Returns:
        ``deficit_slope_vs_dim.<regime>.learned`` with its ``_se`` and ``_ucb`` (the 95%
        t-interval's upper end over seeds).

    Raises:
        ValueError: fewer than two distinct dimensions.
    """
    names = sorted(dims, key=dims.__getitem__)
    x = np.log2([dims[n] for n in names])
    if len(set(x.tolist())) < 2:
        raise ValueError(f"a slope over dimension needs two distinct dimensions, got {dims}")
    slopes = []
    for m in per_seed:
        y = np.asarray(
            [m[metric_key("learned_vs_exact_mean", n, regime, "baseline")] for n in names]
        )
        yc = y - y.mean()  # a constant ratio gives exactly 0
        slopes.append(float(((x - x.mean()) * yc).sum() / ((x - x.mean()) ** 2).sum()))
    est = mean_se(slopes)
    return {
        metric_key("deficit_slope_vs_dim", regime, "learned"): est.mean,
        metric_key("deficit_slope_vs_dim_se", regime, "learned"): est.se,
        metric_key("deficit_slope_vs_dim_ucb", regime, "learned"): t_interval(est)[1],
    }


def t_interval(est: MeanSE, confidence: float = 0.95) -> tuple[float, float]:
    """The two-sided Student-t interval ``mean -/+ t((1 + confidence) / 2, n - 1) * se``.

    Args:
        est: a mean over ``n`` seeds with its standard error.
        confidence: the coverage.

    Returns:
        ``(low, high)``; the mean twice when ``se`` is 0 (every seed equal), NaN for one seed.
    """
    if est.n < 2 or not math.isfinite(est.se):
        return math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, est.n - 1)) * est.se
    return est.mean - half, est.mean + half


def _spread_key(key: str, suffix: str) -> str | None:
    head, sep, rest = key.partition(".")
    return f"{head}{suffix}.{rest}" if sep and head in SPREAD else None


def merge_seeds(per_seed: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Seed means of every key, and the spread keys of :data:`SPREAD` (module docstring).

    Args:
        per_seed: each seed's flat metrics (all seeds must hold the same keys).

    Returns:
        Flat metrics: means, ``_se`` and, for the gains, ``_lcb`` / ``_ucb``. A key with a
        non-finite value in any seed is NaN (a diverged seed is not averaged away).

    Raises:
        ValueError: no seeds, or seeds with different keys.
    """
    if not per_seed:
        raise ValueError("no seeds to merge")
    keys = list(per_seed[0])
    for i, m in enumerate(per_seed[1:], start=1):
        if set(m) != set(keys):
            diff = sorted(set(m) ^ set(keys))[:3]
            raise ValueError(f"seed {i} and seed 0 measured different keys, e.g. {diff}")
    out: dict[str, float] = {}
    for key in keys:
        values = [float(m[key]) for m in per_seed]
        if not all(math.isfinite(v) for v in values):
            out[key] = math.nan
            continue
        est = mean_se(values)
        out[key] = est.mean
        se_key = _spread_key(key, "_se")
        if se_key is None:
            continue
        se = est.se
        out[se_key] = se
        if key.partition(".")[0] in GAINS:
            lo, hi = t_interval(est)
            out[_spread_key(key, "_lcb") or ""] = lo
            out[_spread_key(key, "_ucb") or ""] = hi
    return out
