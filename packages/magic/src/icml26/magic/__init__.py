"""MAGIC: attacker and defender co-evolving through alternating GRPO in an offline safety game.

The public API (torch, transformers, peft and TRL are imported on use)::

    from icml26.magic import SafetyGame, builtin_catalogue, build_policies, co_evolve

    game = SafetyGame(builtin_catalogue(), n_eval_intents=8)  # or load_catalogue("mine.json")
    policies = build_policies(game, model="tiny")             # or a checkpoint with LoRA
    co_evolve(policies, game, steps=30)                       # MAGIC's alternating GRPO
    print(score_defender(policies, game, game.eval_set("unseen_ops", rng, 6), "defender",
                         max_tokens=8))

The game (no framework imports): :mod:`~icml26.magic.intents` (abstract intents and their
benign look-alikes), :mod:`~icml26.magic.operators` (invertible rewrite operators),
:mod:`~icml26.magic.judge` (the oracle judge and a guard-model judge),
:mod:`~icml26.magic.game` (prompts, seed pool, evaluation sets, rewards),
:mod:`~icml26.magic.freetext` (the free-text multi-turn attacker's episode, intent check,
rewards and novelty). The agents and their
training: :mod:`~icml26.magic.policies`, :mod:`~icml26.magic.coevolve` (MAGIC and the
baselines' roles), :mod:`~icml26.magic.evaluate`, :mod:`~icml26.magic.study` (one replicate
of the study).
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunConfig": ".config",
        "GameSettings": ".coevolve",
        "FreeTextRewards": ".freetext",
        "TrainLog": ".coevolve",
        "co_evolve": ".coevolve",
        "SafetyGame": ".game",
        "EvalSet": ".game",
        "Catalogue": ".intents",
        "Intent": ".intents",
        "builtin_catalogue": ".intents",
        "load_catalogue": ".intents",
        "GuardJudge": ".judge",
        "OracleJudge": ".judge",
        "Policies": ".policies",
        "build_policies": ".policies",
        "score_defender": ".evaluate",
        "sample_attacks": ".evaluate",
    },
)

if TYPE_CHECKING:
    from icml26.magic.coevolve import GameSettings as GameSettings
    from icml26.magic.coevolve import TrainLog as TrainLog
    from icml26.magic.coevolve import co_evolve as co_evolve
    from icml26.magic.config import RunConfig as RunConfig
    from icml26.magic.evaluate import sample_attacks as sample_attacks
    from icml26.magic.evaluate import score_defender as score_defender
    from icml26.magic.freetext import FreeTextRewards as FreeTextRewards
    from icml26.magic.game import EvalSet as EvalSet
    from icml26.magic.game import SafetyGame as SafetyGame
    from icml26.magic.intents import Catalogue as Catalogue
    from icml26.magic.intents import Intent as Intent
    from icml26.magic.intents import builtin_catalogue as builtin_catalogue
    from icml26.magic.intents import load_catalogue as load_catalogue
    from icml26.magic.judge import GuardJudge as GuardJudge
    from icml26.magic.judge import OracleJudge as OracleJudge
    from icml26.magic.policies import Policies as Policies
    from icml26.magic.policies import build_policies as build_policies
