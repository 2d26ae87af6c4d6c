"""The README's results tables, generated from a run's ``results.json`` (``icml26 readme``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from icml26.magic.config import DEFENDERS

__all__ = ["readme_tables"]

_ASR = ("seed_ops", "heldout_combos", "unseen_ops", "adaptive", "plain")


def _cell(m: Mapping[str, Any], key: str) -> str:
    v, se = m.get(key), m.get(f"se.{key}")
    if v is None or not math.isfinite(v):
        return "n/a"
    return f"{v:.3f}" if se is None else f"{v:.3f} ± {se:.3f}"


def _count(v: float | None) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.0f}"


def readme_tables(results: Mapping[str, Any]) -> str:
    """Every defender's attack success and benign compliance, and both attackers' figures
    (means ± standard errors over seeds).

    Args:
        results: a ``results.json`` of a ``magic`` run.

    Returns:
        Markdown tables (empty when the run is a bench).
    """
    m = results.get("metrics", {})
    if results.get("kind", "run") != "run" or "seeds" not in m:
        return ""
    defenders = [d for d in DEFENDERS if f"asr.unseen_ops.{d}" in m]
    free_text = "attack_turns.attacker" in m
    kind = "free-text multi-turn attacker" if free_text else "operator-composition attacker"
    lines = [
        f"Means ± standard errors over {int(m['seeds'])} seeds ({kind}; replies judged by "
        "the refusal-marker rule).",
        "",
        "| defender | "
        + " | ".join(f"ASR {e}" for e in _ASR)
        + " | benign all | defender steps | defence prompts |",
        "|---" * (len(_ASR) + 4) + "|",
    ]
    for d in defenders:
        cells = [_cell(m, f"asr.{e}.{d}") for e in _ASR]
        cells += [
            _cell(m, f"benign_compliance.all.{d}"),
            f"{m.get(f'defender_steps.{d}', 0):.1f}",
            _count(m.get(f"defence_prompts.{d}")),
        ]
        lines.append(f"| `{d}` | " + " | ".join(cells) + " |")
    extra = ["novelty (4-gram distance)", "turns"] if free_text else []
    head = ["novel strategy rate", "attack success", "broken intents", *extra]
    lines += [
        "",
        "| attacker (vs MAGIC's defender) | " + " | ".join(head) + " |",
        "|---" * (len(head) + 1) + "|",
    ]
    for a in ("attacker", "attacker_sft"):
        keys = [
            f"novel_strategy_rate.{a}",
            f"attack_success_vs_magic.{a}",
            f"intent_broken_rate.{a}",
        ]
        keys += [f"novelty.{a}", f"attack_turns.{a}"] if free_text else []
        cells = [_cell(m, k) for k in keys]
        defined = m.get(f"defined_seeds.novel_strategy_rate.{a}")
        if defined is not None and defined < m["seeds"]:  # no success on some seeds
            cells[0] += f" (defined on {int(defined)}/{int(m['seeds'])} seeds)"
        lines.append(f"| `{a}` | " + " | ".join(cells) + " |")
    return "\n".join(lines + _judge(m) + _costs(m))


def _judge(m: Mapping[str, Any]) -> list[str]:
    """The judges' agreement with the labelled set's ground truth."""
    rows = [j for j in ("marker", "rubric") if f"judge_agreement.{j}" in m]
    if not rows:
        return []
    kinds = ("compliance", "apology_compliance", "refusal", "soft_refusal", "off_intent")
    out = [
        "",
        f"| judge (labelled set, {_count(m.get('judge_items'))} items) | agreement | kappa | "
        "unread | " + " | ".join(kinds) + " |",
        "|---" * (len(kinds) + 4) + "|",
    ]
    for j in rows:
        cells = [_cell(m, f"judge_{k}.{j}") for k in ("agreement", "kappa", "unread")]
        cells += [_cell(m, f"judge_agreement.{j}.{k}") for k in kinds]
        out.append(
            f"| {'marker rule' if j == 'marker' else 'rubric judge'} | " + " | ".join(cells) + " |"
        )
    return out


def _costs(m: Mapping[str, Any]) -> list[str]:
    """Each defender's finished seeds and measured wall seconds (a skipped one's too)."""
    asked = [d for d in DEFENDERS if f"completed_seeds.{d}" in m]
    if not asked:
        return []
    out = [
        "",
        "| defender | seeds finished | wall s per seed (stage) | wall s per GRPO step | in the table |",
        "|---|---|---|---|---|",
    ]
    for d in asked:
        pooled = f"asr.unseen_ops.{d}" in m
        out.append(
            f"| `{d}` | {_count(m.get(f'completed_seeds.{d}'))} | "
            f"{_num(m.get(f'method_seconds.{d}'))} | {_num(m.get(f'train_step_seconds.{d}'))} | "
            f"{'yes' if pooled else 'no: did not fit the budget (claims undecided)'} |"
        )
    out.append(
        f"\nWarm start {_num(m.get('warm_start_seconds'))} s wall per seed; judge stage "
        f"{_num(m.get('judge_seconds'))} s."
    )
    return out


def _num(v: float | None) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.0f}"
