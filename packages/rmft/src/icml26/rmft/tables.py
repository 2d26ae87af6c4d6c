"""The run's tables: ``curves.json`` (mean regret curves), ``regret_table.md`` (final regret
± s.e. and invalid-reply rate per environment and policy) and ``llm_samples.json`` (the first
replies of every LLM policy, for reading); :func:`readme_tables`, the LLM study's figures per
iteration with the invalid-reply rate beside them, for ``icml26 readme``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from icml26.shared import RunDir, atomic_write_text

__all__ = ["readme_tables", "regret_table", "write_tables"]


def regret_table(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """A Markdown table: environment, policy, final regret ± s.e., invalid-reply rate.

    Args:
        results: ``env -> policy -> summary`` (:func:`icml26.rmft.study.summarise`).

    Returns:
        The table's text.
    """
    lines = ["| env | policy | regret at T | s.e. | invalid |", "|---|---|---:|---:|---:|"]
    for env, policies in results.items():
        for policy, s in policies.items():
            lines.append(
                f"| {env} | {policy} | {s['regret']:.3f} | {s['se']:.3f} | {s['invalid']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def write_tables(run_dir: RunDir, results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
    """Write the module docstring's files into ``run_dir``."""
    run_dir.write_json(
        "curves.json",
        {env: {p: s["curve"] for p, s in pol.items()} for env, pol in results.items()},
    )
    atomic_write_text(run_dir.path / "regret_table.md", regret_table(results))
    samples = [
        {"policy": p, "env": env, **reply}
        for env, pol in results.items()
        for p, s in pol.items()
        for reply in s.get("samples", [])
    ]
    if samples:
        run_dir.write_json("llm_samples.json", samples)


def _num(m: Mapping[str, Any], key: str, fmt: str = ".3f") -> str:
    v = m.get(key)
    return "n/a" if v is None or not math.isfinite(v) else format(v, fmt)


def _regret(m: Mapping[str, Any], env: str, policy: str) -> str:
    v = _num(m, f"regret.{env}.{policy}")
    return v if v == "n/a" else f"{v} ± {_num(m, f'regret_se.{env}.{policy}')}"


def readme_tables(results: Mapping[str, Any]) -> str:
    """The LLM study per iteration: final regret (± s.e.) sampled and greedy, and beside it
    the invalid-reply rate of the evaluation and of the rollouts each loop selected from, the
    power for a true 10% gain and the LLM stages' wall time.

    Args:
        results: a ``results.json`` of an ``rmft`` run.

    Returns:
        Markdown (empty when the run has no local LLM study, or is a bench).
    """
    m, config = results.get("metrics", {}), results.get("config", {})
    env = config.get("llm_env", "")
    if results.get("kind", "run") != "run" or f"regret.{env}.llm_base" not in m:
        return ""
    n = int(config.get("llm_iterations", 0))
    rows = [("base (iteration 0)", "llm_base", "llm_base_greedy", "0", "")]
    for i in range(1, n + 1):
        greedy = "llm_rmft_greedy_final" if i == n else ""
        rows.append((f"RMFT iteration {i}", f"llm_rmft_iter{i}", greedy, str(i), f"llm_iter{i}"))
    rows.append(
        (
            "random selection (control)",
            "llm_random_select_final",
            "llm_random_select_greedy_final",
            "",
            f"llm_random_iter{n}",
        )
    )
    lines = [
        f"LLM study: `{config.get('llm_model', '')}` on `{env}`, "
        f"{_num(m, 'eval_instances.llm', '.0f')} evaluation instances (paired; sampled at "
        f"temperature {config.get('llm_temperature')}, greedy at 0). Invalid: share of replies "
        f"without a valid decision ({config.get('llm_parse', 'lenient')} parse; a random arm is "
        "played and counted in the regret); lenient: the lenient parse's share on the same "
        f"replies; capped: share cut at {config.get('llm_max_tokens')} tokens (sampled).",
        "",
        "| policy | regret sampled | regret greedy | invalid sampled (drop z) | invalid greedy "
        "| lenient | capped | invalid, rollouts | invalid, kept |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, sampled, greedy, it, stage in rows:
        inv = _num(m, f"invalid_rate_by_iteration.{it}") if it else "n/a"
        if inv == "n/a":
            inv = _num(m, f"invalid_action_rate.{sampled}")
        if it and it != "0":
            inv += f" ({_num(m, f'invalid_drop_z.{it}', '.2f')})"
        cells = [
            _regret(m, env, sampled),
            _regret(m, env, greedy) if greedy else "",
            inv,
            _num(m, f"invalid_action_rate.{greedy}") if greedy else "",
            _num(m, f"invalid_lenient_rate.{sampled}"),
            _num(m, f"truncated_rate.{sampled}"),
            _num(m, f"train.{stage}.rollout_invalid") if stage else "",
            _num(m, f"train.{stage}.selected_invalid") if stage else "",
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    power = ", ".join(
        f"{c} {_num(m, f'power_by_axis.train.{c}', '.2f')} (detectable ratio "
        f"{_num(m, f'min_detectable_ratio_by_axis.train.{c}')})"
        for c in ("llm_base", "llm_base_greedy", "llm_random_select", "llm_random_select_greedy")
    )
    wall = sum(
        v for k, v in m.items() if k.startswith("seconds.llm_") and isinstance(v, int | float)
    )
    vs_random = _num(m, "invalid_drop_z_by_control.llm_random_select.llm_rmft", ".2f")
    lines += [
        "",
        f"Invalid-rate drop of RMFT against the random-selection loop: paired z {vs_random}. "
        f"Power for a true 10% lower regret, per control: {power}; a regret claim that misses "
        f"is undecided at power <= 0.5. LLM stages: {wall:.0f} s wall.",
    ]
    return "\n".join(lines)
