"""``icml26 bench magic``: game rounds per second, tokens per round for each role, GRPO step
time per role, and batched against one-at-a-time defender replies (tiny model, CPU).

A *game round* is one batch of play without learning: the attacker rewrites
``pairs_per_step`` harmful intents (sampled), the defender answers each rewrite and the
rewrite of its look-alike (greedy), the oracle judges.
"""

from __future__ import annotations

import time
from typing import Any

from icml26.magic.coevolve import GameSettings, attacker_role, defender_role, train_roles
from icml26.magic.config import BenchConfig
from icml26.magic.game import SafetyGame, attacker_messages
from icml26.magic.intents import builtin_catalogue
from icml26.magic.policies import build_policies, stream_seed
from icml26.shared import RunDir, rng_for

__all__ = ["bench"]


def _round(policies: Any, game: SafetyGame, intents: list[Any]) -> tuple[int, int]:
    from icml26.magic.policies import use_adapter
    from icml26.shared.llm.chat import format_chat, generate

    tok = policies.tokenizer
    with use_adapter(policies.model, "attacker"):
        att = generate(
            policies.model,
            tok,
            [format_chat(tok, attacker_messages(it)) for it in intents],
            max_tokens=12,
            temperature=1.0,
            batch_size=64,
        )
    attacks = []
    for it, c in zip(intents, att, strict=True):
        a = game.read_attack(it, c.text) or game.attack(it, ())
        attacks += list(game.pair(a))
    with use_adapter(policies.model, "defender"):
        rep = generate(
            policies.model,
            tok,
            [format_chat(tok, a.conversation) for a in attacks],
            max_tokens=12,
            temperature=0.0,
            batch_size=64,
        )
    game.verdicts(attacks, [r.text for r in rep])
    return sum(c.completion_tokens for c in att), sum(r.completion_tokens for r in rep)


def bench(config: BenchConfig, run_dir: RunDir) -> dict[str, Any]:
    """Game rounds per second, tokens per round, GRPO step time per role, batched against
    one-at-a-time replies (the runner sets threads and seeds).

    Args:
        config: the bench config.
        run_dir: the run folder.

    Returns:
        The flat bench metrics.
    """
    from icml26.magic.policies import replies

    game = SafetyGame(builtin_catalogue())
    policies = build_policies(
        game, base_sft_steps=config.base_sft_steps, seed=stream_seed(config.seed, "model")
    )
    rng = rng_for(config.seed, "rounds")
    harmful = game.train_intents()
    tokens = {"attacker": 0, "defender": 0}
    t0 = time.perf_counter()
    for _ in range(config.rounds):
        intents = [harmful[i] for i in rng.integers(0, len(harmful), config.pairs_per_step)]
        a, d = _round(policies, game, intents)
        tokens["attacker"] += a
        tokens["defender"] += d
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {
        "game_rounds_per_s": config.rounds / wall,
        "tokens_per_round.attacker": tokens["attacker"] / config.rounds,
        "tokens_per_round.defender": tokens["defender"] / config.rounds,
    }
    settings = GameSettings(
        pairs_per_step=config.pairs_per_step,
        num_generations=config.num_generations,
        seed=stream_seed(config.seed, "grpo"),
    )
    for role in ("attacker", "defender"):
        make = attacker_role if role == "attacker" else defender_role
        train_roles(
            policies, [make(policies, game, settings)], 1, seed=stream_seed(config.seed, "prompts")
        )  # warm-up
        tl = train_roles(
            policies,
            [make(policies, game, settings)],
            config.grpo_steps,
            seed=stream_seed(config.seed, "prompts"),
        )
        out[f"grpo_step_s.{role}"] = tl.seconds / config.grpo_steps
        out[f"grpo_step_cpu_s.{role}"] = tl.cpu_seconds / config.grpo_steps
    convs = [game.attack(it, ("roleplay",)).conversation for it in harmful]
    convs = (convs * (config.single_replies // len(convs) + 1))[: config.single_replies]
    t0 = time.perf_counter()
    replies(policies, convs, "defender", max_tokens=12, batch_size=len(convs))
    batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    replies(policies, convs, "defender", max_tokens=12, batch_size=1)
    single = time.perf_counter() - t0
    out["replies_per_s.batched"] = len(convs) / batched
    out["replies_per_s.single"] = len(convs) / single
    run_dir.log_metrics(None, **out)
    return out
