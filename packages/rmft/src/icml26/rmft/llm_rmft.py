"""Iterative RMFT for LLM policies: roll out with the model's own reasoning, keep the lowest-
regret episodes, LoRA-fine-tune on their transcripts (reasoning text included) with the shared
assistant-only SFT (:func:`icml26.shared.llm.sft.sft`: the loss is on each reply and its
end-of-turn token; steps whose reply was malformed are dropped before, as they carry no
decision the model made)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml26.rmft.envs import EnvSpec, sample_instances
from icml26.rmft.llm_model import as_conversations
from icml26.rmft.llm_policy import LLMPolicy, transcripts
from icml26.rmft.rmft import IterationStats
from icml26.rmft.rollouts import Trajectories, rollout
from icml26.rmft.selection import SELECTIONS, select

__all__ = [
    "LLMSettings",
    "llm_rmft_iteration",
    "select_llm_transcripts",
    "write_openai_finetune_jsonl",
]


@dataclass(frozen=True)
class LLMSettings:
    """One LLM RMFT iteration's knobs."""

    n_instances: int = 8
    rollouts_per_instance: int = 4
    keep_per_instance: int = 1
    steps: int = 20
    lr: float = 2e-4
    batch_size: int = 8
    temperature: float = 0.7
    max_tokens: int = 48
    selection: str = "lowest_regret"

    def __post_init__(self) -> None:
        if self.n_instances < 1 or self.rollouts_per_instance < 1 or self.steps < 0:
            raise ValueError(f"n_instances, rollouts_per_instance >= 1 and steps >= 0: {self}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if not 1 <= self.keep_per_instance <= self.rollouts_per_instance:
            raise ValueError(
                f"keep_per_instance must be in 1..{self.rollouts_per_instance}, got {self.keep_per_instance}"
            )
        if self.temperature <= 0 or self.max_tokens < 1:
            raise ValueError(f"temperature must be > 0 and max_tokens >= 1: {self}")


def select_llm_transcripts(
    trajs: Trajectories, settings: LLMSettings, rng: np.random.Generator | None = None
) -> tuple[np.ndarray, list[tuple[list[dict[str, str]], str]]]:
    """Indices of the kept episodes (``settings.selection``; ``rng`` draws the random one)
    and their valid ``(messages, reply)`` steps."""
    if rng is None and settings.selection == "random":
        raise ValueError("random selection needs an rng")
    keep = select(
        settings.selection,
        trajs.final_regret,
        settings.keep_per_instance,
        group_size=settings.rollouts_per_instance,
        rng=rng if rng is not None else np.random.default_rng(0),
    )
    kept = [[s for s in trajs.records[i] if s["valid"] and s["reply"].strip()] for i in keep]
    return keep, transcripts(kept)


def llm_rmft_iteration(
    backend: Any,
    spec: EnvSpec,
    settings: LLMSettings,
    rng: np.random.Generator,
    *,
    scenario: str = "buttons",
) -> tuple[IterationStats, list[tuple[list[dict[str, str]], str]]]:
    """One iteration in place on ``backend.model`` (a peft LoRA model): rollouts, selection,
    LoRA fine-tuning. Returns the stats and the transcripts trained on.

    With no valid step among the kept episodes, nothing is trained (losses are NaN)."""
    m = settings.rollouts_per_instance
    instances = sample_instances(spec, settings.n_instances, rng).repeat(m)
    policy = LLMPolicy(
        backend, scenario=scenario, max_tokens=settings.max_tokens, temperature=settings.temperature
    )
    trajs = rollout(policy, instances, rng)
    keep, pairs = select_llm_transcripts(trajs, settings, rng)
    before = after = float("nan")
    if pairs:
        from icml26.shared.llm.sft import SFTSettings, completion_nll, encode_chats, sft

        conversations = as_conversations(pairs)
        examples = encode_chats(backend.tokenizer, conversations)
        before = completion_nll(backend.model, backend.tokenizer, examples)
        sft(
            backend.model,
            backend.tokenizer,
            conversations,
            SFTSettings(
                steps=settings.steps, lr=settings.lr, batch_size=settings.batch_size, engine="loop"
            ),
            rng=rng,
        )
        after = completion_nll(backend.model, backend.tokenizer, examples)
    stats = IterationStats(
        rollout_regret=float(trajs.final_regret.mean()),
        selected_regret=float(trajs.final_regret[keep].mean()),
        loss_before=before,
        loss_after=after,
    )
    return stats, pairs


def write_openai_finetune_jsonl(
    pairs: list[tuple[list[dict[str, str]], str]], path: str | Path
) -> Path:
    """Selected transcripts in the chat fine-tuning JSONL format of OpenAI-compatible
    providers (``{"messages": [..., {"role": "assistant", "content": reply}]}`` per line): the
    route to RMFT for closed-weight models such as GPT-4o mini."""
    from icml26.shared import atomic_write_text

    lines = [
        json.dumps({"messages": [*messages, {"role": "assistant", "content": reply}]})
        for messages, reply in pairs
    ]
    path = Path(path)
    atomic_write_text(path, "\n".join(lines) + ("\n" if lines else ""))
    return path
