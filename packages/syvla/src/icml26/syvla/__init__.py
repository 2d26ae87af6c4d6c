"""SyVLA: a vision-language-action model with Intention Decoupling and similar-sample
guided RL, on BabyAI (minigrid) with out-of-distribution splits.

>>> from icml26.syvla import SyVLA, ModelConfig, TextEncoder, TextBank, collect_demos
>>> bank = TextBank(TextEncoder())                      # frozen all-MiniLM-L6-v2 (bundled)
>>> demos = collect_demos(200, "train", 13, seed=0)     # BabyAIBot expert
>>> model = SyVLA(ModelConfig(), decouple=True)         # stop-gradient action path
>>> train_bc(model, demos, bank, BCConfig(), seed=0)
>>> train_rl(model, RLConfig(guided=True), bank, demo_views=..., ...)   # guided PPO
>>> evaluate_success(model, bank, "ood_language", 100, seed=1)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Public name -> defining module, imported on first use (PEP 562) so that importing
# ``icml26.syvla.paper`` (what ``icml26 list`` does) never loads torch or minigrid.
_EXPORTS = {
    "BCConfig": "bc",
    "Demos": "data",
    "ModelConfig": "model",
    "RLConfig": "ppo",
    "SPLITS": "levels",
    "SplitSpec": "levels",
    "SuccessBuffer": "guidance",
    "SyVLA": "model",
    "SyVLALevel": "levels",
    "TextBank": "data",
    "TextEncoder": "language",
    "VecEnv": "data",
    "ask": "vqa",
    "clipped_policy_loss": "ppo",
    "collect_demos": "data",
    "egocentric_view": "levels",
    "evaluate_success": "bc",
    "gae": "ppo",
    "make_env": "levels",
    "nearest_neighbours": "guidance",
    "policy_kl": "ppo",
    "train_bc": "bc",
    "train_rl": "ppo",
    "vqa_accuracy": "bc",
}

__all__ = [
    "SPLITS",
    "BCConfig",
    "Demos",
    "ModelConfig",
    "RLConfig",
    "SplitSpec",
    "SuccessBuffer",
    "SyVLA",
    "SyVLALevel",
    "TextBank",
    "TextEncoder",
    "VecEnv",
    "ask",
    "clipped_policy_loss",
    "collect_demos",
    "egocentric_view",
    "evaluate_success",
    "gae",
    "make_env",
    "nearest_neighbours",
    "policy_kl",
    "train_bc",
    "train_rl",
    "vqa_accuracy",
]

if TYPE_CHECKING:
    from icml26.syvla.bc import BCConfig, evaluate_success, train_bc, vqa_accuracy
    from icml26.syvla.data import Demos, TextBank, VecEnv, collect_demos
    from icml26.syvla.guidance import SuccessBuffer, nearest_neighbours
    from icml26.syvla.language import TextEncoder
    from icml26.syvla.levels import SPLITS, SplitSpec, SyVLALevel, egocentric_view, make_env
    from icml26.syvla.model import ModelConfig, SyVLA
    from icml26.syvla.ppo import RLConfig, clipped_policy_loss, gae, policy_kl, train_rl
    from icml26.syvla.vqa import ask


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"icml26.syvla.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *_EXPORTS]
