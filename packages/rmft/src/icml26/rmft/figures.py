"""The run's figures: regret curves and regret against RMFT iteration (Okabe-Ito colours,
one per policy across panels; controls dashed)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from icml26.rmft.config import RunConfig
from icml26.shared import PALETTE, RunDir, figure

__all__ = ["plot_figures"]

_BASELINE_STYLE = {
    "ucb": ":",
    "ts": ":",
    "greedy": "--",
    "exp3": "-.",
    "hedge": "-.",
    "random": ":",
}


def _colour(policy: str) -> str:
    """One colour per policy across every panel (Okabe-Ito)."""
    fixed = {"ucb": 0, "ts": 1, "greedy": 2, "exp3": 3, "hedge": 6, "random": 6}
    if policy in fixed:
        return PALETTE[fixed[policy]]
    if policy.endswith("base"):
        return PALETTE[4]
    if policy.endswith("base_greedy"):
        return PALETTE[4]  # the base's colour, dashed
    if policy.endswith(("random_select_final", "random_select_greedy_final")):
        return PALETTE[5]
    return PALETTE[7] if "rmft" in policy else PALETTE[5]


_control_names = {
    f"{p}{c}"
    for p in ("", "llm_")
    for c in (
        "base_greedy",
        "random_select_final",
        "random_select_greedy_final",
        "rmft_greedy_final",
    )
}


def _final_policies(config: RunConfig) -> set[str]:
    return {
        "base",
        "llm_base",
        f"rmft_iter{config.rmft_iterations}",
        f"llm_rmft_iter{config.llm_iterations}",
        *_control_names,
    }


def plot_figures(
    run_dir: RunDir, config: RunConfig, results: Mapping[str, Mapping[str, Any]]
) -> None:
    """``regret_curves`` (cumulative regret per environment, the finals, controls and
    baselines) and ``regret_vs_iteration`` (regret at T against RMFT iteration, ±1 s.e.).

    Args:
        run_dir: the run folder (plots go to its plot paths).
        config: the run's config (iteration counts).
        results: ``env -> policy -> summary``.
    """
    envs = list(results)
    cols = min(3, len(envs))
    rows = math.ceil(len(envs) / cols)
    shown = _final_policies(config)
    with figure(
        run_dir.plot_path("regret_curves"),
        rows,
        cols,
        title="Cumulative regret (mean over instances)",
    ) as (_fig, axes):
        flat = np.atleast_1d(axes).ravel()
        for ax, env in zip(flat, envs, strict=False):
            for policy, s in results[env].items():
                if policy not in shown and policy not in _BASELINE_STYLE:
                    continue
                curve = np.asarray(s["curve"])
                style = _BASELINE_STYLE.get(policy, "--" if policy in _control_names else "-")
                lw = 2.2 if "rmft" in policy else 1.3
                x = np.arange(1, len(curve) + 1)
                ax.plot(x, curve, style, color=_colour(policy), label=policy, lw=lw)
            ax.set_title(env, fontsize=9)
            ax.set_xlabel("t")
            ax.set_ylabel("cumulative regret")
            ax.legend(fontsize=6)
        for ax in flat[len(envs) :]:
            ax.axis("off")
    _plot_vs_iteration(run_dir, config, results, rows, cols)


def _plot_vs_iteration(
    run_dir: RunDir,
    config: RunConfig,
    results: Mapping[str, Mapping[str, Any]],
    rows: int,
    cols: int,
) -> None:
    envs = list(results)
    with figure(
        run_dir.plot_path("regret_vs_iteration"),
        rows,
        cols,
        title="Regret at T vs RMFT iteration (0 = base; ±1 s.e.)",
    ) as (_fig, axes):
        flat = np.atleast_1d(axes).ravel()
        for ax, env in zip(flat, envs, strict=False):
            res = results[env]
            for base, prefix, n in (
                ("base", "rmft_iter", config.rmft_iterations),
                ("llm_base", "llm_rmft_iter", config.llm_iterations),
            ):
                if base not in res:
                    continue
                its = [0] + [i for i in range(1, n + 1) if f"{prefix}{i}" in res]
                names = [base] + [f"{prefix}{i}" for i in its[1:]]
                ys = np.array([res[p]["regret"] for p in names])
                es = np.array([res[p]["se"] for p in names])
                label = "LLM (LoRA RMFT)" if base == "llm_base" else "numerical Transformer"
                ax.errorbar(
                    its,
                    ys,
                    yerr=es,
                    marker="o",
                    capsize=3,
                    color=_colour(prefix),
                    label=label,
                )
                ax.set_xticks(its)
            for policy, s in res.items():
                if policy in _control_names:  # the controls, dashed in their own colours
                    ax.axhline(s["regret"], ls="--", lw=1.4, color=_colour(policy), label=policy)
                if policy in _BASELINE_STYLE:
                    ax.axhline(
                        s["regret"],
                        ls=_BASELINE_STYLE[policy],
                        lw=1,
                        color=_colour(policy),
                        label=policy,
                    )
            ax.set_title(env, fontsize=9)
            ax.set_xlabel("RMFT iteration")
            ax.set_ylabel("regret at T")
            ax.legend(fontsize=6)
        for ax in flat[len(envs) :]:
            ax.axis("off")
