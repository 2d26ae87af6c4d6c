"""Group-relative policy optimisation (GRPO) on TRL's ``GRPOTrainer``.

For each prompt ``q`` the policy samples a group of ``G`` completions ``o_1..o_G``; each gets
a scalar reward ``r_i`` (the weighted sum of named components, each logged separately as
``rewards/<name>/mean``). The group-relative advantage is

    A_i = (r_i - mean(r_1..r_G)) / (std(r_1..r_G) + 1e-4)        (``scale_rewards="group"``)

and the clipped surrogate per completion token ``t`` (DeepSeekMath eq. 3; DAPO's asymmetric
clip ``epsilon_high``) is

    L_it = -min(rho_it A_i, clip(rho_it, 1 - eps_low, 1 + eps_high) A_i) + beta rho_it KL_it,
    rho_it = pi(o_it | q, o_i<t) / pi_old(o_it | q, o_i<t),
    KL_it = exp(ref_it - logp_it) - (ref_it - logp_it) - 1              (k3 estimator),

the KL term importance-weighted by ``rho_it`` (TRL's default ``use_bias_correction_kl``: the
samples came from ``pi_old``, not ``pi``),

averaged over the tokens the loss mask keeps (completion tokens before and at EOS, minus
tokens an environment wrote, minus truncated completions with ``mask_truncated_completions``)
as the ``loss_type`` says: ``"grpo"`` per sequence then over sequences, ``"dapo"`` over all
tokens of the batch, ``"dr_grpo"`` over ``B * max_completion_length``.
:func:`reference_grpo_loss` computes this directly; a test holds TRL's loss to it.

What this module adds to TRL:

* :class:`GRPOSettings`, validated before anything runs, that maps onto ``GRPOConfig`` with
  CPU-safe defaults (``bf16`` only on a GPU that has it: on the CPU it is 3-4x slower);
* :func:`reward_components`: one function returning several named reward components, split
  into one TRL reward function per component (so each is logged), called once per batch;
  every reward is checked (:class:`RewardError` names the function on a NaN, an infinity or
  a wrong count);
* dynamic sampling (DAPO): groups whose rewards have zero variance carry no advantage and are
  dropped from the loss (their tokens leave the mask and the token count). TRL only logs
  their share (``frac_reward_zero_std``); it cannot refill the batch with new groups within a
  step, so a step trains on fewer groups; the kept share is logged as
  ``dynamic_sampling/kept_frac``;
* :func:`train_grpo`: build, train (``Trainer.train``: accelerate, gradient accumulation,
  checkpoints and callbacks as in any TRL run), and return the per-step log.

The same call scales out: under ``accelerate launch`` (DDP, DeepSpeed ZeRO, FSDP) a step still
trains on ``prompts_per_step`` prompts in all, split over the processes (and over
``gradient_accumulation_steps``), not ``prompts_per_step`` per process. Multi-turn episodes
come through TRL's ``rollout_func`` (:func:`icml26.shared.llm.rollouts.multi_turn_rollout`)
or ``environment_factory`` (tools), both passed through. What this module uses of TRL beyond
its public API is pinned and tested in :mod:`icml26.shared.llm.trl_compat`.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from icml26.shared.llm.sft import quiet_trainer
from icml26.shared.llm.trl_compat import expose_output_bias

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "GRPOSettings",
    "RewardError",
    "checked_reward",
    "completion_text",
    "group_advantages",
    "grpo_trainer_class",
    "make_grpo_trainer",
    "reference_grpo_loss",
    "reward_components",
    "train_grpo",
    "zero_variance_groups",
]

RewardFn = Callable[..., Sequence[float | None]]


class RewardError(ValueError):
    """A reward function returned a non-finite value or the wrong number of rewards."""


def completion_text(completion: Any) -> str:
    """The text of one completion as TRL passes it to reward functions: a string, or a list of
    messages (conversational prompts) whose assistant contents are joined."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        return "".join(str(m.get("content", "")) for m in completion if isinstance(m, dict))
    raise TypeError(
        f"a completion must be a string or a list of messages, got {type(completion).__name__}"
    )


