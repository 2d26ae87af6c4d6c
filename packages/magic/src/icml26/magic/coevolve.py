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
  batches mix attack tasks, rewarded by success against itself, and defence tasks on its own
  rewrites;
* :func:`adaptive_attacker`: a fresh warm-start attacker trained against one frozen defender
  (the ``asr.adaptive.<defender>`` evaluation).

A "round" is one phase of the schedule (a run of steps of one role); after each round the
current defender is probed on a fixed attack set (``asr_curve`` in ``metrics.jsonl``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.magic.game import Attack, SafetyGame, attacker_messages
from icml26.magic.intents import Intent
from icml26.magic.policies import Policies, replies

__all__ = [
    "GameSettings",
    "TrainLog",
    "adaptive_attacker",
    "attacker_role",
    "defender_role",
    "make_schedule",
    "self_play_role",
    "static_defender_role",
    "train_roles",
]


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
    """

    pairs_per_step: int = 8
    num_generations: int = 4
    lr: float = 5e-3
    attack_tokens: int = 12
    reply_tokens: int = 12
    temperature: float = 1.0
    seed: int = 0

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
    adapter's harmful compliance, penalised for broken intents."""
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


def self_play_role(policies: Policies, game: SafetyGame, settings: GameSettings) -> Any:
    """One adapter (``self``) plays both sides: each batch holds ``pairs_per_step`` attack
    tasks (rewarded by its own compliance) and ``pairs_per_step`` defence prompts (its own
    rewrites, half of them benign look-alikes)."""
    from icml26.shared.llm.grpo import reward_components
    from icml26.shared.llm.roles import Role

    harmful = game.train_intents()
    n_att = max(settings.pairs_per_step // 2, 1)
    n_def = max(settings.pairs_per_step - n_att, 1)

    def prompts(rng: np.random.Generator) -> list[dict[str, Any]]:
        rows = [
            {"prompt": attacker_messages(it), "intent_id": it.id, "task": "attack"}
            for it in _pick(rng, harmful, n_att)
        ]
        attacks = _sample_attacks(
            policies, game, _pick(rng, harmful, (n_def + 1) // 2), "self", settings
        )
        defence = [{**r, "task": "defend"} for r in _defender_rows(game, attacks)]
        return rows + defence[:n_def]

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
    return Role(
        "self",
        reward_components(
            play_reward, ["attack_success", "intent_broken", "refusal", "helpfulness"]
        ),
        prompts,
        settings.grpo(
            settings.pairs_per_step,
            max(settings.attack_tokens, settings.reply_tokens),
            (1.0, -game.penalty, 1.0, 1.0),
        ),
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
    """What one method's training did: per-step records, per-round probes, seconds."""

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
