"""The ``adaptive-reasoning`` paper for the ``icml26`` CLI: profiles and claims (light imports)."""

from __future__ import annotations

from icml26.adaptive_reasoning.config import AdaptiveConfig, BenchConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

PROFILES = {
    # Seconds: every stage on a very small model; the claims are decided but mean nothing.
    "smoke": AdaptiveConfig(
        hidden_size=32,
        num_layers=1,
        vocab_size=500,
        train_problems=64,
        eval_per_split=6,
        sft_steps=4,
        sft_batch=8,
        grpo_steps=1,
        grpo_prompts=2,
        grpo_generations=4,
        max_new_tokens=24,
    ),
    # ~150 CPU-s on one thread (imports included): the tiny model, every method.
    "quick": AdaptiveConfig(),
    # <= ~30 min: >= 1,000 items per split, longer training, and `ours` on SmolLM2-135M with LoRA.
    "full": AdaptiveConfig(
        train_problems=8000,
        eval_per_split=1000,
        sft_steps=900,
        grpo_steps=60,
        large_model="smollm2-135m-instruct-q4_1",
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(
        train_problems=64, sft_steps=2, grpo_steps=1, eval_per_split=4, hidden_size=32, num_layers=1
    ),
    "quick": BenchConfig(),
    "full": BenchConfig(train_problems=4000, sft_steps=300, grpo_steps=12, eval_per_split=200),
}

_SPLITS = ("simple_concise", "simple_verbose", "complex_concise", "complex_verbose", "ood")

CLAIMS = [
    Claim(
        "thinking_needed",
        "The premise holds at this scale: on complex problems, thinking is at least 10 points "
        "more accurate than answering directly (same weights, mode forced).",
        "complex problems need explicit reasoning (premise)",
        "accuracy.ops3.always_think >= accuracy.ops3.never_think + 0.10",
    ),
    Claim(
        "fewer_tokens_same_accuracy",
        "Ours generates fewer tokens than always-think (at most 85% of its mean) with accuracy "
        "within 2 points on every split: the lower end of the paired 95% interval of "
        "accuracy(ours) - accuracy(always_think) is >= -0.02 on each split.",
        "reduces computational overhead without sacrificing accuracy",
        "tokens.all.ours <= 0.85 * tokens.all.always_think and "
        'min_of("accuracy_gap_lo.*.ours") >= -0.02',
    ),
    Claim(
        "verbosity_gap_exists",
        "The failure the paper fixes exists here: the no-augmentation reasoner thinks at least "
        "10 points more often on verbosely worded simple problems than on concise ones.",
        "adaptive reasoners are misled by superficial linguistic complexity",
        "verbosity_gap.no_augmentation >= 0.10",
    ),
    Claim(
        "smaller_verbosity_gap",
        "Ours has a verbosity gap at least 10 points smaller than the no-augmentation reasoner "
        "and the length router.",
        "improved robustness to misleading linguistic cues",
        "verbosity_gap.ours <= verbosity_gap.no_augmentation - 0.10 and "
        "verbosity_gap.ours <= verbosity_gap.length_router - 0.10",
    ),
    Claim(
        "mode_by_true_complexity",
        "Ours thinks on complex problems however they are worded and not on verbose simple ones: "
        "think rate >= 0.9 on complex_verbose and complex_concise, <= 0.2 on simple_verbose.",
        "selects a reasoning mode based on true task complexity rather than surface-level cues",
        "think_rate.complex_verbose.ours >= 0.9 and think_rate.complex_concise.ours >= 0.9 "
        "and think_rate.simple_verbose.ours <= 0.2",
    ),
    Claim(
        "both_modes_alive",
        "The mode-collapse guard keeps both modes in use through GRPO: the entropy of the "
        "policy's mean mode distribution over the last steps is >= 0.5 bit (training prompts "
        "are half simple, half complex: 1 bit is ideal, 0 is collapse).",
        "plain GRPO collapses to one mode (Thinkless); a guard is needed",
        "mode_entropy.ours >= 0.5",
    ),
]

BENCH_CLAIMS = [
    Claim(
        "ours_cheaper_per_solve",
        "Ours spends fewer generated tokens per solved problem than always-think (<= 85%).",
        "reduces computational overhead",
        "tokens_per_solved.ours <= 0.85 * tokens_per_solved.always_think",
    ),
]

PAPER = Paper(
    slug="adaptive-reasoning",
    title="When Simple Problems Wear Complex Costumes: verbosity-robust adaptive reasoning",
    profiles=PROFILES,
    run="icml26.adaptive_reasoning.experiment:run",
    claims=CLAIMS,
    bench="icml26.adaptive_reasoning.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="Think or answer directly by true complexity, not wording: augmented SFT, then GRPO with a mode-collapse guard",
)