def _check_rewards(name: str, values: Any, n: int) -> list[float | None]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        try:
            values = list(values)
        except TypeError:
            raise RewardError(
                f"reward function {name!r} returned {type(values).__name__}, not a list of floats"
            ) from None
    values = list(values)
    if len(values) != n:
        raise RewardError(
            f"reward function {name!r} returned {len(values)} rewards for {n} completions "
            f"(one per completion is needed)"
        )
    out: list[float | None] = []
    for i, v in enumerate(values):
        if v is None:  # TRL's "not applicable to this sample"
            out.append(None)
            continue
        f = float(v)
        if not math.isfinite(f):
            raise RewardError(f"reward function {name!r} returned {f} for completion {i}")
        out.append(f)
    return out


def checked_reward(fn: RewardFn, name: str | None = None) -> RewardFn:
    """``fn`` with its output checked (see :class:`RewardError`), under ``name`` (TRL logs a
    reward function under its ``__name__``)."""
    label: str = name or str(getattr(fn, "__name__", type(fn).__name__))

    def reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        return _check_rewards(
            label, fn(prompts=prompts, completions=completions, **kwargs), len(completions)
        )

    reward.__name__ = label
    reward.__qualname__ = label
    return reward


def reward_components(
    fn: Callable[..., dict[str, Sequence[float]]], names: Sequence[str]
) -> list[RewardFn]:
    """Split ``fn`` (returning ``{component: rewards}``) into one checked TRL reward function
    per name, so TRL logs each component (``rewards/<name>/mean``) and weights them with
    ``reward_weights``. ``fn`` runs once per batch: the split functions share its result.

    Raises:
        RewardError: at call time, when ``fn`` returns other components than ``names``.
    """
    if not names or len(set(names)) != len(names):
        raise ValueError(f"component names must be distinct and non-empty, got {list(names)!r}")
    # The batch whose result is cached, held by reference (so identity comparison is safe):
    # TRL hands every reward function of a batch the same prompts and completions lists.
    cache: dict[str, Any] = {"batch": None, "value": None}
    label = getattr(fn, "__name__", "reward")

    def compute(prompts: list[Any], completions: list[Any], **kwargs: Any) -> dict[str, Any]:
        batch = cache["batch"]
        if batch is None or batch[0] is not prompts or batch[1] is not completions:
            value = fn(prompts=prompts, completions=completions, **kwargs)
            if not isinstance(value, dict) or set(value) != set(names):
                got = sorted(value) if isinstance(value, dict) else type(value).__name__
                raise RewardError(
                    f"reward function {label!r} must return the components {sorted(names)}, got {got}"
                )
            cache["batch"], cache["value"] = (prompts, completions), value
        return cache["value"]

    def make(component: str) -> RewardFn:
        def reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
            values = compute(prompts, completions, **kwargs)[component]
            return _check_rewards(f"{label}.{component}", values, len(completions))

        reward.__name__ = component
        reward.__qualname__ = component
        return reward

    return [make(c) for c in names]


# ------------------------------------------------------------------------- reference maths
def group_advantages(
    rewards: torch.Tensor, group_size: int, *, scale: Literal["group", "batch", "none"] = "group"
) -> torch.Tensor:
    """``A_i = (r_i - mean_group) / (std_group + 1e-4)`` for rewards laid out group by group
    (``std`` with Bessel's correction, as TRL); ``scale="batch"`` divides by the batch std,
    ``"none"`` does not divide (Dr. GRPO)."""
    import torch

    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    grouped = rewards.view(-1, group_size)
    centred = (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)
    if scale == "none":
        return centred
    if scale == "group":
        std = grouped.std(dim=1, keepdim=True).expand_as(grouped).reshape(-1)
    elif scale == "batch":
        std = rewards.std().expand_as(rewards)
    else:
        raise ValueError(f"scale must be 'group', 'batch' or 'none', got {scale!r}")
    return centred / (std + 1e-4) if group_size > 1 else torch.zeros_like(centred)


