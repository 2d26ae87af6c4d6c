"""From per-policy results to the metrics the claims read.

Every comparison is paired (the same instances and reward tables) and at matched decoding:
a sampled model against a sampled control, a greedy model against the greedy base. Keys:

* ``regret.<env>.<policy>``, ``regret_se.<env>.<policy>``, ``regret_per_step.<env>.<policy>``;
* ``regret_ratio.<env>.<control>.<method>`` (method's mean regret over the control's; NaN,
  undecided, when the control's mean regret is not positive) and
  ``improvement_z.<env>.<control>.<method>`` (paired z of the control's regret minus the
  method's), for the pairs of :data:`PAIRS`, each control also against itself (ratio 1,
  z 0: what a claim reads when its placebo puts the control in the method's place);
* ``regret_ratio_by_axis.<axis>.<control>.<method>`` / ``improvement_z_by_axis...``: the
  worst over the environments of a generalisation axis (:func:`generalisation_axis`);
* ``min_detectable_ratio_by_axis.<axis>.<control>``: the regret ratio a paired z of 2
  needs given the control's per-instance SD and the number of instances (worst, i.e. lowest,
  over the axis's environments; :func:`min_detectable_ratio`), with ``power_by_axis...`` (the
  chance a true 10% gain reaches z > 2, :func:`power_for_gain`; worst over the axis): the
  regret claims, numeric and LLM, are undecided, not failed, when that power is at most 0.5
  (the minimum detectable ratio is then at or below 0.9: only a gain larger than 10% would
  reach z > 2);
* ``invalid_action_rate.<policy>`` and ``invalid_rate_by_iteration.<i>`` (LLM replies that
  make no valid decision, by default the strict parse: no ``Action: <n>`` line; evaluation
  of iteration ``i``, 0 = base, sampled, on ``llm_env``) with ``invalid_drop_z.<i>`` (paired
  z over evaluation episodes of the drop in each episode's invalid share from the base,
  :func:`paired_z`: the T decisions of an episode are not independent, so episodes are the
  unit; 0 for the base itself), beside ``train.llm_iter<i>.rollout_invalid`` (the rollouts
  iteration ``i`` selected from); ``invalid_lenient_rate.<policy>`` (the lenient parse's,
  an ablation read from the same replies) and ``truncated_rate.<policy>`` (replies that hit
  ``llm_max_tokens``);
* ``invalid_share.<short>`` (the invalid rate on ``llm_env`` by short name: ``llm_base``,
  ``llm_rmft``, ``llm_random_select``, their ``_greedy`` forms) and
  ``invalid_drop_z_by_control.<control>.<method>`` (the paired z over episodes of the
  control's invalid shares minus the method's, for :data:`INVALID_PAIRS`, each control also
  against itself: the placebo).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from icml26.rmft.config import RunConfig
from icml26.rmft.envs import EnvSpec, parse_env

__all__ = [
    "INVALID_PAIRS",
    "PAIRS",
    "Z_MIN_INSTANCES",
    "generalisation_axis",
    "paired_z",
    "proportion_drop_z",
    "summary_metrics",
]

#: Fewest paired instances on which an improvement z is reported (below, it is NaN: the claim
#: is undecided rather than decided on two or three instances).
Z_MIN_INSTANCES = 10

#: ``(control, method)`` name pairs (without the model prefix), at matched decoding:
#: sampled RMFT against the sampled base and against the loop distilling random rollouts,
#: greedy RMFT against the greedy base and the greedy random-selection model, and the
#: random-selection loop against the base.
PAIRS = (
    ("base", "rmft"),
    ("base_greedy", "rmft_greedy"),
    ("random_select", "rmft"),
    ("random_select_greedy", "rmft_greedy"),
    ("base", "random_select"),
)

#: ``(control, method)`` pairs of the LLM's invalid-rate comparison (short names, sampled):
#: RMFT against the base and against the loop distilling random transcripts (SFT on the
#: model's own valid replies, chosen without the regret signal).
INVALID_PAIRS = (("llm_base", "llm_rmft"), ("llm_random_select", "llm_rmft"))


def generalisation_axis(train: EnvSpec, env: EnvSpec) -> str:
    """How ``env`` differs from the training environment, one thing at a time: ``train``
    (same), ``horizon`` (only T), ``arms`` (only K), ``rewards`` (only the reward process);
    ``other`` when more than one thing changes (no claim reads it)."""
    changed = [
        axis
        for axis, differs in (
            ("rewards", env.kind != train.kind),
            ("arms", env.n_arms != train.n_arms),
            ("horizon", env.horizon != train.horizon),
        )
        if differs
    ]
    if not changed:
        return "train"
    return changed[0] if len(changed) == 1 else "other"


def paired_z(before: Any, after: Any) -> float:
    """Paired z of the improvement ``before - after``: its mean over its standard error.

    Args:
        before: the control's per-instance regrets.
        after: the method's, on the same instances.

    Returns:
        The z; ``0.0`` when every difference is exactly 0 (no improvement at all); NaN
        (undecided) with fewer than :data:`Z_MIN_INSTANCES` pairs or a zero standard error
        under a non-zero mean.
    """
    diff = np.asarray(before, dtype=float) - np.asarray(after, dtype=float)
    if diff.size < Z_MIN_INSTANCES:
        return float("nan")
    if not diff.any():
        return 0.0
    se = float(diff.std(ddof=1) / math.sqrt(diff.size))
    return float(diff.mean() / se) if se > 0 else float("nan")


def min_detectable_ratio(control: Any) -> float:
    """The regret ratio (method over control) a paired z of 2 needs on this sample.

    Uses the control's per-instance SD as the SD of the paired differences (no pairing gain
    assumed) and its n: ``1 - 2 * sd / (sqrt(n) * mean)``.

    Args:
        control: the control's per-instance regrets.

    Returns:
        The ratio; NaN with fewer than :data:`Z_MIN_INSTANCES` instances or a non-positive
        mean regret (no ratio to detect).
    """
    x = np.asarray(control, dtype=float)
    if x.size < Z_MIN_INSTANCES or x.mean() <= 0:
        return float("nan")
    return float(1.0 - 2.0 * x.std(ddof=1) / (math.sqrt(x.size) * x.mean()))


def power_for_gain(control: Any, gain: float = 0.1) -> float:
    """The chance that a true relative regret drop of ``gain`` reaches paired z > 2.

    Normal approximation with the control's per-instance SD as the SD of the differences:
    ``Phi(gain * mean / (sd / sqrt(n)) - 2)``; above 0.5 exactly when
    :func:`min_detectable_ratio` is above ``1 - gain`` (a smaller gain than ``gain``
    already reaches z = 2).

    Args:
        control: the control's per-instance regrets.
        gain: the relative drop to detect.

    Returns:
        The power in [0, 1]; NaN where :func:`min_detectable_ratio` is.
    """
    x = np.asarray(control, dtype=float)
    if x.size < Z_MIN_INSTANCES or x.mean() <= 0:
        return float("nan")
    sd = float(x.std(ddof=1))
    if sd == 0:
        return 1.0
    z = gain * float(x.mean()) * math.sqrt(x.size) / sd - 2.0
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _final_names(prefix: str, iterations: int) -> dict[str, str]:
    """Short name -> policy name of one model's finals."""
    return {
        "base": f"{prefix}base",
        "base_greedy": f"{prefix}base_greedy",
        "rmft": f"{prefix}rmft_iter{iterations}",
        "rmft_greedy": f"{prefix}rmft_greedy_final",
        "random_select": f"{prefix}random_select_final",
        "random_select_greedy": f"{prefix}random_select_greedy_final",
    }


