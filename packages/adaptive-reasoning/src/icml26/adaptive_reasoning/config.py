"""Run and bench configurations (frozen dataclasses, validated before anything runs; no
framework imports)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from icml26.shared.devices import check_torch_device

__all__ = ["TOKEN_COST", "AdaptiveConfig", "BenchConfig"]

#: The stage-2 reward's cost per reasoning token: the one default of the run's config and of
#: :class:`~icml26.adaptive_reasoning.grpo.ModeGRPOSettings`.
TOKEN_COST = 0.01

_GUARDS = ("balanced", "none")
_ENGINES = ("loop", "trl")


def _ints(obj: object, minimum: int, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")


def _positive(obj: object, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float)
            or not (v > 0 and math.isfinite(v))
        ):
            raise ValueError(f"{name} must be a positive number, got {v!r}")


def _unit(obj: object, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {v!r}")


@dataclass(frozen=True)
class AdaptiveConfig:
    """Everything ``icml26 run adaptive-reasoning`` does.

    Tiny model (every method, the claims): trained from scratch, stage 1 (``sft_*``) then
    stage 2 (``grpo_*``), on ``train_problems`` generated problems per seed, for ``seeds``
    seeds (``seed``, ``seed + 1``, ...); evaluated greedily on ``eval_per_split`` held-out
    problems of each split.

    ``model`` other than ``"tiny"`` (a built-in name such as ``smollm2-135m-instruct-q4_1``, a
    folder, a ``.gguf`` or a Hugging Face id) trains *every* method on that model with LoRA.
    ``large_model`` (``""`` skips) additionally trains ``ours`` only on a pretrained model
    with LoRA (``large_*`` sizes, first seed), reported without a claim.

    Attributes:
        seed: the first seed; seed ``k`` of ``seeds`` is ``seed + k`` (separate streams are
            drawn from it).
        seeds: independent training seeds.
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        model: ``"tiny"`` or a checkpoint spec on which every method is trained with LoRA.
        hidden_size: the tiny model's hidden width.
        num_layers: its layers.
        vocab_size: its vocabulary size.
        lora_rank: rank of the LoRA adapters (checkpoint models).
        train_problems: generated training problems per seed.
        complex_share: probability that a training problem is complex.
        verbose_if_simple: probability that a simple training problem is worded verbosely.
        verbose_if_complex: probability that a complex one is (larger: the shortcut real data
            offers).
        eval_per_split: held-out problems evaluated per split.
        sft_steps: stage-1 (SFT) steps.
        sft_lr: its learning rate.
        sft_batch: its batch size.
        sft_engine: the shared SFT engine: ``loop`` or ``trl``.
        grpo_steps: stage-2 (GRPO) steps.
        grpo_prompts: prompts per GRPO step.
        grpo_generations: completions per prompt (the group).
        grpo_lr: GRPO's learning rate.
        grpo_temperature: sampling temperature of the GRPO rollouts.
        guard: ``"balanced"`` (half of each group per mode) or ``"none"``.
        token_cost: the reward's cost per reasoning token (reward = correct - cost x tokens).
        max_new_tokens: new tokens per reply at most.
        large_model: a pretrained checkpoint on which ``ours`` alone is also trained (``""``
            skips it).
        large_sft_steps: its SFT steps.
        large_sft_batch: its SFT batch size.
        large_sft_lr: its SFT learning rate.
        large_grpo_steps: its GRPO steps.
        large_grpo_prompts: its prompts per GRPO step.
        large_grpo_generations: its completions per prompt.
        large_grpo_lr: its GRPO learning rate.
        large_eval_per_split: its held-out problems per split.

    Raises:
        ValueError: a value out of range, an unknown guard or SFT engine, or a ``large_*``
            size set without ``large_model``.
    """

    seed: int = 0
    seeds: int = 3
    device: str = "cpu"
    threads: int = 1
    model: str = "tiny"
    hidden_size: int = 64
    num_layers: int = 2
    vocab_size: int = 700
    lora_rank: int = 16
    # data
    train_problems: int = 3000
    complex_share: float = 0.5
    verbose_if_simple: float = 0.0
    verbose_if_complex: float = 0.9
    eval_per_split: int = 120
    # stage 1
    sft_steps: int = 250
    sft_lr: float = 3e-3
    sft_batch: int = 16
    sft_engine: str = "loop"
    # stage 2
    grpo_steps: int = 8
    grpo_prompts: int = 8
    grpo_generations: int = 8
    grpo_lr: float = 5e-4
    grpo_temperature: float = 1.0
    guard: str = "balanced"
    token_cost: float = TOKEN_COST
    max_new_tokens: int = 40
    # the pretrained model trained on `ours` only
    large_model: str = ""
    large_sft_steps: int = 40
    large_sft_batch: int = 8
    large_sft_lr: float = 2e-4
    large_grpo_steps: int = 6
    large_grpo_prompts: int = 2
    large_grpo_generations: int = 8
    large_grpo_lr: float = 1e-4
    large_eval_per_split: int = 50

    def __post_init__(self) -> None:
        _ints(self, 0, "seed", "sft_steps", "grpo_steps", "large_sft_steps", "large_grpo_steps")
        _ints(
            self,
            1,
            "seeds",
            "threads",
            "hidden_size",
            "num_layers",
            "vocab_size",
            "lora_rank",
            "train_problems",
            "eval_per_split",
            "sft_batch",
            "grpo_prompts",
            "max_new_tokens",
            "large_sft_batch",
            "large_grpo_prompts",
            "large_eval_per_split",
        )
        _ints(self, 2, "grpo_generations", "large_grpo_generations")
        _positive(self, "sft_lr", "grpo_lr", "grpo_temperature", "large_sft_lr", "large_grpo_lr")
        _unit(self, "complex_share", "verbose_if_simple", "verbose_if_complex")
        if isinstance(self.token_cost, bool) or not (
            isinstance(self.token_cost, int | float) and 0 <= self.token_cost < math.inf
        ):
            raise ValueError(f"token_cost must be a number >= 0, got {self.token_cost!r}")
        check_torch_device(self.device, allowed=("auto", "cpu", "mps"))
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError("model must be 'tiny' or a model spec (name, folder, .gguf, hub id)")
        if self.guard not in _GUARDS:
            raise ValueError(f"unknown guard {self.guard!r}; choose from {list(_GUARDS)}")
        if self.sft_engine not in _ENGINES:
            raise ValueError(
                f"unknown sft_engine {self.sft_engine!r}; choose from {list(_ENGINES)}"
            )
        if self.guard == "balanced" and (
            self.grpo_generations % 2 or self.large_grpo_generations % 2
        ):
            raise ValueError(
                "guard='balanced' needs even grpo_generations and large_grpo_generations"
            )
        if not self.large_model:
            unused = [
                f.name
                for f in fields(self)
                if f.name.startswith("large_")
                and f.name != "large_model"
                and getattr(self, f.name) != f.default
            ]
            if unused:
                raise ValueError(
                    f"{', '.join(unused)} only apply to the pretrained model: set large_model "
                    "(e.g. large_model=smollm2-135m-instruct-q4_1) to use them"
                )
        if self.verbose_if_complex <= self.verbose_if_simple:
            raise ValueError(
                "verbose_if_complex must exceed verbose_if_simple: the natural data needs the "
                "length-complexity correlation the no-augmentation reasoner can learn"
            )


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench adaptive-reasoning``: tokens and wall time per solved problem for each
    method (a small tiny-model run), and GRPO steps per second."""

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    train_problems: int = 2000
    sft_steps: int = 150
    grpo_steps: int = 6
    eval_per_split: int = 64
    hidden_size: int = 96
    num_layers: int = 3

    def __post_init__(self) -> None:
        _ints(self, 0, "seed", "sft_steps")
        _ints(
            self,
            1,
            "threads",
            "train_problems",
            "grpo_steps",
            "eval_per_split",
            "hidden_size",
            "num_layers",
        )
        check_torch_device(self.device, allowed=("auto", "cpu", "mps"))
