"""MAGIC: attacker and defender co-evolving through alternating GRPO in an offline safety game.

The public API (torch, transformers, peft and TRL are imported on use)::

    import numpy as np
    from icml26.magic import (GameSettings, SafetyGame, build_policies, builtin_catalogue,
                              co_evolve, score_defender)

    game = SafetyGame(builtin_catalogue(), n_eval_intents=8)  # or load_catalogue("mine.json")
    policies = build_policies(game, model="tiny", attacker="free_text")  # or a checkpoint
    settings = GameSettings(attacker="free_text", turns=2)    # the paper's free-text attacker
    co_evolve(policies, game, steps=30, settings=settings)    # MAGIC's alternating GRPO
    unseen = game.eval_set("unseen_ops", np.random.default_rng(0), 6)
    print(score_defender(policies, game, unseen, "defender", max_tokens=8))

(``GameSettings`` and ``build_policies`` default to ``attacker="operators"``, the one-turn
operator-composition ablation: pass ``attacker="free_text"`` to both for the paper's game.)

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
