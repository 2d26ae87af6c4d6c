"""The run's tables: ``curves.json`` (mean regret curves), ``regret_table.md`` (final regret
± s.e. and invalid-reply rate per environment and policy) and ``llm_samples.json`` (the first
replies of every LLM policy, for reading)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.shared import RunDir, atomic_write_text

__all__ = ["regret_table", "write_tables"]


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
