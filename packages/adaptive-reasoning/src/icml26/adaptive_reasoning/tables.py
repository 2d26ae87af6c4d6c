"""The metric tree of a run: per-seed figures, their mean over seeds, and paired gaps.

Per method ``m`` and split ``s`` (means over seeds, ``*_se`` the standard error over seeds):
``accuracy.<s>.<m>``, ``think_rate.<s>.<m>``, ``tokens.<s>.<m>``; over all splits
``accuracy.all.<m>``, ``tokens.all.<m>``, ``reward.all.<m>`` (the stage-2 reward: correct
minus ``token_cost`` per reasoning token); on complex (``ops >= 3``) and simple items
``accuracy.complex.<m>``, ``accuracy.simple.<m>``, ``reward.complex.<m>``,
``reward.simple.<m>``; ``verbosity_gap.<m>`` (think rate on simple_verbose minus
simple_concise: the training wording), ``verbosity_gap_ood.<m>`` (the same on the ``ood``
split's simple items: held-out fillers and verbs) and ``separation.<m>`` (think rate on
complex items minus on simple items). ``gap.<q>.<m>.<b>`` / ``gap_se.<q>.<m>.<b>``: the mean
over seeds of the per-seed difference ``q(m) - q(b)`` and its SE (paired by seed, every
method answering the same items), for ``q`` in :data:`GAP_QUANTITIES` and every pair of
methods (so a claim's placebo finds its keys).
``data.*``: the disjointness measured by content.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from icml26.shared.stats import mean_se

__all__ = ["GAP_KEYS", "GAP_QUANTITIES", "large_metrics", "per_seed_figures", "run_metrics"]

#: The paired-gap quantities and the per-seed key each reads (``{m}``: the method).
GAP_KEYS = {
    "reward": "reward.all.{m}",
    "accuracy": "accuracy.all.{m}",
    "tokens": "tokens.all.{m}",
    "verbosity_gap": "verbosity_gap.{m}",
    "verbosity_gap_ood": "verbosity_gap_ood.{m}",
    "separation": "separation.{m}",
    "accuracy_complex": "accuracy.complex.{m}",
    "reward_complex": "reward.complex.{m}",
    "reward_simple": "reward.simple.{m}",
}
GAP_QUANTITIES = tuple(GAP_KEYS)


def per_seed_figures(
    scores: Mapping[str, Mapping[str, Mapping[str, list[float]]]],
    token_cost: float,
    verbose: Mapping[str, Sequence[bool]] | None = None,
) -> dict[str, float]:
    """One seed's figures (flat keys, no ``_se``) from its per-item scores.

    Args:
        scores: per method, per split, the per-item lists of
            :class:`~icml26.adaptive_reasoning.evaluate.MethodScores`.
        token_cost: the reward's cost per reasoning token.
        verbose: per split, whether each item is worded verbosely (``verbosity_gap_ood``
            needs the ``ood`` split's; omitted: no such key).

    Returns:
        The seed's flat figures.
    """
    out: dict[str, float] = {}
    for m, by_split in scores.items():
        items: dict[str, list[float]] = {"correct": [], "think": [], "tokens": [], "ops": []}
        reasoning: list[float] = []
        for s, sc in by_split.items():
            out[f"accuracy.{s}.{m}"] = float(np.mean(sc["correct"]))
            out[f"think_rate.{s}.{m}"] = float(np.mean(sc["think"]))
            out[f"tokens.{s}.{m}"] = float(np.mean(sc["tokens"]))
            for k in items:
                items[k] += list(sc[k])
            reasoning += list(sc["reasoning"])
        correct, think, ops = (np.asarray(items[k], float) for k in ("correct", "think", "ops"))
        out[f"accuracy.all.{m}"] = float(correct.mean())
        out[f"tokens.all.{m}"] = float(np.mean(items["tokens"]))
        out[f"reward.all.{m}"] = float(correct.mean() - token_cost * np.mean(reasoning))
        hard, easy = ops >= 3, ops == 1
        reward = correct - token_cost * np.asarray(reasoning, float)
        for part, mask in (("complex", hard), ("simple", easy)):
            out[f"accuracy.{part}.{m}"] = float(correct[mask].mean()) if mask.any() else np.nan
            out[f"reward.{part}.{m}"] = float(reward[mask].mean()) if mask.any() else np.nan
        out[f"separation.{m}"] = (
            float(think[hard].mean() - think[easy].mean()) if hard.any() and easy.any() else np.nan
        )
        if "simple_verbose" in by_split and "simple_concise" in by_split:
            out[f"verbosity_gap.{m}"] = (
                out[f"think_rate.simple_verbose.{m}"] - out[f"think_rate.simple_concise.{m}"]
            )
        if verbose is not None and "ood" in by_split and "ood" in verbose:
            ood = by_split["ood"]
            wordy = np.asarray(verbose["ood"], bool)
            if len(wordy) != len(ood["think"]):
                raise ValueError(
                    f"verbose['ood'] has {len(wordy)} flags for {len(ood['think'])} ood items"
                )
            think_ood, simple_ood = np.asarray(ood["think"], float), np.asarray(ood["ops"]) == 1
            if (simple_ood & wordy).any() and (simple_ood & ~wordy).any():
                out[f"verbosity_gap_ood.{m}"] = float(
                    think_ood[simple_ood & wordy].mean() - think_ood[simple_ood & ~wordy].mean()
                )
    methods = list(scores)
    for q in GAP_QUANTITIES:
        for m in methods:
            for b in methods:
                a_key, b_key = _key(q, m), _key(q, b)
                if a_key in out and b_key in out:
                    out[f"gap.{q}.{m}.{b}"] = out[a_key] - out[b_key]
    return out


def _key(q: str, m: str) -> str:
    return GAP_KEYS[q].format(m=m)


def run_metrics(
    seeds: list[dict[str, float]],
    *,
    data: Mapping[str, float],
    histories: Mapping[str, list[dict[str, float]]],
) -> dict[str, Any]:
    """Means over seeds (with ``*_se`` keys), the data report and the GRPO logs' last step.

    Args:
        seeds: :func:`per_seed_figures` of each seed.
        data: the disjointness report (``data.*`` keys).
        histories: TRL's per-step log of each seed's GRPO runs, by ``"<method>.s<seed>"``.

    Returns:
        The flat metrics.
    """
    m: dict[str, Any] = {f"data.{k}": float(v) for k, v in data.items()}
    m["seeds"] = float(len(seeds))
    for key in seeds[0]:
        values = [s[key] for s in seeds if key in s and np.isfinite(s[key])]
        if len(values) != len(seeds):
            continue
        stat = mean_se(values) if len(values) > 1 else None
        head, _, rest = key.partition(".")
        m[key] = float(np.mean(values))
        m[f"{head}_se.{rest}"] = float(stat.se) if stat is not None else 0.0
    for name, history in histories.items():
        if history:
            last = history[-1]
            for k in ("reward", "rewards/correct/mean", "rewards/reasoning_cost/mean"):
                if k in last:
                    m[f"grpo_last.{k.replace('/', '_')}.{name}"] = float(last[k])
    return m


def large_metrics(
    scores: Mapping[str, Mapping[str, Mapping[str, list[float]]]], token_cost: float
) -> dict[str, float]:
    """The pretrained model's figures (one seed, no gaps) as ``large.*`` keys."""
    figures = per_seed_figures(scores, token_cost)
    return {f"large.{k}": v for k, v in figures.items() if not k.startswith("gap.")}