def zero_variance_groups(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """A boolean per completion: its group's rewards are all equal (no learning signal)."""
    import torch

    grouped = rewards.view(-1, group_size)
    flat = torch.isclose(grouped.std(dim=1), torch.zeros(grouped.shape[0], dtype=grouped.dtype))
    return flat.repeat_interleave(group_size)


def reference_grpo_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
    ref_logps: torch.Tensor | None = None,
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "grpo",
    max_completion_length: int | None = None,
    kl_importance_weighted: bool = True,
) -> torch.Tensor:
    """The GRPO objective of the module docstring, written out for ``(B, T)`` per-token
    log-probabilities, ``(B,)`` advantages and a ``(B, T)`` 0/1 loss mask."""
    import torch

    ratio = torch.exp(logps - old_logps)
    adv = advantages.unsqueeze(1)
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    per_token = -torch.minimum(ratio * adv, clipped * adv)
    if beta:
        if ref_logps is None:
            raise ValueError("beta > 0 needs ref_logps")
        d = ref_logps - logps
        kl = torch.exp(d) - d - 1
        per_token = per_token + beta * (kl * ratio if kl_importance_weighted else kl)
    m = mask.to(per_token.dtype)
    if loss_type == "grpo":
        return ((per_token * m).sum(1) / m.sum(1).clamp(min=1)).mean()
    if loss_type in ("dapo", "bnpo"):
        return (per_token * m).sum() / m.sum().clamp(min=1)
    if loss_type == "dr_grpo":
        if max_completion_length is None:
            raise ValueError("loss_type='dr_grpo' needs max_completion_length")
        return (per_token * m).sum() / (per_token.shape[0] * max_completion_length)
    raise ValueError(f"unknown loss_type {loss_type!r}")