def _worst(vals: list[float], pick: Any) -> float:
    """The worst over environments (``pick`` = max for ratios, min for z); NaN if any is."""
    return float("nan") if any(math.isnan(v) for v in vals) else float(pick(vals))


def _models(config: RunConfig) -> list[tuple[str, str, int, list[tuple[str, str]]]]:
    """``(prefix, short prefix for keys, iterations, [(env, axis)])`` per trained model."""
    out = []
    if config.numeric:
        train = parse_env(config.train_env)
        envs = [(e, generalisation_axis(train, parse_env(e))) for e in config.eval_envs]
        out.append(("", "", config.rmft_iterations, envs))
        for tag, env in (
            ("nonstationary", config.nonstationary_env),
            ("experts", config.experts_env),
        ):
            if env:
                out.append((f"{tag}_", f"{tag}_", config.rmft_iterations, [(env, tag)]))
    if config.llm_enabled and not config.llm_endpoint:
        envs = [(config.llm_env, "train")]
        if config.llm_nl_env:
            envs.append((config.llm_nl_env, "scenario"))
        out.append(("llm_", "llm_", config.llm_iterations, envs))
    return out


def summary_metrics(
    config: RunConfig, results: Mapping[str, Mapping[str, Any]], train: Mapping[str, Any]
) -> dict[str, Any]:
    """The run's metrics (see the module docstring) from its results and training stats."""
    metrics: dict[str, Any] = {"regret": {}, "regret_per_step": {}, "regret_se": {}}
    for env, policies in results.items():
        horizon = parse_env(env).horizon
        for policy, s in policies.items():
            metrics["regret"].setdefault(env, {})[policy] = s["regret"]
            metrics["regret_per_step"].setdefault(env, {})[policy] = s["regret"] / horizon
            metrics["regret_se"].setdefault(env, {})[policy] = s["se"]
    ratio: dict[str, Any] = {}
    z: dict[str, Any] = {}
    by_axis: dict[str, dict[str, dict[str, list[tuple[float, float]]]]] = {}
    mdr: dict[str, dict[str, list[float]]] = {}
    power: dict[str, dict[str, list[float]]] = {}
    for prefix, key, iterations, envs in _models(config):
        names = _final_names(prefix, iterations)
        for env, axis in envs:
            pol = results.get(env, {})
            pairs = {*PAIRS, *((c, c) for c, _ in PAIRS)}
            for control, method in sorted(pairs):
                if names[control] not in pol or names[method] not in pol:
                    continue
                b = np.asarray(pol[names[control]]["final"])
                f = np.asarray(pol[names[method]]["final"])
                # no ratio when the control's mean regret is not positive (NaN: undecided)
                r = float(f.mean() / b.mean()) if b.mean() > 0 else float("nan")
                zz = paired_z(b, f)
                c, m = key + control, key + method
                ratio.setdefault(env, {}).setdefault(c, {})[m] = r
                z.setdefault(env, {}).setdefault(c, {})[m] = zz
                by_axis.setdefault(axis, {}).setdefault(c, {}).setdefault(m, []).append((r, zz))
                if control == method:
                    mdr.setdefault(axis, {}).setdefault(c, []).append(min_detectable_ratio(b))
                    power.setdefault(axis, {}).setdefault(c, []).append(power_for_gain(b))
    metrics["regret_ratio"] = ratio
    metrics["improvement_z"] = z
    metrics["regret_ratio_by_axis"] = {
        a: {c: {m: _worst([v[0] for v in vs], max) for m, vs in ms.items()} for c, ms in cs.items()}
        for a, cs in by_axis.items()
    }
    metrics["improvement_z_by_axis"] = {
        a: {c: {m: _worst([v[1] for v in vs], min) for m, vs in ms.items()} for c, ms in cs.items()}
        for a, cs in by_axis.items()
    }
    metrics["min_detectable_ratio_by_axis"] = {
        a: {c: _worst(vs, min) for c, vs in cs.items()} for a, cs in mdr.items()
    }
    metrics["power_by_axis"] = {
        a: {c: _worst(vs, min) for c, vs in cs.items()} for a, cs in power.items()
    }
    metrics["eval_instances"] = {"numeric": float(config.eval_instances)}
    if config.llm_enabled:
        metrics["eval_instances"]["llm"] = float(config.llm_eval_instances)
        metrics.update(_invalid_rates(config, results))
    metrics["train"] = dict(train)
    return metrics


