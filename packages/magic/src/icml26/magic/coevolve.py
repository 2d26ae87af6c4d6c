"""MAGIC's co-evolution and the baselines' training, as roles of the shared multi-role GRPO.

Each method is a list of :class:`~icml26.shared.llm.roles.Role` objects on the shared
:class:`~icml26.magic.policies.Policies` model, trained by
:class:`~icml26.shared.llm.roles.MultiRoleTrainer` under a schedule:

* ``magic``: attacker and defender alternate (:class:`~icml26.shared.llm.roles.Alternating`
  every ``N`` steps, or :class:`~icml26.shared.llm.roles.AlternatingOnMetric`: the attacker
  trains until its attack success rate exceeds ``asr_high``, the defender until it falls
  below ``asr_low``, each for at most ``phase_steps``). The attacker's reward queries the
  *current* defender; the defender's prompts are the *current* attacker's rewrites (and the
  same rewrites of their benign look-alikes);
* ``frozen_attacker``: only the defender trains, against the warm-start attacker's rewrites;
* ``static``: only the defender trains, on the pre-collected set
  (:meth:`~icml26.magic.game.SafetyGame.static_attack_set`), no game;
* ``self_play``: one adapter plays both sides (Self-RedTeam-like, no asymmetric roles): its
  batches mix attack tasks, rewarded by success against itself, and whole defence pairs on
  its own rewrites (:func:`self_play_shares` sizes them so it sees as many defence prompts
  as MAGIC's defender, half benign);
* :func:`adaptive_attacker`: a fresh warm-start attacker trained against one frozen defender
  (the ``asr.adaptive.<defender>`` evaluation).

The attacker's action is free text by default in the run config (``GameSettings.attacker ==
"free_text"``: :func:`free_text_attacker_role`, multi-turn episodes of
:class:`~icml26.magic.freetext.FreeTextEpisode` through the shared
:func:`~icml26.shared.llm.rollouts.multi_turn_rollout`, the official rewards), or an operator
composition (``"operators"``: the ablation). The defender's rows are the current attacker's
rewrites and their look-alikes either way.

A "round" is one phase of the schedule (a run of steps of one role); after each round the
current defender is probed on a fixed attack set (``asr_curve`` in ``metrics.jsonl``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.magic.evaluate import play_free_text
from icml26.magic.freetext import (
    Dialogue,
    FreeTextEpisode,
    FreeTextRewards,
    free_text_messages,
    keeps_intent,
    twin_turns,
)
from icml26.magic.game import Attack, SafetyGame, attacker_messages
from icml26.magic.intents import Intent
from icml26.magic.judge import is_refusal
from icml26.magic.policies import Policies, replies

__all__ = [
    "ATTACKERS",
    "GameSettings",
    "TrainLog",
    "adaptive_attacker",
    "attacker_role",
    "cap_defence_rows",
    "co_evolve",
    "defender_role",
    "make_schedule",
    "self_play_role",
    "self_play_shares",
    "static_defender_role",
    "train_roles",
]


#: The attacker's action spaces: free text (the paper's) and operator compositions (ablation).
ATTACKERS = ("free_text", "operators")


def _at_least(obj: Any, name: str, low: int, why: str = "") -> None:
    v = getattr(obj, name)
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(
            f"{type(obj).__name__}.{name} must be an integer >= {low}{' ' + why if why else ''}, "
            f"got {v!r}"
        )


@dataclass(frozen=True)
class GameSettings:
    """Knobs shared by every method's GRPO.

    Attributes:
        pairs_per_step: intents per step (the defender gets each attack and its look-alike,
            so ``2 * pairs_per_step`` prompts; the attacker ``pairs_per_step``).
        num_generations: GRPO group size.
        lr: learning rate of every adapter.
        attack_tokens, reply_tokens: completion lengths of the two roles.
        temperature: sampling temperature of rollouts (and of the opponent inside rewards).
        seed: the seed of the GRPO runs.
        attacker: ``"operators"`` (the attacker writes an operator composition, one turn: the
            ablation) or ``"free_text"`` (it writes its own rewrite over up to ``turns``
            turns: :mod:`~icml26.magic.freetext`).
        turns: the free-text attacker's messages per episode at most.
        text_tokens: tokens per free-text attacker message.
        rewards: the free-text game's reward weights (the official defaults).

    Raises:
        ValueError: a count below its minimum (``num_generations`` < 2, the others < 1) or a
            learning rate or temperature that is not > 0; the message names the field.
    """

    pairs_per_step: int = 8
    num_generations: int = 4
    lr: float = 5e-3
    attack_tokens: int = 12
    reply_tokens: int = 12
    temperature: float = 1.0
    seed: int = 0
    attacker: str = "operators"
    turns: int = 1
    text_tokens: int = 40
    rewards: FreeTextRewards = field(default_factory=FreeTextRewards)

    def __post_init__(self) -> None:
        if self.attacker not in ATTACKERS:
            raise ValueError(
                f"GameSettings.attacker must be one of {ATTACKERS}, got {self.attacker!r}"
            )
        _at_least(self, "turns", 1)
        _at_least(self, "text_tokens", 1)
        if self.attacker == "operators" and self.turns != 1:
            raise ValueError(
                "the operator attacker plays one turn: set turns=1 or attacker='free_text'"
            )
        _at_least(self, "pairs_per_step", 1)
        _at_least(self, "num_generations", 2, "(GRPO needs a group to compare within)")
        _at_least(self, "attack_tokens", 1)
        _at_least(self, "reply_tokens", 1)
        _at_least(self, "seed", 0)
        for name in ("lr", "temperature"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise ValueError(f"GameSettings.{name} must be a number > 0, got {v!r}")

    def grpo(self, prompts: int, tokens: int, weights: tuple[float, ...]) -> Any:
        from icml26.shared.llm.grpo import GRPOSettings

        return GRPOSettings(
            steps=1,
            prompts_per_step=prompts,
            num_generations=self.num_generations,
            max_completion_length=tokens,
            lr=self.lr,
            temperature=self.temperature,
            loss_type="dapo",
            reward_weights=weights,
            seed=self.seed,
        )


def _texts(completions: Sequence[Any]) -> list[str]:
    from icml26.shared.llm.grpo import completion_text

    return [completion_text(c) for c in completions]


def _sample_attacks(
    policies: Policies,
    game: SafetyGame,
    intents: Sequence[Intent],
    adapter: str,
    settings: GameSettings,
) -> list[Attack]:
    """The ``adapter`` attacker's rewrite of each intent; a broken one falls back to the
    plain request (the defender still sees the intent)."""
    texts = replies(
        policies,
        [attacker_messages(it) for it in intents],
        adapter,
        max_tokens=settings.attack_tokens,
        temperature=settings.temperature,
    )
    out = []
    for it, t in zip(intents, texts, strict=True):
        attack = game.read_attack(it, t)
        out.append(attack if attack is not None else game.attack(it, ()))
    return out


def _answer(policies: Policies, adapter: str, settings: GameSettings) -> Callable[..., list[str]]:
    """The ``adapter`` defender as a batch function (sampled at the rollouts' temperature)."""

    def answer(convs: list[Any]) -> list[str]:
        return replies(
            policies,
            convs,
            adapter,
            max_tokens=settings.reply_tokens,
            temperature=settings.temperature,
        )

    return answer


def _free_text_rows(game: SafetyGame, dialogues: Sequence[Dialogue]) -> list[dict[str, Any]]:
    """Defender rows of free-text episodes: what the defender saw before its last reply, and
    the same with the intent's key phrase swapped for its look-alike's. A broken episode
    falls back to the plain request (the defender still sees the intent)."""
    rows = []
    for d in dialogues:
        if d.broken or not d.turns or not keeps_intent(d.intent, d.turns):
            d = Dialogue(d.intent, [d.intent.description])
        twin = game.twin(d.intent)
        # both rows in twin_turns' form (lower case, whitespace collapsed): the pair differs
        # only in the intent's key phrase, never in a surface cue such as letter case
        seen = [" ".join(m.lower().split()) for m in d.turns]
        for it, turns in ((d.intent, seen), (twin, twin_turns(d.intent, twin, d.turns))):
            rows.append({"prompt": d.defender_view(turns), "intent_id": it.id, "ops": "free_text"})
    return rows


def _episode_rollout(
    policies: Policies, game: SafetyGame, settings: GameSettings, opponent: str
) -> Callable[..., dict[str, Any]]:
    """The shared multi-turn rollout over :class:`~icml26.magic.freetext.FreeTextEpisode`s
    against the ``opponent`` adapter; adds each episode's ``ft_success``, ``ft_broken``,
    ``ft_complied`` and ``ft_turns`` for the reward functions."""
    from icml26.shared.llm.rollouts import multi_turn_rollout

    episodes: list[FreeTextEpisode] = []

    def factory() -> FreeTextEpisode:
        env = FreeTextEpisode(
            game.catalogue.by_description,
            _answer(policies, opponent, settings),
            is_refusal,
            turns=settings.turns,
            max_chars=game.max_prompt_chars,
        )
        episodes.append(env)
        return env

    inner = multi_turn_rollout(
        factory,
        max_turns=settings.turns,
        max_turn_tokens=max(settings.text_tokens, settings.reply_tokens),
        observation_role="user",
    )

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        episodes.clear()
        out = inner(prompts, trainer)
        for e in episodes:
            e.finish()
        ds = [e.dialogue for e in episodes]
        out["ft_success"] = [float(d.success) if d else 0.0 for d in ds]
        out["ft_broken"] = [float(d.broken) if d else 0.0 for d in ds]
        out["ft_complied"] = [
            float(bool(d.replies) and not is_refusal(d.replies[-1])) if d else 0.0 for d in ds
        ]
        out["ft_turns"] = [float(len(d.turns)) if d else 0.0 for d in ds]
        return out

    return rollout


def _episode_budget(settings: GameSettings) -> int:
    """Completion tokens of one free-text episode: its messages and the replies shown
    between them (with room for the chat template's turn markers)."""
    return settings.turns * settings.text_tokens + (settings.turns - 1) * (
        settings.reply_tokens + 16
    )


def _is_attack_prompt(prompt: Any) -> bool:
    """Whether a batch row's prompt is an attacker prompt (either attacker's system prompt)
    rather than a defence task."""
    from icml26.magic.freetext import FREE_TEXT_SYSTEM
    from icml26.magic.game import ATTACKER_SYSTEM

    return (
        isinstance(prompt, list)
        and bool(prompt)
        and prompt[0].get("content") in (FREE_TEXT_SYSTEM, ATTACKER_SYSTEM)
    )


def cap_defence_rows(
    rollout: Callable[..., dict[str, Any]], reply_tokens: int
) -> Callable[..., dict[str, Any]]:
    """``rollout`` with every defence row's completion cut to ``reply_tokens`` tokens (its
    ``env_mask`` and ``logprobs`` alike): one adapter that plays both sides (self-play) is
    batched under one completion budget, the larger of the two roles'; cut after sampling,
    a defence reply is what a ``reply_tokens`` generation samples (sampling is left to
    right), so self-play's defender trains on the reply lengths MAGIC's defender and the
    evaluation use. Attack rows keep their budget.

    Raises:
        ValueError: ``reply_tokens`` < 1.
    """
    if reply_tokens < 1:
        raise ValueError(f"reply_tokens must be >= 1, got {reply_tokens}")

    def capped(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        out = rollout(prompts, trainer)
        for i, prompt in enumerate(prompts):
            if _is_attack_prompt(prompt):
                continue
            for key in ("completion_ids", "env_mask", "logprobs"):
                rows = out.get(key)
                if rows is not None and rows[i] is not None:
                    rows[i] = rows[i][:reply_tokens]
        return out

    return capped


class _OneTurn:
    """A one-turn environment: the policy's completion, nothing to observe (the operator
    self-play's rows, generated by the shared rollout so their lengths can be capped)."""

    def reset(self, prompt: Any) -> None:
        return None

    def step(self, text: str) -> tuple[None, float, bool]:
        return None, 0.0, True


def _free_text_attack_rewards(
    game: SafetyGame, settings: GameSettings, rows: Sequence[int], **kw: Any
) -> dict[str, list[float | None]]:
    """The official attacker reward (``attack``) and its diagnostics for the episode rows
    ``rows`` of a batch."""
    intent_id = kw["intent_id"]
    out: dict[str, list[float | None]] = {"attack": [], "attack_success": [], "intent_broken": []}
    for i in rows:
        intent = game.catalogue[intent_id[i]]
        kept = not kw["ft_broken"][i]
        complied = bool(kw["ft_success"][i]) or bool(kw["ft_complied"][i])
        out["attack"].append(settings.rewards.attacker(intent.harmful, complied, kept))
        out["attack_success"].append(kw["ft_success"][i])
        out["intent_broken"].append(kw["ft_broken"][i])
    return out


def free_text_attacker_role(
    policies: Policies,
    game: SafetyGame,
    settings: GameSettings,
    *,
    name: str = "attacker",
    opponent: str = "defender",
) -> Any:
    """The free-text attacker: multi-turn episodes against the ``opponent`` adapter through
    the shared rollout; rewarded as the official code (``attack``: ``-safety + label``), with
    ``attack_success`` and ``intent_broken`` logged at weight 0 (the metric schedule reads
    ``attack_success``)."""
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    harmful = game.train_intents()

    def prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        return [
            {"prompt": free_text_messages(it), "intent_id": it.id}
            for it in _pick(rng, harmful, settings.pairs_per_step)
        ]

    def attack_reward(prompts: list[Any], completions: list[Any], **kw: Any) -> dict[str, Any]:
        return _free_text_attack_rewards(game, settings, range(len(completions)), **kw)

    attack_reward.__name__ = "attack"
    return Role(
        name,
        reward_components(attack_reward, ["attack", "attack_success", "intent_broken"]),
        prompts,
        settings.grpo(settings.pairs_per_step, _episode_budget(settings), (1.0, 0.0, 0.0)),
        rollout_func=_episode_rollout(policies, game, settings, opponent),
    )


def _pick(rng: np.random.Generator, items: Sequence[Any], n: int) -> list[Any]:
    return [items[i] for i in rng.integers(0, len(items), size=n)]


def attacker_role(
    policies: Policies,
    game: SafetyGame,
    settings: GameSettings,
    *,
    name: str = "attacker",
    opponent: str = "defender",
) -> Any:
    """The attacker: rewrites harmful training intents; rewarded by the ``opponent``
    adapter's harmful compliance, penalised for broken intents (the operator attacker; with
    ``settings.attacker == "free_text"``, :func:`free_text_attacker_role`)."""
    if settings.attacker == "free_text":
        return free_text_attacker_role(policies, game, settings, name=name, opponent=opponent)
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    harmful = game.train_intents()

    def prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        return [
            {"prompt": attacker_messages(it), "intent_id": it.id}
            for it in _pick(rng, harmful, settings.pairs_per_step)
        ]

    def attack_reward(
        prompts: list[Any], completions: list[Any], intent_id: list[str], **_: Any
    ) -> dict[str, Any]:
        intents = [game.catalogue[i] for i in intent_id]
        return game.attacker_rewards(
            intents,
            _texts(completions),
            lambda convs: replies(
                policies,
                convs,
                opponent,
                max_tokens=settings.reply_tokens,
                temperature=settings.temperature,
            ),
        )

    attack_reward.__name__ = "attack"
    return Role(
        name,
        reward_components(attack_reward, ["attack_success", "intent_broken"]),
        prompts,
        settings.grpo(settings.pairs_per_step, settings.attack_tokens, (1.0, -game.penalty)),
    )


def _defender_reward(game: SafetyGame) -> Callable[..., dict[str, Any]]:
    def defend_reward(
        prompts: list[Any], completions: list[Any], intent_id: list[str], **_: Any
    ) -> dict[str, Any]:
        return game.defender_rewards([game.catalogue[i] for i in intent_id], _texts(completions))

    defend_reward.__name__ = "defend"
    return defend_reward


def _defender_rows(game: SafetyGame, attacks: Sequence[Attack]) -> list[dict[str, Any]]:
    rows = []
    for a in attacks:
        for x in game.pair(a):
            rows.append({"prompt": x.conversation, "intent_id": x.intent.id, "ops": x.key})
    return rows


def defender_role(
    policies: Policies, game: SafetyGame, settings: GameSettings, *, opponent: str = "attacker"
) -> Any:
    """The defender: answers the ``opponent`` attacker's current rewrites of harmful training
    intents and the same rewrites of their look-alikes."""
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    harmful = game.train_intents()

    def prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        intents = _pick(rng, harmful, settings.pairs_per_step)
        if settings.attacker == "free_text":
            dialogues = play_free_text(policies, game, intents, opponent, "defender", settings)
            return _free_text_rows(game, dialogues)
        return _defender_rows(game, _sample_attacks(policies, game, intents, opponent, settings))

    return Role(
        "defender",
        reward_components(_defender_reward(game), ["refusal", "helpfulness"]),
        prompts,
        settings.grpo(2 * settings.pairs_per_step, settings.reply_tokens, (1.0, 1.0)),
    )


def static_defender_role(game: SafetyGame, settings: GameSettings) -> Any:
    """The no-game defender: batches drawn from the fixed pre-collected set."""
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    pool = game.static_attack_set()

    def prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        return [
            {"prompt": a.conversation, "intent_id": a.intent.id, "ops": a.key}
            for a in _pick(rng, pool, 2 * settings.pairs_per_step)
        ]

    return Role(
        "defender",
        reward_components(_defender_reward(game), ["refusal", "helpfulness"]),
        prompts,
        settings.grpo(2 * settings.pairs_per_step, settings.reply_tokens, (1.0, 1.0)),
    )


def self_play_role(
    policies: Policies,
    game: SafetyGame,
    settings: GameSettings,
    *,
    attack_tasks: int | None = None,
    defence_pairs: int | None = None,
) -> Any:
    """One adapter (``self``) plays both sides: each batch holds ``attack_tasks`` attack tasks
    (rewarded by its own compliance) and ``defence_pairs`` whole defence pairs (its own
    rewrite of a harmful intent and the same rewrite of the look-alike: half the defence
    prompts benign).

    Args:
        policies: the model and its adapters (the ``self`` adapter plays).
        game: the game.
        settings: the shared GRPO knobs.
        attack_tasks: attack tasks per batch (default ``ceil(pairs_per_step / 2)``).
        defence_pairs: whole defence pairs per batch (default ``ceil(pairs_per_step / 2)``;
            :func:`self_play_shares` sizes both so the run sees as many defence prompts as
            MAGIC's defender).

    Returns:
        The GRPO role (batch ``attack_tasks + 2 * defence_pairs`` rows).

    Raises:
        ValueError: a negative count, or a batch with no row.
    """
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    half = -(-settings.pairs_per_step // 2)
    n_att = half if attack_tasks is None else attack_tasks
    n_pairs = half if defence_pairs is None else defence_pairs
    if n_att < 0 or n_pairs < 0 or n_att + n_pairs == 0:
        raise ValueError(
            f"self-play needs attack_tasks, defence_pairs >= 0 and not both 0, got "
            f"{n_att} and {n_pairs}"
        )
    if settings.attacker == "free_text":
        return _free_text_self_play_role(policies, game, settings, n_att, n_pairs)

    def defence_rows(intents: list[Any]) -> list[dict[str, Any]]:
        return _defender_rows(game, _sample_attacks(policies, game, intents, "self", settings))

    prompts = _self_play_prompts(game, n_att, n_pairs, attacker_messages, defence_rows)

    def play_reward(
        prompts: list[Any],
        completions: list[Any],
        intent_id: list[str],
        task: list[str],
        **_: Any,
    ) -> dict[str, Any]:
        texts = _texts(completions)
        out: dict[str, list[float | None]] = {
            k: [None] * len(texts)
            for k in ("attack_success", "intent_broken", "refusal", "helpfulness")
        }
        att = [i for i, t in enumerate(task) if t == "attack"]
        dfd = [i for i, t in enumerate(task) if t == "defend"]
        if att:
            r = game.attacker_rewards(
                [game.catalogue[intent_id[i]] for i in att],
                [texts[i] for i in att],
                lambda convs: replies(
                    policies,
                    convs,
                    "self",
                    max_tokens=settings.reply_tokens,
                    temperature=settings.temperature,
                ),
            )
            for k, v in r.items():
                for i, x in zip(att, v, strict=True):
                    out[k][i] = x
        if dfd:
            r2 = game.defender_rewards(
                [game.catalogue[intent_id[i]] for i in dfd], [texts[i] for i in dfd]
            )
            for k, v2 in r2.items():
                for i, y in zip(dfd, v2, strict=True):
                    out[k][i] = y
        return out

    play_reward.__name__ = "play"
    from icml26.shared.llm.rollouts import multi_turn_rollout

    budget = max(settings.attack_tokens, settings.reply_tokens)
    return Role(
        "self",
        reward_components(
            play_reward, ["attack_success", "intent_broken", "refusal", "helpfulness"]
        ),
        prompts,
        settings.grpo(n_att + 2 * n_pairs, budget, (1.0, -game.penalty, 1.0, 1.0)),
        rollout_func=cap_defence_rows(
            multi_turn_rollout(_OneTurn, max_turns=1, max_turn_tokens=budget),
            settings.reply_tokens,
        ),
    )


def _self_play_prompts(
    game: SafetyGame,
    n_att: int,
    n_pairs: int,
    messages: Callable[[Any], Any],
    defence_rows: Callable[[list[Any]], list[dict[str, Any]]],
) -> Callable[[np.random.Generator], list[dict[str, Any]]]:
    """The self-play prompt source: ``n_att`` attack rows (``messages(intent)``) and the
    defence rows ``defence_rows`` builds from the policy's own attacks on ``n_pairs``
    training intents (either attacker)."""
    harmful = game.train_intents()

    def prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        rows = [
            {"prompt": messages(it), "intent_id": it.id, "task": "attack"}
            for it in _pick(rng, harmful, n_att)
        ]
        if n_pairs:
            rows += [{**r, "task": "defend"} for r in defence_rows(_pick(rng, harmful, n_pairs))]
        return rows

    return prompts


def _free_text_self_play_role(
    policies: Policies, game: SafetyGame, settings: GameSettings, n_att: int, n_pairs: int
) -> Any:
    """Self-play with the free-text attacker: attack rows are episodes against ``self``
    (the shared rollout), defence rows are one-step episodes on its own free-text attacks
    (and their look-alikes)."""
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    def defence_rows(intents: list[Any]) -> list[dict[str, Any]]:
        dialogues = play_free_text(policies, game, intents, "self", "self", settings)
        return _free_text_rows(game, dialogues)

    prompts = _self_play_prompts(game, n_att, n_pairs, free_text_messages, defence_rows)

    names = ("attack", "attack_success", "intent_broken", "refusal", "helpfulness")

    def play_reward(
        prompts: list[Any], completions: list[Any], task: list[str], **kw: Any
    ) -> dict[str, Any]:
        texts = _texts(completions)
        out: dict[str, list[float | None]] = {k: [None] * len(texts) for k in names}
        att = [i for i, t in enumerate(task) if t == "attack"]
        dfd = [i for i, t in enumerate(task) if t == "defend"]
        for k, v in _free_text_attack_rewards(game, settings, att, **kw).items():
            for i, x in zip(att, v, strict=True):
                out[k][i] = x
        r2 = game.defender_rewards(
            [game.catalogue[kw["intent_id"][i]] for i in dfd], [texts[i] for i in dfd]
        )
        for k, v2 in r2.items():
            for i, y in zip(dfd, v2, strict=True):
                out[k][i] = y
        return out

    play_reward.__name__ = "play"
    return Role(
        "self",
        reward_components(play_reward, list(names)),
        prompts,
        settings.grpo(
            n_att + 2 * n_pairs,
            max(_episode_budget(settings), settings.reply_tokens),
            (1.0, 0.0, 0.0, 1.0, 1.0),
        ),
        rollout_func=cap_defence_rows(
            _episode_rollout(policies, game, settings, "self"), settings.reply_tokens
        ),
    )


def self_play_shares(
    pairs_per_step: int, defender_steps: int, attacker_steps: int
) -> tuple[int, int]:
    """Attack tasks and whole defence pairs per self-play batch, so that
    ``defender_steps + attacker_steps`` self-play steps see at least as many defence prompts
    (``2 * pairs_per_step * defender_steps``) and attack tasks (``pairs_per_step *
    attacker_steps``) as MAGIC's two roles, as evenly as a fixed batch allows (exactly as
    many when the two step counts are equal and ``pairs_per_step`` is even).

    Args:
        pairs_per_step: MAGIC's intents per step.
        defender_steps, attacker_steps: MAGIC's steps of each role.

    Returns:
        ``(attack_tasks, defence_pairs)`` per batch.

    Raises:
        ValueError: a negative count, or no step at all.
    """
    steps = defender_steps + attacker_steps
    if pairs_per_step < 1 or defender_steps < 0 or attacker_steps < 0 or steps == 0:
        raise ValueError(
            f"need pairs_per_step >= 1 and step counts >= 0, not both 0; got {pairs_per_step}, "
            f"{defender_steps}, {attacker_steps}"
        )
    return (
        -(-pairs_per_step * attacker_steps // steps),
        -(-pairs_per_step * defender_steps // steps),
    )


def make_schedule(
    kind: str, *, every: int, asr_high: float, asr_low: float, window: int = 2
) -> Any:
    """MAGIC's switch: ``"every"`` (every ``every`` steps, the official 15) or ``"metric"``
    (attacker until its batch ASR > ``asr_high``, defender until the batch ASR on its attacks
    < ``asr_low``, i.e. its refusal rate > ``1 - asr_low``; ``every`` steps at most)."""
    from icml26.shared.llm.roles import Alternating, AlternatingOnMetric

    if kind == "every":
        return Alternating(every)
    if kind == "metric":
        return AlternatingOnMetric(
            thresholds={
                "attacker": ("rewards/attack_success/mean", asr_high, True),
                "defender": ("rewards/refusal/mean", 1.0 - asr_low, True),
            },
            window=window,
            min_steps=1,
            max_steps=every,
        )
    raise ValueError(f"schedule must be 'every' or 'metric', got {kind!r}")


@dataclass
class TrainLog:
    """What one method's training did.

    Attributes:
        steps: per-step records (``role``, ``step``, rewards, loss).
        rounds: per-round probe results.
        seconds, cpu_seconds: wall and CPU seconds of training.
    """

    steps: list[dict[str, Any]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def role_steps(self, role: str) -> int:
        return sum(1 for s in self.steps if s["role"] == role)


def train_roles(
    policies: Policies,
    roles: Sequence[Any],
    steps: int,
    *,
    schedule: Any = None,
    seed: int = 0,
    probe: Callable[[], dict[str, float]] | None = None,
    on_step: Callable[[dict[str, Any]], None] | None = None,
) -> TrainLog:
    """``steps`` schedule steps of ``roles`` with the shared
    :class:`~icml26.shared.llm.roles.MultiRoleTrainer` (each phase of one role is one TRL
    ``Trainer.train()``); ``probe()`` runs after every round (a phase: the schedule switches
    roles at its end, or training ends)."""
    from icml26.shared.llm.roles import Alternating, MultiRoleTrainer

    log = TrainLog()
    t0, c0 = time.perf_counter(), time.process_time()
    trainer = MultiRoleTrainer(
        policies.model,
        policies.tokenizer,
        list(roles),
        schedule=schedule or Alternating(max(steps, 1)),
        seed=seed,
    )

    def round_done(role: str, next_step: int) -> None:
        if probe is not None:
            log.rounds.append(
                {"round": len(log.rounds), "train_step": next_step, "role": role, **probe()}
            )

    log.steps = trainer.train(steps, on_step=on_step, on_phase_end=round_done)
    policies.model.eval()
    log.seconds, log.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    return log


def adaptive_attacker(
    policies: Policies, game: SafetyGame, settings: GameSettings, steps: int, *, seed: int = 0
) -> TrainLog:
    """Train the attacker adapter (from its warm start) for ``steps`` against the frozen
    ``defender`` adapter as it stands."""
    policies.load("attacker", policies.sft_states["attacker"])
    return train_roles(policies, [attacker_role(policies, game, settings)], steps, seed=seed)


def co_evolve(
    policies: Policies,
    game: SafetyGame,
    steps: int,
    *,
    settings: GameSettings | None = None,
    schedule: str = "metric",
    switch_every: int = 8,
    asr_high: float = 0.5,
    asr_low: float = 0.15,
    start: str = "defender",
    seed: int = 0,
    probe: Callable[[], dict[str, float]] | None = None,
    on_step: Callable[[dict[str, Any]], None] | None = None,
) -> TrainLog:
    """MAGIC: ``steps`` schedule steps of alternating GRPO of the ``attacker`` and
    ``defender`` adapters of ``policies`` (each role's reward plays the other's current
    adapter).

    Args:
        policies: the model with its warm-started adapters (:func:`build_policies`).
        game: the safety game (intents, operators, rewards).
        steps: schedule steps (both roles together).
        settings: GRPO knobs (:class:`GameSettings`; its defaults when ``None``).
        schedule: ``"metric"`` (switch on the attack success rate) or ``"every"``.
        switch_every: phase length (``"every"``) or its cap (``"metric"``).
        asr_high: the ``"metric"`` schedule's switch for the attacker: it trains until its
            batch attack success rate exceeds this.
        asr_low: the defender's switch: it trains until the batch ASR on its attacks falls
            below this.
        start: the role that trains first: ``"defender"`` (the official code) or
            ``"attacker"``.
        seed: the prompt draws' seed.
        probe: called after every round; its numbers go into :attr:`TrainLog.rounds`.
        on_step: called with each step's record.

    Returns:
        The :class:`TrainLog` (per-step records, rounds, seconds).

    Raises:
        ValueError: an unknown ``schedule`` or ``start``.
    """
    if start not in ("defender", "attacker"):
        raise ValueError(f"start must be 'defender' or 'attacker', got {start!r}")
    settings = settings or GameSettings(seed=seed)
    roles = [attacker_role(policies, game, settings), defender_role(policies, game, settings)]
    if start == "defender":
        roles.reverse()
    return train_roles(
        policies,
        roles,
        steps,
        schedule=make_schedule(schedule, every=switch_every, asr_high=asr_high, asr_low=asr_low),
        seed=seed,
        probe=probe,
        on_step=on_step,
    )
