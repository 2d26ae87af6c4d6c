"""Iterative regret-minimization fine-tuning (RMFT) for decision-making.

Public API (torch is imported on first use of a name, never by ``icml26.rmft.paper``)::

    from icml26.rmft import ArmTransformer, ModelConfig, RMFTSettings, numeric_rmft_iteration
    model = ArmTransformer(ModelConfig())
    stats = numeric_rmft_iteration(model, parse_env("bernoulli_k5_t50"), RMFTSettings(), rng)

Environments with exact regret (``parse_env``, ``sample_instances``), classical baselines
(the ``baselines`` module: UCB, Thompson sampling, greedy, EXP3, Hedge), the numerical
Transformer and its RMFT loop, and LLM policies (``LLMPolicy``) with LoRA RMFT
(``llm_rmft_iteration``) on the shared SFT path. See the README.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

if TYPE_CHECKING:
    from .config import RunConfig as RunConfig
    from .envs import parse_env as parse_env
    from .envs import sample_instances as sample_instances
    from .llm_policy import LLMPolicy as LLMPolicy
    from .llm_policy import parse_action as parse_action
    from .llm_rmft import LLMSettings as LLMSettings
    from .llm_rmft import llm_rmft_iteration as llm_rmft_iteration
    from .model import ArmTransformer as ArmTransformer
    from .model import ModelConfig as ModelConfig
    from .model import TransformerPolicy as TransformerPolicy
    from .rmft import RMFTSettings as RMFTSettings
    from .rmft import numeric_rmft_iteration as numeric_rmft_iteration
    from .rmft import weak_pretraining as weak_pretraining
    from .rollouts import rollout as rollout
    from .selection import selection_regret as selection_regret

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "RunConfig": ".config",
        "parse_env": ".envs",
        "sample_instances": ".envs",
        "LLMPolicy": ".llm_policy",
        "parse_action": ".llm_policy",
        "LLMSettings": ".llm_rmft",
        "llm_rmft_iteration": ".llm_rmft",
        "ArmTransformer": ".model",
        "ModelConfig": ".model",
        "TransformerPolicy": ".model",
        "RMFTSettings": ".rmft",
        "numeric_rmft_iteration": ".rmft",
        "weak_pretraining": ".rmft",
        "rollout": ".rollouts",
        "selection_regret": ".selection",
    },
    submodules=["baselines"],
)