def _invalid_rates(config: RunConfig, results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Share of LLM replies making no valid decision, per LLM policy (mean over the LLM
    environments it played; with the lenient parse's share and the share cut at the token
    cap), per iteration on ``llm_env`` (0 = the base), and by short name with the paired
    drop z against each control of :data:`INVALID_PAIRS`."""
    envs = [e for e in (config.llm_env, config.llm_nl_env) if e and e in results]
    policies = sorted({p for e in envs for p in results[e] if p.startswith("llm_")})

    def mean_of(field: str) -> dict[str, float]:
        return {
            p: float(np.mean([results[e][p][field] for e in envs if p in results[e]]))
            for p in policies
            if all(field in results[e][p] for e in envs if p in results[e])
        }

    main = results.get(config.llm_env, {})
    by_iter: dict[str, float] = {}
    drop_z: dict[str, float] = {}
    for i in range(config.llm_iterations + 1):
        name = "llm_base" if i == 0 else f"llm_rmft_iter{i}"
        if name in main and "llm_base" in main:
            by_iter[str(i)] = main[name]["invalid"]
            drop_z[str(i)] = _invalid_drop_z(main["llm_base"], main[name], config)
    names = _final_names("llm_", config.llm_iterations)
    short = {f"llm_{k}": v for k, v in names.items() if v in main}
    share = {k: float(main[v]["invalid"]) for k, v in short.items()}
    by_control: dict[str, dict[str, float]] = {}
    for control, method in {*INVALID_PAIRS, *((c, c) for c, _ in INVALID_PAIRS)}:
        if control in short and method in short:
            by_control.setdefault(control, {})[method] = _invalid_drop_z(
                main[short[control]], main[short[method]], config
            )
    return {
        "invalid_action_rate": mean_of("invalid"),
        "invalid_lenient_rate": mean_of("invalid_lenient"),
        "truncated_rate": mean_of("truncated"),
        "invalid_rate_by_iteration": by_iter,
        "invalid_drop_z": drop_z,
        "invalid_share": share,
        "invalid_drop_z_by_control": by_control,
    }


def _invalid_drop_z(base: Mapping[str, Any], after: Mapping[str, Any], config: RunConfig) -> float:
    """The drop in the invalid rate from ``base`` to ``after``, tested over episodes: paired z
    of the per-episode invalid shares (the same instances); for results stored before those
    shares were, the two-proportion z with one trial per episode (conservative)."""
    if "invalid_by_episode" in base and "invalid_by_episode" in after:
        return paired_z(base["invalid_by_episode"], after["invalid_by_episode"])
    return proportion_drop_z(base["invalid"], after["invalid"], config.llm_eval_instances)


def proportion_drop_z(before: float, after: float, n: int) -> float:
    """Two-proportion z (pooled) of a drop from rate ``before`` to ``after``, ``n`` trials
    each; ``0.0`` when the rates are equal, NaN when the pooled rate is 0 or 1 otherwise.

    Args:
        before: the earlier rate.
        after: the later rate.
        n: trials behind each rate.

    Returns:
        ``(before - after) / sqrt(2 p (1 - p) / n)`` with ``p`` the pooled rate.
    """
    if before == after:
        return 0.0
    pooled = (before + after) / 2
    var = 2 * pooled * (1 - pooled) / n
    return float((before - after) / math.sqrt(var)) if var > 0 else float("nan")
