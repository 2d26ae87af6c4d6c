"""Run and bench configurations (frozen dataclasses, validated; no framework imports)."""

from __future__ import annotations

from dataclasses import dataclass

from icml26.rmft.envs import parse_env
from icml26.shared.devices import check_torch_device

__all__ = ["BenchConfig", "RMFTConfig"]

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


def _positive(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ValueError(f"{name} must be > 0, got {value!r}")


def _non_negative(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


@dataclass(frozen=True)
class RMFTConfig:
    """Everything ``icml26 run rmft`` does.

    Numerical Transformer: pretrained weakly on ``train_env`` (random and greedy
    trajectories), then ``rmft_iterations`` of RMFT; evaluated with ``eval_instances``
    instances per environment of ``eval_envs`` after pretraining and after every iteration.
    ``experts_env`` (full information) trains a second model the same way ("" skips it).
    ``eval_every_iteration=False`` evaluates the iterations before the last (and the final
    model decoded greedily) on the training environment only, a cheaper run with the same
    final comparisons.

    LLM path (``llm_model`` = "" skips it): a built-in name (``smollm2-135m-instruct-q4_1``), a
    folder, a GGUF file, a Hugging Face id, or ``tiny-random`` (a random model for smoke
    runs). With ``llm_endpoint`` (an OpenAI-compatible URL) and ``llm_endpoint_model`` the
    base policy is evaluated through the endpoint instead and the selected transcripts are
    written as fine-tuning JSONL (closed models cannot be fine-tuned locally).
    """

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    # numerical Transformer
    train_env: str = "bernoulli_k5_t50"
    eval_envs: tuple[str, ...] = (
        "bernoulli_k5_t50",
        "bernoulli_k5_t100",
        "bernoulli_k5_t200",
        "bernoulli_k8_t50",
        "gaussian_k5_t50",
        "nonstationary_k5_t100",
    )
    eval_instances: int = 128
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
    lora_rank: int = 8

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        check_torch_device(self.device, allowed=("auto", "cpu", "mps"))
        _positive(
            self, "threads", "eval_instances", "d_model", "n_layers", "n_heads",
            "pretrain_trajectories", "pretrain_lr", "batch_size", "rollout_instances",
            "rollouts_per_instance", "keep_per_instance", "finetune_lr", "rollout_temperature",
            "llm_eval_instances", "llm_rollout_instances", "llm_rollouts_per_instance",
            "llm_keep_per_instance", "llm_lr", "llm_batch_size", "llm_temperature",
            "llm_max_tokens", "lora_rank",
        )  # fmt: skip
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
        train = parse_env(self.train_env)
        if train.kind not in _NUMERIC_KINDS:
            raise ValueError(
                f"train_env must be a bandit ({sorted(_NUMERIC_KINDS)}), got {self.train_env!r}"
            )
        if not self.eval_envs:
            raise ValueError("eval_envs must name at least one environment")
        for name in self.eval_envs:
            if parse_env(name).kind not in _NUMERIC_KINDS:
                raise ValueError(f"eval_envs entry {name!r} is not a bandit with numeric feedback")
        if self.train_env not in self.eval_envs:
            raise ValueError(f"eval_envs must include train_env {self.train_env!r}")
        if self.experts_env and parse_env(self.experts_env).kind != "experts":
            raise ValueError(
                f"experts_env must be an 'experts_k<K>_t<T>' name, got {self.experts_env!r}"
            )
        unknown = set(self.baselines) - _BASELINES
        if unknown:
            raise ValueError(
                f"unknown baselines {sorted(unknown)}; choose from {sorted(_BASELINES)}"
            )
        if parse_env(self.llm_env).kind != "bernoulli":
            raise ValueError(f"llm_env must be a 'bernoulli_k<K>_t<T>' name, got {self.llm_env!r}")
        if self.llm_nl_env and parse_env(self.llm_nl_env).kind != "restaurants":
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
        _positive(self, "threads", "batch", "d_model", "n_layers", "n_heads", "repeats",
                  "llm_batch", "llm_steps", "llm_max_tokens")  # fmt: skip
        if parse_env(self.env).kind not in _NUMERIC_KINDS:
            raise ValueError(f"env must be a bandit, got {self.env!r}")
        _check_model_spec(self.llm_model, "llm_model")
