"""Iterative RMFT for LLM policies: roll out with the model's own reasoning, keep the lowest-
regret episodes, LoRA-fine-tune on their transcripts (reasoning text included) with the shared
assistant-only SFT (:func:`icml26.shared.llm.sft.sft`, TRL's ``SFTTrainer`` by default: the
loss is on each reply and its end-of-turn token). Rollouts are ranked by
:func:`~icml26.rmft.selection.selection_regret`: a malformed reply costs the worst arm's regret
(or ends the episode), so a random fallback that happened to pay is never selected; malformed
steps are also dropped from the training set, as they carry no decision the model made."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml26.rmft.config import check_positive
from icml26.rmft.envs import EnvSpec, sample_instances
from icml26.rmft.llm_model import as_conversations
from icml26.rmft.llm_policy import PARSE_MODES, LLMPolicy, transcripts
from icml26.rmft.rmft import IterationStats
from icml26.rmft.rollouts import Trajectories, rollout
from icml26.rmft.selection import INVALID_RULES, SELECTIONS, select, selection_regret

__all__ = [
    "LLMSettings",
    "llm_iteration_stats",
    "llm_rmft_iteration",
    "select_llm_transcripts",
    "write_openai_finetune_jsonl",
]


@dataclass(frozen=True)
class LLMSettings:
    """One LLM RMFT iteration's knobs.

    Args:
        n_instances: fresh instances rolled out per iteration.
        rollouts_per_instance: rollouts per instance (the group selection ranks).
        keep_per_instance: rollouts kept per instance.
        steps: SFT optimiser steps.
        lr: SFT learning rate (LoRA).
        batch_size: SFT batch size.
        temperature: rollout sampling temperature (> 0).
        max_tokens: reply length cap.
        selection: ``"lowest_regret"`` (RMFT) or ``"random"`` (the ablation).
        invalid: how a malformed reply counts in selection
            (:data:`~icml26.rmft.selection.INVALID_RULES`).
        engine: the shared SFT engine, ``"trl"`` (``SFTTrainer``) or ``"loop"``.
        parse: how replies are read (:func:`~icml26.rmft.llm_policy.parse_action`):
            ``"strict"`` (only the requested ``Action: <n>`` line is a valid decision) or
            ``"lenient"`` (the ablation).

    Raises:
        ValueError: a value out of range or an unknown rule.
    """

    n_instances: int = 8
    rollouts_per_instance: int = 4
    keep_per_instance: int = 1
    steps: int = 20
    lr: float = 2e-4
    batch_size: int = 8
    temperature: float = 0.7
    max_tokens: int = 48
    selection: str = "lowest_regret"
    invalid: str = "worst"
    engine: str = "trl"
    parse: str = "strict"

    def __post_init__(self) -> None:
        if self.n_instances < 1 or self.rollouts_per_instance < 1 or self.steps < 0:
            raise ValueError(f"n_instances, rollouts_per_instance >= 1 and steps >= 0: {self}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if not 1 <= self.keep_per_instance <= self.rollouts_per_instance:
            raise ValueError(
                f"keep_per_instance must be in 1..{self.rollouts_per_instance}, got {self.keep_per_instance}"
            )
        if self.invalid not in INVALID_RULES:
            raise ValueError(f"invalid must be one of {INVALID_RULES}, got {self.invalid!r}")
        if self.engine not in ("trl", "loop"):
            raise ValueError(f"engine must be 'trl' or 'loop', got {self.engine!r}")
        if self.parse not in PARSE_MODES:
            raise ValueError(f"parse must be one of {PARSE_MODES}, got {self.parse!r}")
        check_positive(self, "temperature", "lr", "max_tokens")


def select_llm_transcripts(
    trajs: Trajectories, settings: LLMSettings, rng: np.random.Generator
) -> tuple[np.ndarray, list[tuple[list[dict[str, str]], str]]]:
    """The kept episodes and their valid steps.

    Args:
        trajs: the rollouts, ``settings.rollouts_per_instance`` consecutive ones per instance.
        settings: the selection rule, how many to keep and how invalid replies count.
        rng: breaks ties and draws the random selection (required: no hidden fixed seed).

    Returns:
        ``(indices, pairs)``: the kept episodes' indices and their valid
        ``(messages, reply)`` steps.

    Raises:
        TypeError: ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    keep = select(
        settings.selection,
        selection_regret(trajs, settings.invalid),
        settings.keep_per_instance,
        group_size=settings.rollouts_per_instance,
        rng=rng,
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
    LoRA fine-tuning.

    Args:
        backend: a ``LocalChatModel`` whose model carries LoRA adapters.
        spec: the training environment (a Bernoulli bandit).
        settings: the iteration's knobs.
        rng: the iteration's random stream (instances, sampling, selection, SFT order).
        scenario: how the bandit is put into words (``"buttons"`` or ``"restaurants"``).

    Returns:
        ``(stats, pairs)``: the iteration's statistics (with the invalid-reply rates) and the
        transcripts trained on. With no valid step among the kept episodes nothing is trained
        (the losses are NaN).

    Raises:
        TypeError: ``backend`` has no local ``model`` and ``tokenizer`` to fine-tune (an
            endpoint's ``ChatClient``: use :func:`select_llm_transcripts` and
            :func:`write_openai_finetune_jsonl` to fine-tune at the provider), refused before
            any rollout.
    """
    if not (hasattr(backend, "model") and hasattr(backend, "tokenizer")):
        raise TypeError(
            f"llm_rmft_iteration fine-tunes a local model: {type(backend).__name__} has no "
            "model and tokenizer (an endpoint? roll out with LLMPolicy, then "
            "select_llm_transcripts and write_openai_finetune_jsonl for the provider)"
        )
    m = settings.rollouts_per_instance
    instances = sample_instances(spec, settings.n_instances, rng).repeat(m)
    policy = LLMPolicy(
        backend,
        scenario=scenario,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        parse=settings.parse,
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
                steps=settings.steps,
                lr=settings.lr,
                batch_size=settings.batch_size,
                engine=settings.engine,
            ),
            rng=rng,
        )
        after = completion_nll(backend.model, backend.tokenizer, examples)
    return llm_iteration_stats(trajs, keep, settings, before, after), pairs


def llm_iteration_stats(
    trajs: Trajectories, keep: np.ndarray, settings: LLMSettings, before: float, after: float
) -> IterationStats:
    """An LLM iteration's statistics: ``selected_regret`` is the penalised regret the
    selection ranked, ``selected_played_regret`` what the kept rollouts played.

    Args:
        trajs: the iteration's rollouts.
        keep: the kept episodes' indices.
        settings: the iteration's knobs (``invalid`` decides the penalty).
        before: NLL of the kept transcripts before fine-tuning.
        after: NLL after fine-tuning.

    Returns:
        The :class:`~icml26.rmft.rmft.IterationStats`.
    """
    return IterationStats(
        rollout_regret=float(trajs.final_regret.mean()),
        selected_regret=float(selection_regret(trajs, settings.invalid)[keep].mean()),
        selected_played_regret=float(trajs.final_regret[keep].mean()),
        loss_before=before,
        loss_after=after,
        rollout_invalid=float(trajs.invalid.mean()),
        selected_invalid=float(trajs.invalid[keep].mean()),
    )


def write_openai_finetune_jsonl(
    pairs: list[tuple[list[dict[str, str]], str]], path: str | Path
) -> Path:
    """Selected transcripts in the chat fine-tuning JSONL format of OpenAI-compatible
    providers: the route to RMFT for closed-weight models such as GPT-4o mini.

    Args:
        pairs: ``(messages, reply)`` decisions.
        path: the file to write (atomically).

    Returns:
        ``path``; each line is ``{"messages": [..., {"role": "assistant", "content": reply}]}``.
    """
    from icml26.shared import atomic_write_text

    lines = [
        json.dumps({"messages": [*messages, {"role": "assistant", "content": reply}]})
        for messages, reply in pairs
    ]
    path = Path(path)
    atomic_write_text(path, "\n".join(lines) + ("\n" if lines else ""))
    return path
