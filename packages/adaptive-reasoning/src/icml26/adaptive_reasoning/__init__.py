"""Verbosity-robust adaptive reasoning: think or answer directly by *true* complexity.

::

    from icml26.adaptive_reasoning import (
        AnswerChecker, ModeGRPOSettings, ModelSpec, Policy, build_model, load_problems,
        to_conversations, train_mode_grpo,
    )

    problems = load_problems("train.jsonl")  # GSM8K-style: question, "... #### 18"
    model, tok = build_model(ModelSpec("tiny"))
    sft(model, tok, to_conversations(problems, "both"), SFTSettings(steps=100))  # stage 1
    train_mode_grpo(Policy(model, tok), problems, ModeGRPOSettings(steps=20))  # stage 2

Stage 1 (:func:`~icml26.shared.llm.sft.sft` on :func:`to_conversations`) teaches the two
modes (``<think>...</think>answer`` and ``<no_think>answer``); stage 2
(:func:`train_mode_grpo`, GRPO through the shared TRL path) learns which to use from
correctness and reasoning cost alone (:func:`adaptive_reward`; no complexity label).
Baselines in :mod:`icml26.adaptive_reasoning.baselines`, the methods trained in a run in
:mod:`icml26.adaptive_reasoning.methods`. Importing this package does not import torch.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AdaptiveConfig": ".config",
        "AnswerChecker": ".answers",
        "Problem": ".tasks",
        "load_problems": ".tasks",
        "make_split": ".tasks",
        "to_conversations": ".sft_data",
        "ModeGRPOSettings": ".grpo",
        "train_mode_grpo": ".grpo",
        "adaptive_reward": ".reward",
        "Policy": ".policy",
        "ModelSpec": ".models",
        "build_model": ".models",
        "evaluate_method": ".evaluate",
        "parse_reply": ".modes",
    },
    submodules=["baselines", "methods"],
)

if TYPE_CHECKING:
    from icml26.adaptive_reasoning import baselines as baselines
    from icml26.adaptive_reasoning import methods as methods
    from icml26.adaptive_reasoning.answers import AnswerChecker as AnswerChecker
    from icml26.adaptive_reasoning.config import AdaptiveConfig as AdaptiveConfig
    from icml26.adaptive_reasoning.evaluate import evaluate_method as evaluate_method
    from icml26.adaptive_reasoning.grpo import ModeGRPOSettings as ModeGRPOSettings
    from icml26.adaptive_reasoning.grpo import train_mode_grpo as train_mode_grpo
    from icml26.adaptive_reasoning.models import ModelSpec as ModelSpec
    from icml26.adaptive_reasoning.models import build_model as build_model
    from icml26.adaptive_reasoning.modes import parse_reply as parse_reply
    from icml26.adaptive_reasoning.policy import Policy as Policy
    from icml26.adaptive_reasoning.reward import adaptive_reward as adaptive_reward
    from icml26.adaptive_reasoning.sft_data import to_conversations as to_conversations
    from icml26.adaptive_reasoning.tasks import Problem as Problem
    from icml26.adaptive_reasoning.tasks import load_problems as load_problems
    from icml26.adaptive_reasoning.tasks import make_split as make_split
