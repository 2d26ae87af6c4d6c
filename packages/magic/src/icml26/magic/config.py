"""Run and bench configs (frozen dataclasses, validated before anything is written)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DEFENDERS", "EVALS", "BenchConfig", "RunConfig"]

#: The defenders of the main job in the issue's priority order (the order they run in: every
#: seed of one before the next; what does not fit a budget is left undecided).
DEFENDERS = ("magic", "frozen_attacker", "self_play", "static", "base")
#: Fixed evaluation sets (``plain``: no operator, the XSTest-like check).
EVALS = ("seed_ops", "heldout_combos", "unseen_ops", "plain")


def _positive(obj: object, names: tuple[str, ...], minimum: int = 1) -> None:
    for name in names:
        v = getattr(obj, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")


@dataclass(frozen=True)
class RunConfig:
    """The main job (``icml26 run magic``).

    Every defender is trained and evaluated on ``model`` (``"tiny"`` for the claims); with
    ``large_model`` set (``full``: ``"smollm2-135m-instruct-q4_1"``), MAGIC alone is also trained
    with LoRA on that checkpoint and its figures are reported as ``large.*`` (no claim).

    Attributes:
        seed: the first replicate's seed; replicate ``k`` uses ``seed + k`` and draws every
            stream (model, prompts, evaluation sets, probes, samples) from it by name.
        seeds: independent replicates (the claims read means and paired standard errors
            over them: at least 2, 3 or more to decide a claim).
        start: which role MAGIC trains first: ``"defender"`` (the official code's
            ``start_agent=defender``) or ``"attacker"`` (the ablation).
        attacker: ``"free_text"`` (the attacker writes its own rewrite over up to
            ``attack_turns`` turns, the paper's) or ``"operators"`` (it picks an operator
            composition, one turn: the ablation, and the measured ``quick`` figures).
        attack_turns: the free-text attacker's messages per episode at most.
        text_tokens: tokens per free-text attacker message.
        harm_reward: the free-text game's ``REWARD_HARM`` (official default 1.0).
        refusal_reward: its ``REWARD_REFUSAL`` (official default 1.0).
        label_reward: its ``REWARD_LABEL``, the intent-kept term of the attacker's reward
            (official default 0.5).
        broken_penalty: ours, off by default: an extra loss of the free-text attacker for a
            broken intent.
        refusal_label: what the attacker's refusal term judges a reply against: ``"seed"``
            (the seed's label: the official ``game.py`` default) or ``"rewrite"`` (the
            rewrite's own label, the public run script's ``USE_Q_SAFE_LABEL_FOR_REFUSAL=1``).
        model: ``"tiny"`` (a random tiny Llama trained here) or a checkpoint spec.
        catalogue: a JSON intent catalogue (``""``: the built-in one).
        defenders: which defenders to run, in order (``magic`` first under the ``"metric"``
            schedule: the baselines take its step counts; ``"every"`` plans them, so a leg
            may run baselines alone); every seed of one runs before the next. It may grow between legs
            of one run folder (``resume: extend``).
        budget_minutes: the run's wall-clock budget (0: none). Before a defender's first
            unfinished seed the recipe checks that all its remaining seeds fit, from the
            measured times of finished stages; a defender that does not fit is skipped
            (its claims undecided, never decided on fewer seeds). The budget of one leg: a
            later leg of the same run folder may set another (``resume: per_leg``).
        judge_model: the rubric judge's backend (a checkpoint spec such as
            ``"smollm2-135m-instruct-q4_1"``), scored on the shipped labelled set
            (:mod:`~icml26.magic.labelled`); ``""``: only the marker rule is scored.
        base_sft_steps: full fine-tuning of the tiny base on both warm-start sets.
        adapter_sft_steps: LoRA warm start of each adapter (checkpoints).
        magic_steps: schedule steps of co-evolution (both roles together).
        schedule: ``"metric"`` (switch on the attack success rate) or ``"every"``.
        switch_every: the phase length (``"every"``) or its cap (``"metric"``).
        asr_high, asr_low: the ``"metric"`` schedule's thresholds.
        adaptive_steps: steps of the adaptive attacker trained against each defender.
        eval_compositions: compositions per evaluation set.
        eval_intents: harmful evaluation intents (each with its look-alike; 0: all).
        eval_samples: sampled attacks per evaluation intent (adaptive, novelty).
        probe_compositions: compositions of the per-round probe set (0: no probe, no
            ``asr_curve``).
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        tiny_hidden: the tiny model's hidden width.
        tiny_layers: its layers.
        vocab_size: its vocabulary size.
        sft_lr: learning rate of the warm starts.
        lora_rank: rank of the attacker's and the defenders' LoRA adapters.
        max_ops: operators per attack at most during training (held-out combinations are
            longer).
        penalty: the operator attacker's loss for a composition that breaks the intent (ours;
            the free-text attacker uses ``label_reward`` and ``broken_penalty``).
        pairs_per_step: intents per GRPO step (the defender gets each attack and its benign
            look-alike).
        num_generations: GRPO completions per prompt (the group).
        lr: GRPO's learning rate.
        attack_tokens: completion length (tokens) of an attack.
        reply_tokens: completion length (tokens) of a defender's reply.
        temperature: sampling temperature of the GRPO rollouts.
        large_model: a checkpoint spec on which MAGIC alone is also trained with LoRA (``""``
            skips it).
        large_steps: co-evolution steps of that run.
        large_sft_steps: its warm-start steps.
        large_lr: its GRPO learning rate.
        large_sft_lr: its warm-start learning rate.
        large_pairs_per_step: its intents per GRPO step.
        large_reply_tokens: its replies' completion length (tokens).
        large_eval_compositions: its compositions per evaluation set.
    """

    seed: int = 0
    seeds: int = 3
    start: str = "defender"
    attacker: str = "free_text"
    attack_turns: int = 2
    text_tokens: int = 40
    harm_reward: float = 1.0
    refusal_reward: float = 1.0
    label_reward: float = 0.5
    broken_penalty: float = 0.0
    refusal_label: str = "seed"
    model: str = "tiny"
    device: str = "cpu"
    catalogue: str = ""
    defenders: tuple[str, ...] = field(default=DEFENDERS, metadata={"resume": "extend"})
    budget_minutes: float = field(default=0.0, metadata={"resume": "per_leg"})
    judge_model: str = ""
    threads: int = 1
    # warm start
    tiny_hidden: int = 64
    tiny_layers: int = 2
    vocab_size: int = 700
    base_sft_steps: int = 200
    adapter_sft_steps: int = 0
    sft_lr: float = 3e-3
    lora_rank: int = 16
    # game
    max_ops: int = 2
    penalty: float = 0.5
    # GRPO
    pairs_per_step: int = 6
    num_generations: int = 4
    lr: float = 3e-3
    attack_tokens: int = 10
    reply_tokens: int = 8
    temperature: float = 1.0
    magic_steps: int = 30
    schedule: str = "metric"
    switch_every: int = 8
    asr_high: float = 0.5
    asr_low: float = 0.15
    adaptive_steps: int = 6
    # evaluation
    eval_compositions: int = 6
    eval_intents: int = 14
    eval_samples: int = 4
    probe_compositions: int = 4
    # the LoRA checkpoint run of MAGIC (no claim)
    large_model: str = ""
    large_steps: int = 0
    large_sft_steps: int = 0
    large_lr: float = 2e-4
    large_sft_lr: float = 1e-3
    large_pairs_per_step: int = 4
    large_reply_tokens: int = 32
    large_eval_compositions: int = 2

    def __post_init__(self) -> None:
        _positive(self, ("seeds",), minimum=2)
        if self.start not in ("defender", "attacker"):
            raise ValueError(f"start must be 'defender' or 'attacker', got {self.start!r}")
        if self.attacker not in ("free_text", "operators"):
            raise ValueError(f"attacker must be 'free_text' or 'operators', got {self.attacker!r}")
        if self.attacker == "operators" and self.attack_turns != 1:
            raise ValueError(
                "the operator attacker plays one turn: set attack_turns=1 (or attacker=free_text)"
            )
        if self.refusal_label not in ("seed", "rewrite"):
            raise ValueError(
                f"refusal_label must be 'seed' or 'rewrite', got {self.refusal_label!r}"
            )
        for name in ("harm_reward", "refusal_reward", "label_reward", "broken_penalty"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
                raise ValueError(f"{name} must be a number >= 0, got {v!r}")
        _positive(
            self,
            (
                "threads",
                "attack_turns",
                "text_tokens",
                "tiny_hidden",
                "tiny_layers",
                "vocab_size",
                "lora_rank",
                "max_ops",
                "pairs_per_step",
                "attack_tokens",
                "reply_tokens",
                "switch_every",
                "eval_compositions",
                "eval_samples",
                "large_pairs_per_step",
                "large_reply_tokens",
                "large_eval_compositions",
            ),
        )
        _positive(
            self,
            (
                "base_sft_steps",
                "adapter_sft_steps",
                "magic_steps",
                "adaptive_steps",
                "eval_intents",
                "probe_compositions",
                "large_steps",
                "large_sft_steps",
            ),
            minimum=0,
        )
        if self.num_generations < 2:
            raise ValueError(f"num_generations must be >= 2, got {self.num_generations}")
        if self.pairs_per_step < 2:
            raise ValueError(
                f"pairs_per_step must be >= 2 (self-play splits a batch into attack and defence "
                f"tasks), got {self.pairs_per_step}"
            )
        unknown = [d for d in self.defenders if d not in DEFENDERS]
        if unknown:
            raise ValueError(f"unknown defender(s) {unknown}; known: {list(DEFENDERS)}")
        if not self.defenders:
            raise ValueError("defenders must name at least one defender")
        if self.schedule != "every" and self.defenders[0] != "magic":
            raise ValueError(
                f"defenders must start with 'magic' under schedule={self.schedule!r} (the "
                f"baselines take its step counts; schedule='every' plans them), got "
                f"{self.defenders}"
            )
        if (
            isinstance(self.budget_minutes, bool)
            or not isinstance(self.budget_minutes, int | float)
            or not self.budget_minutes >= 0
        ):
            raise ValueError(f"budget_minutes must be a number >= 0, got {self.budget_minutes!r}")
        if len(set(self.defenders)) != len(self.defenders):
            raise ValueError(f"defenders repeat: {self.defenders}")
        if self.schedule not in ("metric", "every"):
            raise ValueError(f"schedule must be 'metric' or 'every', got {self.schedule!r}")
        if not 0 < self.asr_low < self.asr_high < 1:
            raise ValueError(
                f"need 0 < asr_low < asr_high < 1, got asr_low={self.asr_low}, asr_high={self.asr_high}"
            )
        if self.schedule == "every" and (self.asr_high, self.asr_low) != (0.5, 0.15):
            raise ValueError(
                "asr_high/asr_low are read by schedule='metric' only; set schedule=metric to use them"
            )
        for name in ("lr", "sft_lr", "large_lr", "large_sft_lr", "temperature"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.penalty < 0:
            raise ValueError(f"penalty must be >= 0, got {self.penalty}")
        if self.model != "tiny" and self.base_sft_steps:
            raise ValueError(
                f"base_sft_steps trains the tiny model's own weights; model={self.model!r} is "
                f"warm-started by adapter_sft_steps (set base_sft_steps=0)"
            )
        if self.model == "tiny" and not self.base_sft_steps:
            raise ValueError("model='tiny' knows no language without base_sft_steps > 0")
        if self.catalogue and not Path(self.catalogue).is_file():
            raise ValueError(f"catalogue {self.catalogue!r} is not a file")
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {self.device!r}")
        if not self.large_model:
            used = [
                n for n, d in (("large_steps", 0), ("large_sft_steps", 0)) if getattr(self, n) != d
            ]
            if used:
                raise ValueError(
                    f"{used} are read only with large_model set (e.g. large_model=smollm2-135m-instruct-q4_1)"
                )
        elif self.large_model == "tiny":
            raise ValueError("large_model names a checkpoint (the tiny model is `model`)")
        elif self.large_steps < 1:
            raise ValueError("large_model is set but large_steps is 0: nothing would train")


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench magic``: game rounds per second, tokens per round per role, GRPO step
    time per role, batched against one-at-a-time replies (tiny model)."""

    seed: int = 0
    threads: int = 1
    base_sft_steps: int = 60
    pairs_per_step: int = 6
    num_generations: int = 4
    rounds: int = 5
    grpo_steps: int = 3
    single_replies: int = 16

    def __post_init__(self) -> None:
        _positive(
            self,
            (
                "threads",
                "base_sft_steps",
                "pairs_per_step",
                "rounds",
                "grpo_steps",
                "single_replies",
            ),
        )
        if self.num_generations < 2:
            raise ValueError(f"num_generations must be >= 2, got {self.num_generations}")
