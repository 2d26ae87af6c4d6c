"""Evaluation: attack success and benign compliance of a defender on fixed attack sets, the
attacker's novel compositions, and the attack success of attackers sampled against a
defender.

* ``asr.<eval>.<defender>``: share of the set's harmful rewrites the defender complied with
  (greedy replies, the oracle judge);
* ``benign_compliance.<eval>.<defender>``: share of the same rewrites of the benign
  look-alikes it answered;
* ``novel_strategy_rate``: among an attacker's successful attacks, the share whose
  composition is not in the seed pool (operator attacker), or whose text is farther than
  :data:`~icml26.magic.freetext.NOVELTY_THRESHOLD` (character 4-gram Jaccard distance) from
  every seed-pool rewrite of its intent (free-text attacker: :func:`sample_free_text`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.magic.freetext import (
    NOVELTY_THRESHOLD,
    Dialogue,
    ngram_novelty,
    play,
    seed_rewrites,
)
from icml26.magic.game import EvalSet, SafetyGame, attacker_messages
from icml26.magic.intents import Intent
from icml26.magic.judge import is_refusal
from icml26.magic.operators import format_ops
from icml26.magic.policies import Policies, replies

__all__ = [
    "AttackSample",
    "DefenceScore",
    "play_free_text",
    "sample_attacks",
    "sample_free_text",
    "score_defender",
    "summarise_dialogues",
]


@dataclass(frozen=True)
class DefenceScore:
    asr: float
    benign_compliance: float
    n_harmful: int
    n_benign: int


def score_defender(
    policies: Policies, game: SafetyGame, eval_set: EvalSet, adapter: str, *, max_tokens: int
) -> DefenceScore:
    """Greedy replies of ``adapter`` to every prompt of ``eval_set``, judged by the oracle.

    Args:
        policies: the model and its adapters.
        game: the game (its oracle judge).
        eval_set: the harmful rewrites and the same rewrites of their look-alikes.
        adapter: the defender's adapter name.
        max_tokens: reply length.

    Returns:
        The :class:`DefenceScore` (attack success rate, benign compliance, counts).
    """
    attacks = [*eval_set.harmful, *eval_set.benign]
    out = replies(policies, [a.conversation for a in attacks], adapter, max_tokens=max_tokens)
    verdicts = game.verdicts(attacks, out)
    h = verdicts[: len(eval_set.harmful)]
    b = verdicts[len(eval_set.harmful) :]
    return DefenceScore(
        asr=float(np.mean([v.attack_success for v in h])) if h else float("nan"),
        benign_compliance=float(np.mean([not v.refused for v in b])) if b else float("nan"),
        n_harmful=len(h),
        n_benign=len(b),
    )


@dataclass
class AttackSample:
    """Attacks sampled from an attacker against one defender."""

    attempts: int = 0
    broken: int = 0
    successes: int = 0
    novel_successes: int = 0
    success_by_composition: Counter[str] = field(default_factory=Counter)
    tried_by_composition: Counter[str] = field(default_factory=Counter)
    novelty: list[float] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)

    @property
    def mean_novelty(self) -> float:
        """Mean distance of the successful free-text attacks to their seed-pool rewrites
        (NaN with no success, or for the operator attacker)."""
        return float(np.mean(self.novelty)) if self.novelty else float("nan")

    @property
    def asr(self) -> float:
        return self.successes / self.attempts if self.attempts else float("nan")

    @property
    def novel_strategy_rate(self) -> float:
        """Share of successful attacks whose composition was never in the seed pool (NaN when
        there is no success: the share is undefined, not zero)."""
        return self.novel_successes / self.successes if self.successes else float("nan")

    @property
    def broken_rate(self) -> float:
        return self.broken / self.attempts if self.attempts else float("nan")


def sample_attacks(
    policies: Policies,
    game: SafetyGame,
    intents: Sequence[Intent],
    *,
    attacker: str,
    defender: str,
    samples_per_intent: int,
    attack_tokens: int,
    reply_tokens: int,
    temperature: float = 1.0,
    seed: int = 0,
) -> AttackSample:
    """``samples_per_intent`` sampled rewrites of each intent by ``attacker``, answered
    greedily by ``defender``; a broken rewrite counts as a failed attempt.

    Args:
        policies: the model and its adapters.
        game: the game.
        intents: the harmful intents to rewrite.
        attacker: the attacker's adapter name.
        defender: the defender's adapter name.
        samples_per_intent: attacks sampled per intent.
        attack_tokens: completion length (tokens) of an attack.
        reply_tokens: completion length (tokens) of a reply.
        temperature: the attacker's sampling temperature.
        seed: torch's sampling seed for this draw (torch's global random state is left
            as it was: the draw runs under :func:`torch.random.fork_rng`).

    Returns:
        The :class:`AttackSample` (successes, novel successes, compositions tried).
    """
    import torch

    rows = [it for it in intents for _ in range(samples_per_intent)]
    # Sample under a forked RNG: the draw is fixed by ``seed`` without reseeding torch's
    # global stream (a probe between training rounds must not reset the training stream).
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        texts = replies(
            policies,
            [attacker_messages(it) for it in rows],
            attacker,
            max_tokens=attack_tokens,
            temperature=temperature,
        )
    attacks = [game.read_attack(it, t) for it, t in zip(rows, texts, strict=True)]
    valid = [a for a in attacks if a is not None]
    answers = replies(policies, [a.conversation for a in valid], defender, max_tokens=reply_tokens)
    seed_keys = {format_ops(ops) for ops in game.seed_pool}
    out = AttackSample(attempts=len(rows), broken=len(rows) - len(valid))
    for a, v in zip(valid, game.verdicts(valid, answers), strict=True):
        out.tried_by_composition[a.key] += 1
        if v.attack_success:
            out.successes += 1
            out.success_by_composition[a.key] += 1
            if a.key not in seed_keys:
                out.novel_successes += 1
    return out


def play_free_text(
    policies: Policies,
    game: SafetyGame,
    intents: Sequence[Intent],
    attacker: str,
    defender: str,
    settings: Any,
    *,
    greedy_defender: bool = False,
) -> list[Dialogue]:
    """Free-text episodes of the ``attacker`` adapter against the ``defender`` adapter, one
    batched call per turn and side (:func:`~icml26.magic.freetext.play`).

    Args:
        policies: the model and its adapters.
        game: the game (its context length bounds a message).
        intents: one episode per intent.
        attacker: the attacker's adapter name (sampled at ``settings.temperature``).
        defender: the defender's adapter name.
        settings: the :class:`~icml26.magic.coevolve.GameSettings` (turns, token budgets).
        greedy_defender: the defender replies greedily (evaluation) instead of sampling.

    Returns:
        The :class:`~icml26.magic.freetext.Dialogue` of each episode.
    """

    def attack(convs: list[Any]) -> list[str]:
        return replies(
            policies,
            convs,
            attacker,
            max_tokens=settings.text_tokens,
            temperature=settings.temperature,
        )

    def defend(convs: list[Any]) -> list[str]:
        return replies(
            policies,
            convs,
            defender,
            max_tokens=settings.reply_tokens,
            temperature=0.0 if greedy_defender else settings.temperature,
        )

    return play(
        intents,
        attack,
        defend,
        is_refusal,
        turns=settings.turns,
        max_chars=game.max_prompt_chars,
    )


def summarise_dialogues(game: SafetyGame, dialogues: Sequence[Dialogue]) -> AttackSample:
    """An :class:`AttackSample` of free-text episodes: successes, broken intents, the novelty
    of each success against the seed-pool rewrites of its intent; a success is filed under
    the seed-pool composition nearest to it, or ``novel``."""
    out = AttackSample(attempts=len(dialogues))
    keys = [format_ops(ops) for ops in game.seed_pool]
    for d in dialogues:
        out.turns.append(len(d.turns))
        if d.broken:
            out.broken += 1
            continue
        refs = seed_rewrites(d.intent, game.seed_pool)
        dist = [ngram_novelty([d.text], [[r]])[0] for r in refs]
        nearest = keys[int(np.argmin(dist))]
        label = "novel" if min(dist) > NOVELTY_THRESHOLD else nearest
        out.tried_by_composition[label] += 1
        if d.success:
            out.successes += 1
            out.novelty.append(min(dist))
            out.success_by_composition[label] += 1
            out.novel_successes += int(label == "novel")
    return out


def sample_free_text(
    policies: Policies,
    game: SafetyGame,
    intents: Sequence[Intent],
    settings: Any,
    *,
    attacker: str,
    defender: str,
    samples_per_intent: int,
    seed: int = 0,
) -> AttackSample:
    """``samples_per_intent`` free-text episodes per intent of the ``attacker`` adapter
    (sampled) against the ``defender`` adapter (greedy), under a forked torch RNG seeded by
    ``seed`` (:func:`~icml26.magic.coevolve.play_free_text`), summarised by
    :func:`summarise_dialogues`.

    Args:
        policies: the model and its adapters.
        game: the game.
        intents: the harmful intents to rewrite.
        settings: the :class:`~icml26.magic.coevolve.GameSettings` (turns, token budgets).
        attacker: the attacker's adapter name.
        defender: the defender's adapter name.
        samples_per_intent: episodes per intent.
        seed: torch's sampling seed for this draw.

    Returns:
        The :class:`AttackSample` (successes, broken intents, novelty of the successes).
    """
    import torch

    rows = [it for it in intents for _ in range(samples_per_intent)]
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        dialogues = play_free_text(
            policies, game, rows, attacker, defender, settings, greedy_defender=True
        )
    return summarise_dialogues(game, dialogues)