# ------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class GRPOSettings:
    """One GRPO run's knobs (validated here, before a model is touched).

    Attributes:
        steps: optimiser steps.
        prompts_per_step: distinct prompts per step; each gets ``num_generations`` samples.
        num_generations: the group size ``G`` (>= 2).
        max_completion_length: new tokens per completion at most.
        lr: AdamW learning rate (constant schedule).
        temperature, top_p: sampling.
        beta: KL coefficient to the reference (the initial policy; the base model under
            LoRA); 0 loads no reference.
        epsilon, epsilon_high: clip range ``[1 - epsilon, 1 + epsilon_high]`` (DAPO's
            asymmetric clip when ``epsilon_high > epsilon``; ``None``: symmetric).
        loss_type: ``"grpo"``, ``"dapo"``, ``"dr_grpo"`` or ``"bnpo"`` (module docstring).
        scale_rewards: ``"group"``, ``"batch"`` or ``"none"``.
        mask_truncated_completions: completions cut at ``max_completion_length`` leave the loss.
        dynamic_sampling: drop zero-variance groups from the loss (needs a token-level
            ``loss_type``: ``"dapo"`` or ``"bnpo"``).
        reward_weights: one weight per reward function (``None``: all 1).
        num_iterations: updates per generated batch (``pi_old`` differs from ``pi`` after the
            first).
        seed: TRL's seed (sampling and data order).
        use_vllm, vllm_mode: generation by vLLM on a GPU (``"colocate"`` or ``"server"``;
            vLLM is not in this workspace's lock: see the shared README).
        gradient_checkpointing: trade compute for memory on large models.
        gradient_accumulation_steps: micro-batches per optimiser step. A step's
            ``prompts_per_step * num_generations`` completions are split over the processes
            and these micro-batches (generated once per step, as TRL does), so the step
            trains on the same prompts whatever the number of processes.
    """

    steps: int = 100
    prompts_per_step: int = 4
    num_generations: int = 8
    max_completion_length: int = 32
    lr: float = 1e-4
    temperature: float = 1.0
    top_p: float = 1.0
    beta: float = 0.0
    epsilon: float = 0.2
    epsilon_high: float | None = None
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "dapo"
    scale_rewards: Literal["group", "batch", "none"] = "group"
    mask_truncated_completions: bool = False
    dynamic_sampling: bool = False
    reward_weights: tuple[float, ...] | None = None
    num_iterations: int = 1
    seed: int = 0
    use_vllm: bool = False
    vllm_mode: Literal["colocate", "server"] = "colocate"
    gradient_checkpointing: bool = False
    gradient_accumulation_steps: int = 1

    def __post_init__(self) -> None:
        for name in (
            "steps",
            "prompts_per_step",
            "max_completion_length",
            "num_iterations",
            "gradient_accumulation_steps",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "steps" else 1):
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.num_generations < 2:
            raise ValueError(
                f"num_generations must be >= 2 (a group-relative advantage needs a group), got {self.num_generations}"
            )
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if not self.temperature > 0 or not 0 < self.top_p <= 1:
            raise ValueError(
                f"need temperature > 0 and 0 < top_p <= 1, got {self.temperature}, {self.top_p}"
            )
        if self.beta < 0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if not 0 < self.epsilon < 1:
            raise ValueError(f"epsilon must be in (0, 1), got {self.epsilon}")
        if self.epsilon_high is not None and not self.epsilon_high > 0:
            raise ValueError(f"epsilon_high must be > 0, got {self.epsilon_high}")
        if self.loss_type not in ("grpo", "dapo", "dr_grpo", "bnpo"):
            raise ValueError(f"unknown loss_type {self.loss_type!r}")
        if self.scale_rewards not in ("group", "batch", "none"):
            raise ValueError(f"unknown scale_rewards {self.scale_rewards!r}")
        if self.dynamic_sampling and self.loss_type not in ("dapo", "bnpo"):
            raise ValueError(
                "dynamic_sampling drops groups from a token-level loss: set loss_type='dapo' or "
                f"'bnpo' (got {self.loss_type!r}, whose per-sequence mean would still count them)"
            )
        if self.reward_weights is not None and not all(
            math.isfinite(w) for w in self.reward_weights
        ):
            raise ValueError(f"reward_weights must be finite, got {self.reward_weights}")
        if self.vllm_mode not in ("colocate", "server"):
            raise ValueError(f"vllm_mode must be 'colocate' or 'server', got {self.vllm_mode!r}")

    @property
    def batch_size(self) -> int:
        """Completions per step (``prompts_per_step * num_generations``)."""
        return self.prompts_per_step * self.num_generations

    def per_device_batch_size(self, world_size: int) -> int:
        """Completions per process and micro-batch: the step's completions split over
        ``world_size`` processes and ``gradient_accumulation_steps`` micro-batches.

        Raises:
            ValueError: they do not split evenly.
        """
        parts = world_size * self.gradient_accumulation_steps
        if world_size < 1 or self.batch_size % parts:
            raise ValueError(
                f"a step's {self.prompts_per_step} prompts x {self.num_generations} generations = "
                f"{self.batch_size} completions do not split evenly over {world_size} "
                f"process(es) x {self.gradient_accumulation_steps} accumulation step(s): change "
                f"prompts_per_step, num_generations or gradient_accumulation_steps"
            )
        return self.batch_size // parts

    def to_trl(self, output_dir: str | Path, **overrides: Any) -> Any:
        """The equivalent ``trl.GRPOConfig`` (no checkpoints, no reporting, log every step).

        The number of processes is read from ``WORLD_SIZE`` (set by ``accelerate launch`` and
        ``torchrun``; 1 otherwise) and checked against the distributed state TRL sees.
        """
        import torch
        from trl import GRPOConfig

        world = int(os.environ.get("WORLD_SIZE", "1"))
        on_gpu = torch.cuda.is_available()
        kwargs: dict[str, Any] = {
            "output_dir": str(output_dir),
            "max_steps": self.steps,
            "per_device_train_batch_size": self.per_device_batch_size(world),
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
            "num_generations": self.num_generations,
            "max_completion_length": self.max_completion_length,
            "learning_rate": self.lr,
            "lr_scheduler_type": "constant",
            "warmup_steps": 0,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "epsilon_high": self.epsilon_high,
            "loss_type": self.loss_type,
            "scale_rewards": self.scale_rewards,
            "mask_truncated_completions": self.mask_truncated_completions,
            "reward_weights": list(self.reward_weights) if self.reward_weights else None,
            "num_iterations": self.num_iterations,
            "seed": self.seed,
            "use_vllm": self.use_vllm,
            "vllm_mode": self.vllm_mode,
            "gradient_checkpointing": self.gradient_checkpointing,
            "bf16": on_gpu and torch.cuda.is_bf16_supported(),
            # Without CUDA, use_cpu makes accelerate pair the processes of a torchrun /
            # `accelerate launch --multi_gpu` launch over gloo (MULTI_CPU); else each is alone.
            "use_cpu": not on_gpu,
            "logging_steps": 1,
            "save_strategy": "no",
            "report_to": "none",
            "disable_tqdm": True,
            "log_completions": False,
            "dataloader_num_workers": 0,
        }
        kwargs.update(overrides)
        config = GRPOConfig(**kwargs)
        if config.world_size != world:
            raise RuntimeError(
                f"WORLD_SIZE says {world} process(es) but the distributed state has "
                f"{config.world_size}: launch with accelerate or torchrun, which set both"
            )
        return config


