"""MAGIC: attacker and defender co-evolving through alternating GRPO in an offline safety game.

The game (no framework imports): :mod:`~icml26.magic.intents` (abstract intents and their
benign look-alikes), :mod:`~icml26.magic.operators` (invertible rewrite operators),
:mod:`~icml26.magic.judge` (the oracle judge and a guard-model judge),
:mod:`~icml26.magic.game` (prompts, seed pool, evaluation sets, rewards). The agents and their
training (torch, transformers, peft, TRL; imported on use): :mod:`~icml26.magic.policies`,
:mod:`~icml26.magic.coevolve`, :mod:`~icml26.magic.evaluate`, :mod:`~icml26.magic.experiment`.
"""

from __future__ import annotations

from icml26.magic.config import DEFENDERS, EVALS, BenchConfig, MagicConfig
from icml26.magic.game import SEED_POOL, Attack, EvalSet, SafetyGame, attacker_messages
from icml26.magic.intents import Catalogue, Intent, IntentError, builtin_catalogue, load_catalogue
from icml26.magic.judge import GuardJudge, OracleJudge, Verdict, is_refusal
from icml26.magic.operators import (
    OPERATORS,
    TRAIN_OPERATORS,
    UNSEEN_OPERATORS,
    OperatorError,
    compose,
    format_ops,
    parse_ops,
    recover,
)

__all__ = [
    "DEFENDERS",
    "EVALS",
    "OPERATORS",
    "SEED_POOL",
    "TRAIN_OPERATORS",
    "UNSEEN_OPERATORS",
    "Attack",
    "BenchConfig",
    "Catalogue",
    "EvalSet",
    "GuardJudge",
    "Intent",
    "IntentError",
    "MagicConfig",
    "OperatorError",
    "OracleJudge",
    "SafetyGame",
    "Verdict",
    "attacker_messages",
    "builtin_catalogue",
    "compose",
    "format_ops",
    "is_refusal",
    "load_catalogue",
    "parse_ops",
    "recover",
]
