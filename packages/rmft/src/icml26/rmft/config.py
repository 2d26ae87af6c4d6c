"""Run and bench configurations (frozen dataclasses, validated; no framework imports)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from icml26.shared.devices import check_torch_device

__all__ = ["ENV_NAME", "INVALID_RULES", "KINDS", "BenchConfig", "RunConfig", "env_kind"]

#: Environment kinds (see :mod:`icml26.rmft.envs`).
KINDS: tuple[str, ...] = ("bernoulli", "gaussian", "nonstationary", "experts", "restaurants")
#: An environment name: ``<kind>_k<K>_t<T>``.
ENV_NAME = re.compile(r"^(?P<kind>[a-z]+)_k(?P<k>\d+)_t(?P<t>\d+)$")
#: How an invalid LLM step counts when rollouts are selected
#: (:func:`icml26.rmft.selection.selection_regret`).
INVALID_RULES = ("worst", "end", "played")


def env_kind(name: str) -> str:
    """The kind of environment ``name`` (``"bernoulli_k5_t50"`` -> ``"bernoulli"``).

    Raises:
        ValueError: the name does not match ``<kind>_k<K>_t<T>``, the kind is unknown,
            ``K < 2`` or ``T < 1``.
    """
    match = ENV_NAME.match(str(name))
    if not match or match["kind"] not in KINDS:
        raise ValueError(
            f"environment name {name!r} must look like '<kind>_k<K>_t<T>' with kind in {KINDS}"
        )
    if int(match["k"]) < 2:
        raise ValueError(f"an environment needs K >= 2 arms, got {name!r}")
    if int(match["t"]) < 1:
        raise ValueError(f"the horizon must be T >= 1, got {name!r}")
    return match["kind"]


_NUMERIC_KINDS = {"bernoulli", "gaussian", "nonstationary"}
_BASELINES = {"ucb", "ts", "greedy", "exp3", "hedge", "random"}


def _check_model_spec(spec: str, field: str) -> None:
    """A model spec names something loadable: a built-in name, an existing folder or GGUF
    file, a Hugging Face id, or ``tiny-random``. A path that does not exist is refused here,
    in config validation, before the run writes anything."""
    if not spec or spec == "tiny-random":
        return
    from icml26.shared.llm.loader import ModelSpecError, resolve_spec

    try:
        resolve_spec(spec)
    except ModelSpecError as exc:
        raise ValueError(f"{field}={spec!r}: {exc}") from exc


def check_positive(obj: object, *names: str) -> None:
    """Raise unless each named field of ``obj`` is a finite number ``> 0`` (NaN fails).

    Args:
        obj: the settings object.
        *names: its fields to check.

    Raises:
        ValueError: naming the first field that is not a finite positive number.
    """
    for name in names:
        value = getattr(obj, name)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value < math.inf
        ):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def _non_negative(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


@dataclass(frozen=True)
class RunConfig:
    """Everything ``icml26 run rmft`` does.

        Numerical Transformer (``numeric=False`` skips it: an LLM-only run): pretrained weakly on
        ``train_env`` (random and greedy trajectories), then ``rmft_iterations`` of RMFT;
        evaluated with ``eval_instances`` instances per environment of ``eval_envs`` after
        pretraining and after every iteration, sampled and greedily (matched decoding).
        ``eval_envs`` beyond ``train_env`` should change one thing each (horizon, arms or reward
        process: see :func:`~icml26.rmft.metrics.generalisation_axis`). ``nonstationary_env``
        trains a second model on the non-stationary bandit, its own setting, and ``experts_env``
        (full information) a third one ("" skips either).
        ``eval_every_iteration=False`` evaluates the iterations before the last (and the final
        model decoded greedily) on the training environment only, a cheaper run with the same
        final comparisons.

        LLM path (``llm_model`` = "" skips it): a built-in name (``smollm2-135m-instruct-q4_1``), a
        folder, a GGUF file, a Hugging Face id, or ``tiny-random`` (a random model for smoke
        runs). With ``llm_endpoint`` (an OpenAI-compatible URL) and ``llm_endpoint_model`` the
        base policy is evaluated through the endpoint instead and the selected transcripts are
        written as fine-tuning JSONL (closed models cannot be fine-tuned locally).
        ``llm_invalid`` is how a malformed reply counts when rollouts are selected (``worst``
        arm, ``end`` of the episode, or ``played``: the random fallback's regret, an ablation);
        ``llm_engine`` the shared SFT engine (``trl`` or ``loop``); ``llm_parse`` how replies are
    read (``strict``: only the requested ``Action: <n>`` line is a valid decision; ``lenient``,
    an ablation, also reads ``button 3`` or a lone number); ``llm_random_control=False``
        skips the LLM's random-selection loop (its claim is then undecided).

        Attributes:
            seed: the run's seed; separate random streams are drawn from it.
            device: the torch device (``cpu``, ``cuda``).
            threads: CPU threads of the job, set by the runner before it starts.
            baselines: the classical bandit algorithms evaluated beside the Transformer.
            d_model: the numerical Transformer's width.
            n_layers: its layers.
            n_heads: its attention heads.
            pretrain_trajectories: trajectories of the weak pretraining on ``train_env``.
            greedy_fraction: share of them played by the greedy algorithm (the rest uniformly
                random).
            pretrain_steps: optimiser steps of the pretraining.
            pretrain_lr: its learning rate.
            batch_size: trajectories per optimiser step (pretraining and fine-tuning).
            rollout_instances: fresh instances rolled out per RMFT iteration.
            rollouts_per_instance: self-rollouts per instance (the selection ranks them by regret).
            keep_per_instance: lowest-regret rollouts kept per instance for fine-tuning.
            finetune_steps: optimiser steps of each iteration's fine-tuning.
            finetune_lr: its learning rate.
            rollout_temperature: sampling temperature of the rollouts.
            llm_env: the LLM's numeric-prompt bandit environment.
            llm_nl_env: the LLM's natural-language environment (``""`` skips it).
            llm_iterations: RMFT iterations of the LLM.
            llm_eval_instances: evaluation instances per LLM environment.
            llm_rollout_instances: fresh instances rolled out per LLM iteration.
            llm_rollouts_per_instance: LLM rollouts per instance.
            llm_keep_per_instance: LLM rollouts kept per instance.
            llm_steps: SFT optimiser steps per LLM iteration.
            llm_lr: the LLM SFT's learning rate (LoRA).
            llm_batch_size: the LLM SFT's batch size.
            llm_temperature: sampling temperature of the LLM's rollouts.
            llm_max_tokens: the LLM's reply length cap (tokens).
            lora_rank: rank of the LLM's LoRA adapters.

        Raises:
            ValueError: a field out of range, an environment name of the wrong kind, an unknown
                baseline, selection rule or engine, or a model spec that cannot be resolved.
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    # numerical Transformer
    numeric: bool = True
    train_env: str = "bernoulli_k5_t50"
    eval_envs: tuple[str, ...] = (
        "bernoulli_k5_t50",
        "bernoulli_k5_t100",
        "bernoulli_k5_t200",
        "bernoulli_k8_t50",
        "gaussian_k5_t50",
        "nonstationary_k5_t50",
    )
    eval_instances: int = 256
    baselines: tuple[str, ...] = ("ucb", "ts", "greedy", "exp3")
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 4
    pretrain_trajectories: int = 512
    greedy_fraction: float = 0.5
    pretrain_steps: int = 120
    pretrain_lr: float = 3e-3
    batch_size: int = 32
    rmft_iterations: int = 3
    rollout_instances: int = 64
    rollouts_per_instance: int = 8
    keep_per_instance: int = 1
    finetune_steps: int = 60
    finetune_lr: float = 1e-3
    rollout_temperature: float = 1.0
    eval_every_iteration: bool = True
    nonstationary_env: str = ""
    experts_env: str = ""
    # LLM
    llm_model: str = ""
    llm_endpoint: str = ""
    llm_endpoint_model: str = ""
    llm_env: str = "bernoulli_k3_t10"
    llm_nl_env: str = "restaurants_k3_t10"
    llm_iterations: int = 2
    llm_eval_instances: int = 16
    llm_rollout_instances: int = 8
    llm_rollouts_per_instance: int = 4
    llm_keep_per_instance: int = 1
    llm_steps: int = 20
    llm_lr: float = 2e-4
    llm_batch_size: int = 8
    llm_temperature: float = 0.7
    llm_max_tokens: int = 48
    llm_invalid: str = "worst"
    llm_random_control: bool = True
    llm_engine: str = "trl"
    llm_parse: str = "strict"
    lora_rank: int = 8

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        check_torch_device(self.device, allowed=("auto", "cpu", "mps"))
        check_positive(
            self,
            "threads",
            "eval_instances",
            "d_model",
            "n_layers",
            "n_heads",
            "pretrain_trajectories",
            "pretrain_lr",
            "batch_size",
            "rollout_instances",
            "rollouts_per_instance",
            "keep_per_instance",
            "finetune_lr",
            "rollout_temperature",
            "llm_eval_instances",
            "llm_rollout_instances",
            "llm_rollouts_per_instance",
            "llm_keep_per_instance",
            "llm_lr",
            "llm_batch_size",
            "llm_temperature",
            "llm_max_tokens",
            "lora_rank",
        )
        _non_negative(
            self,
            "pretrain_steps",
            "rmft_iterations",
            "finetune_steps",
            "llm_iterations",
            "llm_steps",
        )
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})"
            )
        if not 0 <= self.greedy_fraction <= 1:
            raise ValueError(f"greedy_fraction must be in [0, 1], got {self.greedy_fraction}")
        if self.keep_per_instance > self.rollouts_per_instance:
            raise ValueError("keep_per_instance must not exceed rollouts_per_instance")
        if self.llm_keep_per_instance > self.llm_rollouts_per_instance:
            raise ValueError("llm_keep_per_instance must not exceed llm_rollouts_per_instance")
        if env_kind(self.train_env) not in _NUMERIC_KINDS:
            raise ValueError(
                f"train_env must be a bandit ({sorted(_NUMERIC_KINDS)}), got {self.train_env!r}"
            )
        if not self.eval_envs:
            raise ValueError("eval_envs must name at least one environment")
        for name in self.eval_envs:
            if env_kind(name) not in _NUMERIC_KINDS:
                raise ValueError(f"eval_envs entry {name!r} is not a bandit with numeric feedback")
        if self.train_env not in self.eval_envs:
            raise ValueError(f"eval_envs must include train_env {self.train_env!r}")
        if self.nonstationary_env and env_kind(self.nonstationary_env) != "nonstationary":
            raise ValueError(
                "nonstationary_env must be a 'nonstationary_k<K>_t<T>' name, "
                f"got {self.nonstationary_env!r}"
            )
        if self.llm_invalid not in INVALID_RULES:
            raise ValueError(
                f"llm_invalid must be one of {INVALID_RULES}, got {self.llm_invalid!r}"
            )
        if self.llm_engine not in ("trl", "loop"):
            raise ValueError(f"llm_engine must be 'trl' or 'loop', got {self.llm_engine!r}")
        if self.llm_parse not in ("strict", "lenient"):
            raise ValueError(f"llm_parse must be 'strict' or 'lenient', got {self.llm_parse!r}")
        if not self.numeric and not self.llm_enabled:
            raise ValueError("numeric=False needs the LLM path (llm_model or llm_endpoint)")
        if self.experts_env and env_kind(self.experts_env) != "experts":
            raise ValueError(
                f"experts_env must be an 'experts_k<K>_t<T>' name, got {self.experts_env!r}"
            )
        unknown = set(self.baselines) - _BASELINES
        if unknown:
            raise ValueError(
                f"unknown baselines {sorted(unknown)}; choose from {sorted(_BASELINES)}"
            )
        if env_kind(self.llm_env) != "bernoulli":
            raise ValueError(f"llm_env must be a 'bernoulli_k<K>_t<T>' name, got {self.llm_env!r}")
        if self.llm_nl_env and env_kind(self.llm_nl_env) != "restaurants":
            raise ValueError(
                f"llm_nl_env must be a 'restaurants_k<K>_t<T>' name, got {self.llm_nl_env!r}"
            )
        if bool(self.llm_endpoint) != bool(self.llm_endpoint_model):
            raise ValueError("llm_endpoint and llm_endpoint_model must be given together")
        if self.llm_endpoint and not self.llm_endpoint.startswith(("http://", "https://")):
            raise ValueError(f"llm_endpoint must be an http(s) URL, got {self.llm_endpoint!r}")
        if self.llm_endpoint and self.llm_model:
            raise ValueError("give either llm_model (local, fine-tuned) or llm_endpoint, not both")
        _check_model_spec(self.llm_model, "llm_model")

    @property
    def llm_enabled(self) -> bool:
        """Whether the run has an LLM path (a local model or an endpoint)."""
        return bool(self.llm_model or self.llm_endpoint)


@dataclass(frozen=True)
class BenchConfig:
    """Rollout throughput (decisions per second): the numerical Transformer batched over
    ``batch`` episodes and one at a time; the LLM (``llm_model``, "" skips) over
    ``llm_batch`` episodes for ``llm_steps`` steps."""

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    env: str = "bernoulli_k5_t50"
    batch: int = 256
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 4
    repeats: int = 3
    llm_model: str = "smollm2-135m-instruct-q4_1"
    llm_batch: int = 8
    llm_steps: int = 2
    llm_max_tokens: int = 32

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        check_torch_device(self.device, allowed=("auto", "cpu", "mps"))
        check_positive(
            self,
            "threads",
            "batch",
            "d_model",
            "n_layers",
            "n_heads",
            "repeats",
            "llm_batch",
            "llm_steps",
            "llm_max_tokens",
        )
        if env_kind(self.env) not in _NUMERIC_KINDS:
            raise ValueError(f"env must be a bandit, got {self.env!r}")
        _check_model_spec(self.llm_model, "llm_model")
