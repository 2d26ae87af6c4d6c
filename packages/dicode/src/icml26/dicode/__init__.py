"""DiCode (Dreaming in Code): curricula of validated environment programs for open-ended RL.

Light to import: the world-program, sandbox, dreamer and curriculum modules need only NumPy;
the JAX modules (``world``, ``ppo``, ``training``, ``craftax_target``) load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from icml26.dicode.baselines import ACCEL, PLR, DomainRandomisation, TargetOnly
from icml26.dicode.config import BASELINES, METHODS, BenchConfig, RunConfig
from icml26.dicode.curriculum import (
    Archive,
    ArchiveEntry,
    DiCodeCurriculum,
    SlotStats,
    learnability,
)
from icml26.dicode.dreamer import (
    Dream,
    DreamContext,
    LLMDreamer,
    MutationDreamer,
    frontier_goals,
    random_program,
)
from icml26.dicode.program import TARGET_SOURCE, WorldProgram, compile_program, target_program
from icml26.dicode.sandbox import ProgramError
from icml26.dicode.tech import ACHIEVEMENTS, ACTIONS, BLOCKS, DEEP_ACHIEVEMENTS, ITEMS, RESOURCES

_LAZY = {
    "WorldParams": "icml26.dicode.world",
    "EnvState": "icml26.dicode.world",
    "reset": "icml26.dicode.world",
    "step": "icml26.dicode.world",
    "step_auto_reset": "icml26.dicode.world",
    "generate_map": "icml26.dicode.world",
    "PPO": "icml26.dicode.ppo",
    "PPOSettings": "icml26.dicode.ppo",
    "EnvSpec": "icml26.dicode.ppo",
    "CRAFTING_WORLD": "icml26.dicode.ppo",
    "gae": "icml26.dicode.ppo",
    "train_unit": "icml26.dicode.training",
    "Evaluator": "icml26.dicode.training",
    "make_scheduler": "icml26.dicode.training",
    "make_dreamer": "icml26.dicode.training",
    "craftax_env": "icml26.dicode.craftax_target",
    "lower_to_craftax": "icml26.dicode.craftax_target",
}

__all__ = [
    "ACCEL",
    "ACHIEVEMENTS",
    "ACTIONS",
    "BASELINES",
    "BLOCKS",
    "DEEP_ACHIEVEMENTS",
    "ITEMS",
    "METHODS",
    "PLR",
    "RESOURCES",
    "TARGET_SOURCE",
    "Archive",
    "ArchiveEntry",
    "BenchConfig",
    "DiCodeCurriculum",
    "DomainRandomisation",
    "Dream",
    "DreamContext",
    "LLMDreamer",
    "MutationDreamer",
    "ProgramError",
    "RunConfig",
    "SlotStats",
    "TargetOnly",
    "WorldProgram",
    "compile_program",
    "frontier_goals",
    "learnability",
    "random_program",
    "target_program",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'icml26.dicode' has no attribute {name!r}")