_TRAINER: list[type] = []


def grpo_trainer_class() -> type:
    """Our ``GRPOTrainer`` subclass: TRL's trainer plus dynamic sampling (built on first use:
    importing TRL costs seconds). Subclass it to extend a public hook (``compute_loss``,
    ``log``, ...) and pass the subclass to :func:`make_grpo_trainer` as ``trainer_class``.

    Overrides two private methods of TRL 1.16 (pinned and hashed in
    :mod:`icml26.shared.llm.trl_compat`) and the public ``Trainer.log``.

    Raises:
        RuntimeError: TRL outside the pinned range.
    """
    if _TRAINER:
        return _TRAINER[0]
    from trl import GRPOTrainer

    from icml26.shared.llm.trl_compat import check_trl_version

    check_trl_version()

    class Trainer(GRPOTrainer):
        dynamic_sampling = False

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.icml26_kept_fractions: list[float] = []

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[no-untyped-def]
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self.icml26_batch_rewards = rewards  # gathered over processes, one column per function
            return rewards

        def _generate_and_score_completions(self, inputs):  # type: ignore[no-untyped-def]
            out = super()._generate_and_score_completions(inputs)
            if not self.dynamic_sampling or not self.model.training:
                return out
            per_func = self.icml26_batch_rewards
            total = (per_func * self.reward_weights.to(per_func.device).unsqueeze(0)).nansum(dim=1)
            flat = zero_variance_groups(total.cpu(), self.num_generations).to(total.device)
            n_local = out["completion_ids"].shape[0]
            start = self.accelerator.process_index * n_local
            keep = (~flat[start : start + n_local]).to(out["completion_mask"].dtype)
            out["completion_mask"] = out["completion_mask"] * keep.unsqueeze(1)
            loss_mask = out["completion_mask"]
            if "tool_mask" in out:
                loss_mask = loss_mask * out["tool_mask"]
            out["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
            self.icml26_kept_fractions.append(float((~flat).float().mean()))
            return out

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if self.icml26_kept_fractions and "loss" in logs:
                kept = self.icml26_kept_fractions
                logs["dynamic_sampling/kept_frac"] = sum(kept) / len(kept)
                kept.clear()
            super().log(logs, start_time)

    _TRAINER.append(Trainer)
    return Trainer


def make_grpo_trainer(
    model: Any,
    tokenizer: Any,
    reward_funcs: Sequence[RewardFn],
    train_dataset: Any,
    settings: GRPOSettings,
    *,
    output_dir: str | Path,
    rollout_func: Callable[..., dict[str, Any]] | None = None,
    environment_factory: Any = None,
    tools: Sequence[Callable[..., Any]] | None = None,
    peft_config: Any = None,
    callbacks: Sequence[Any] | None = None,
    trainer_class: type | None = None,
    **trl_overrides: Any,
) -> Any:
    """A ``GRPOTrainer`` (with :class:`GRPOSettings`' dynamic sampling) on ``model``.

    Args:
        reward_funcs: TRL reward functions (``f(prompts, completions, **columns) ->
            list[float | None]``), each wrapped by :func:`checked_reward`; may be empty when
            ``environment_factory``'s environments own the reward (``get_reward``).
        train_dataset: a ``datasets.Dataset`` with a ``"prompt"`` column (strings or chat
            messages) and any columns the reward functions read (``answer=...``), or a list
            of such dicts.
        rollout_func: a TRL ``rollout_func`` (e.g. :func:`icml26.shared.llm.rollouts.multi_turn_rollout`).
        environment_factory, tools: TRL's own multi-turn tool loop (a model whose chat
            template renders tool calls), passed through.
        peft_config: a peft config to wrap ``model`` with (or pass a ``PeftModel``).
        callbacks: ``transformers.TrainerCallback`` objects (e.g. to stop a phase early).
        trainer_class: a subclass of :func:`grpo_trainer_class` (default: that class).
        trl_overrides: any other ``GRPOConfig`` field.

    Raises:
        ValueError: no reward source, reward weights that do not match, a dataset without a
            ``"prompt"`` column, or a batch that does not split over the processes.
        RuntimeError: TRL outside the pinned range (:mod:`icml26.shared.llm.trl_compat`).
    """
    from datasets import Dataset

    if not reward_funcs and environment_factory is None:
        raise ValueError("GRPO needs at least one reward function (or an environment_factory)")
    if settings.reward_weights is not None and len(settings.reward_weights) != len(reward_funcs):
        raise ValueError(
            f"{len(settings.reward_weights)} reward_weights for {len(reward_funcs)} reward functions"
        )
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if isinstance(train_dataset, list):
        train_dataset = Dataset.from_list(train_dataset)
    if train_dataset is not None and "prompt" not in train_dataset.column_names:
        raise ValueError(f"train_dataset needs a 'prompt' column, has {train_dataset.column_names}")
    funcs = [checked_reward(f) for f in reward_funcs]
    Trainer = trainer_class or grpo_trainer_class()
    restore = _snapshot_reference(model, settings, peft_config, Path(output_dir))
    try:
        trainer = Trainer(
            model=model,
            reward_funcs=funcs,
            args=settings.to_trl(output_dir, **trl_overrides),
            train_dataset=train_dataset,
            processing_class=tokenizer,
            rollout_func=rollout_func,
            environment_factory=environment_factory,
            tools=list(tools) if tools else None,
            peft_config=peft_config,
            callbacks=list(callbacks) if callbacks else None,
        )
    finally:
        restore()
    expose_output_bias(trainer.model)  # new token rows on a tied head (peft wrapper): see there
    trainer.dynamic_sampling = settings.dynamic_sampling
    quiet_trainer(trainer)
    return trainer


def _snapshot_reference(
    model: Any, settings: GRPOSettings, peft_config: Any, output_dir: Path
) -> Callable[[], None]:
    """With ``beta > 0`` and no LoRA, TRL loads the KL reference from
    ``model.config.name_or_path``: the checkpoint the model came from, not its current
    weights (after SFT, they differ), and nothing at all for a model built in memory. Save the
    current weights to ``output_dir/reference`` and point the config there while the trainer
    is built; the returned function restores the original name."""
    from peft import PeftModel

    if settings.beta == 0 or peft_config is not None or isinstance(model, PeftModel):
        return lambda: None
    folder = output_dir / f"reference-rank{os.environ.get('RANK', '0')}"  # no two writers
    model.save_pretrained(folder)
    original = model.config.name_or_path
    model.config.name_or_path = str(folder)

    def restore() -> None:
        model.config.name_or_path = original

    return restore


def train_grpo(
    model: Any,
    tokenizer: Any,
    reward_funcs: Sequence[RewardFn],
    train_dataset: Any,
    settings: GRPOSettings,
    *,
    output_dir: str | Path | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """Train ``model`` in place with GRPO; return TRL's per-step log (``reward``,
    ``rewards/<name>/mean``, ``kl``, ``clip_ratio/*``, ``frac_reward_zero_std``, ...)."""
    with tempfile.TemporaryDirectory(prefix="icml26-grpo-") as tmp:
        trainer = make_grpo_trainer(
            model,
            tokenizer,
            reward_funcs,
            train_dataset,
            settings,
            output_dir=output_dir or tmp,
            **kwargs,
        )
        trainer.train()
        history = [h for h in trainer.state.log_history if "reward" in h]
    model.eval()
    return history
