"""Configs of the run and bench jobs: frozen dataclasses, validated on creation (no jax import)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["BASELINES", "DREAMERS", "METHODS", "BenchConfig", "RunConfig"]

#: ``method`` in the metric keys: DiCode and its baselines (``accel`` added by the issue).
METHODS = ("dicode", "ppo_target", "domain_randomisation", "plr", "accel", "dicode_random")
BASELINES = tuple(m for m in METHODS if m != "dicode")
DREAMERS = ("offline_mutation", "llm")


@dataclass(frozen=True)
class RunConfig:
    """The main job: every method trains PPO with the same environment-step budget, then is
    evaluated on held-out target worlds (fresh map seeds never used in training).

    Attributes:
        seed: base seed; method seeds are ``seed + k`` for ``k < n_seeds``.
        n_seeds: training seeds per method (intervals need >= 2; claims ask for >= 3).
        methods: among :data:`METHODS`.
        total_steps: environment steps per (method, seed), equal for all methods.
        n_envs, rollout, updates_per_chunk, epochs, minibatches, hidden, lr: PPO (one
            curriculum round = ``updates_per_chunk`` updates = ``n_envs * rollout *
            updates_per_chunk`` steps).
        policy: ``"mlp"`` or ``"gru"`` (a recurrent policy: a GRU cell over the episode).
        envs_per_slot: environments per world slot (``n_envs / envs_per_slot`` worlds a round).
        target_mix: share of slots that play the target world (curriculum methods).
        children_per_round: programs dreamed per round (DiCode).
        lineage_weight: weight of children's learnability in a parent's score.
        eval_every: rounds between evaluations on the target (the return curve and AUC).
        eval_episodes: target episodes per curve point; final_eval_episodes: at the end.
        dreamer: ``offline_mutation`` (default) or ``llm``.
        llm_model: local model spec for the ``llm`` dreamer (``icml26.shared.llm``), e.g.
            ``smollm2-135m-instruct-q4_1`` or a folder; llm_endpoint / llm_endpoint_model: an
            OpenAI-compatible server instead (e.g. vLLM); llm_format: ``edit`` (a JSON edit of
            at most 3 key changes to the parent, the default) or ``program`` (a whole program);
            llm_max_tokens: reply budget (0: the format's default, 64 for an edit, 400 for a
            program).
        craftax: also train ``ppo_target`` and ``dicode`` on the real Craftax-Classic (needs
            ``icml26-dicode[craftax]``); craftax_steps: steps per method and seed there;
            craftax_seeds: seeds per method there.
        checkpoint_every: rounds between orbax checkpoints (a killed run resumes).
        compilation_cache: JAX persistent compilation cache folder ("" = the user cache,
            "off" = disabled).
    """

    seed: int = 0
    n_seeds: int = 3
    methods: tuple[str, ...] = METHODS
    total_steps: int = 393_216
    n_envs: int = 64
    rollout: int = 64
    updates_per_chunk: int = 4
    epochs: int = 2
    minibatches: int = 2
    hidden: int = 64
    lr: float = 2e-3
    policy: str = "mlp"
    envs_per_slot: int = 8
    target_mix: float = 0.25
    children_per_round: int = 4
    lineage_weight: float = 0.5
    eval_every: int = 4
    eval_episodes: int = 32
    final_eval_episodes: int = 128
    dreamer: str = "offline_mutation"
    llm_model: str = ""
    llm_endpoint: str = ""
    llm_endpoint_model: str = ""
    llm_format: str = "edit"
    llm_max_tokens: int = 0
    craftax: bool = False
    craftax_steps: int = 262_144
    craftax_seeds: int = 3
    checkpoint_every: int = 8
    compilation_cache: str = ""

    @property
    def steps_per_round(self) -> int:
        return self.n_envs * self.rollout * self.updates_per_chunk

    @property
    def rounds(self) -> int:
        return max(1, self.total_steps // self.steps_per_round)

    @property
    def n_slots(self) -> int:
        return self.n_envs // self.envs_per_slot

    @property
    def target_slots(self) -> int:
        return max(1, round(self.target_mix * self.n_slots)) if self.target_mix > 0 else 0

    def __post_init__(self) -> None:
        bad = [m for m in self.methods if m not in METHODS]
        if bad or not self.methods or len(set(self.methods)) != len(self.methods):
            raise ValueError(
                f"methods must be distinct names among {', '.join(METHODS)}, got {self.methods}"
            )
        for name in (
            "n_seeds",
            "total_steps",
            "n_envs",
            "rollout",
            "updates_per_chunk",
            "epochs",
            "minibatches",
            "hidden",
            "envs_per_slot",
            "eval_every",
            "eval_episodes",
            "final_eval_episodes",
            "checkpoint_every",
            "craftax_steps",
            "craftax_seeds",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed}")
        if isinstance(self.llm_max_tokens, bool) or not isinstance(self.llm_max_tokens, int):
            raise ValueError(f"llm_max_tokens must be an integer, got {self.llm_max_tokens!r}")
        if self.llm_max_tokens < 0:
            raise ValueError(
                f"llm_max_tokens must be >= 0 (0: the format's default), got {self.llm_max_tokens}"
            )
        if self.llm_format not in ("edit", "program"):
            raise ValueError(f"llm_format must be 'edit' or 'program', got {self.llm_format!r}")
        if self.children_per_round < 1:
            raise ValueError(f"children_per_round must be >= 1, got {self.children_per_round}")
        if self.n_envs % self.envs_per_slot:
            raise ValueError(
                f"n_envs ({self.n_envs}) must be a multiple of envs_per_slot ({self.envs_per_slot})"
            )
        if (self.n_envs * self.rollout) % self.minibatches:
            raise ValueError("n_envs * rollout must be divisible by minibatches")
        if not 0.0 <= self.target_mix <= 1.0:
            raise ValueError(f"target_mix must be in [0, 1], got {self.target_mix}")
        if self.n_slots - self.target_slots < 1 and any(m != "ppo_target" for m in self.methods):
            raise ValueError(
                f"target_mix={self.target_mix} leaves no slot for generated worlds "
                f"({self.n_slots} slots); lower it or raise n_envs / envs_per_slot"
            )
        if not self.lr > 0 or self.lineage_weight < 0:
            raise ValueError("lr must be > 0 and lineage_weight >= 0")
        if self.total_steps < self.steps_per_round:
            raise ValueError(
                f"total_steps ({self.total_steps}) is less than one round "
                f"({self.steps_per_round} = n_envs * rollout * updates_per_chunk)"
            )
        if self.policy not in ("mlp", "gru"):
            raise ValueError(f"policy must be 'mlp' or 'gru', got {self.policy!r}")
        if self.policy == "gru" and self.n_envs % self.minibatches:
            raise ValueError("the GRU policy needs n_envs divisible by minibatches")
        if self.dreamer not in DREAMERS:
            raise ValueError(f"dreamer must be one of {', '.join(DREAMERS)}, got {self.dreamer!r}")
        llm_fields = ("llm_model", "llm_endpoint", "llm_endpoint_model")
        if self.dreamer != "llm":
            used = [f for f in llm_fields if getattr(self, f)]
            if used:
                raise ValueError(f"{', '.join(used)} is used only with dreamer=llm")
        else:
            if bool(self.llm_model) == bool(self.llm_endpoint):
                raise ValueError("dreamer=llm needs exactly one of llm_model or llm_endpoint")
            if self.llm_endpoint and not self.llm_endpoint.startswith(("http://", "https://")):
                raise ValueError(f"llm_endpoint must be an http(s) URL, got {self.llm_endpoint!r}")
            if self.llm_endpoint and not self.llm_endpoint_model:
                raise ValueError("llm_endpoint needs llm_endpoint_model (the served model name)")
            if self.llm_endpoint_model and not self.llm_endpoint:
                raise ValueError("llm_endpoint_model is used only with llm_endpoint")
            local = Path(self.llm_model).expanduser()
            looks_local = local.is_absolute() or self.llm_model.startswith((".", "~"))
            if self.llm_model and looks_local and not local.exists():
                raise ValueError(f"llm_model path {self.llm_model!r} does not exist")
        if self.compilation_cache not in ("", "off"):
            parent = Path(self.compilation_cache).expanduser().parent
            if not parent.is_dir():
                raise ValueError(
                    f"compilation_cache: the folder {str(parent)!r} above it does not exist"
                )


@dataclass(frozen=True)
class BenchConfig:
    """Throughput of the world and of PPO, recompiles, the dreamer's cost, Craftax-Classic.

    Attributes:
        seed: seed of the timed runs.
        env_batch: vmapped environments; env_steps: scanned steps per timed call.
        repeats: timed repetitions (the best is kept).
        worlds: distinct dreamed worlds fed after warm-up (recompiles must stay 0).
        archive_sizes: archive sizes at which one dreaming round is timed.
        ppo_updates: timed PPO updates; n_envs, rollout, hidden: PPO shapes.
        craftax: also time Craftax-Classic (compile and steps), if installed.
        craftax_batch, craftax_steps: its vmapped envs and scanned steps.
        compilation_cache: as in :class:`RunConfig`.
    """

    seed: int = 0
    env_batch: int = 256
    env_steps: int = 256
    repeats: int = 3
    worlds: int = 8
    archive_sizes: tuple[int, ...] = (8, 64, 256)
    ppo_updates: int = 8
    n_envs: int = 64
    rollout: int = 64
    hidden: int = 64
    craftax: bool = True
    craftax_batch: int = 256
    craftax_steps: int = 128
    compilation_cache: str = ""

    def __post_init__(self) -> None:
        for name in (
            "env_batch",
            "env_steps",
            "repeats",
            "worlds",
            "ppo_updates",
            "n_envs",
            "rollout",
            "hidden",
            "craftax_batch",
            "craftax_steps",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not self.archive_sizes or any(a < 1 for a in self.archive_sizes):
            raise ValueError(f"archive_sizes must be positive, got {self.archive_sizes}")
