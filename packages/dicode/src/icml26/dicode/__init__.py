"""DiCode (Dreaming in Code): curricula of validated environment programs for open-ended RL.

::

    from icml26.dicode import DiCodeCurriculum, MutationDreamer, compile_program, target_program

    world = compile_program(source)  # a world program, validated in the sandbox
    curriculum = DiCodeCurriculum(MutationDreamer(), [target_program()], n_slots=8, target_slots=2)
    programs = curriculum.worlds(rng)  # one world per slot; observe(stats); end_round(profile, rng)

The baselines' schedulers are in :mod:`icml26.dicode.baselines`, the JAX crafting world in
:mod:`icml26.dicode.world`. Light to import: JAX loads on first use of a JAX name.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunConfig": ".config",
        "DiCodeCurriculum": ".curriculum",
        "SlotStats": ".curriculum",
        "LLMDreamer": ".dreamer",
        "MutationDreamer": ".dreamer",
        "WorldProgram": ".program",
        "compile_program": ".program",
        "target_program": ".program",
        "ProgramError": ".sandbox",
        "PPO": ".ppo",
        "PPOSettings": ".ppo",
        "EnvSpec": ".ppo",
        "train_unit": ".training",
        "dreamer_study": ".study",
    },
    submodules=["baselines", "world"],
)

if TYPE_CHECKING:
    from icml26.dicode import baselines as baselines
    from icml26.dicode import world as world
    from icml26.dicode.config import RunConfig as RunConfig
    from icml26.dicode.curriculum import DiCodeCurriculum as DiCodeCurriculum
    from icml26.dicode.curriculum import SlotStats as SlotStats
    from icml26.dicode.dreamer import LLMDreamer as LLMDreamer
    from icml26.dicode.dreamer import MutationDreamer as MutationDreamer
    from icml26.dicode.ppo import PPO as PPO
    from icml26.dicode.ppo import EnvSpec as EnvSpec
    from icml26.dicode.ppo import PPOSettings as PPOSettings
    from icml26.dicode.program import WorldProgram as WorldProgram
    from icml26.dicode.program import compile_program as compile_program
    from icml26.dicode.program import target_program as target_program
    from icml26.dicode.sandbox import ProgramError as ProgramError
    from icml26.dicode.study import dreamer_study as dreamer_study
    from icml26.dicode.training import train_unit as train_unit
