"""The ``adaptive-reasoning`` paper for the ``icml26`` CLI: profiles and claims (light imports)."""

from __future__ import annotations

from icml26.adaptive_reasoning.config import AdaptiveConfig, BenchConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

PROFILES = {
    # Seconds: every stage on a very small model, one seed; the claims are decided but mean
    # nothing.
    "smoke": AdaptiveConfig(
        seeds=1,
        hidden_size=32,
        num_layers=1,
        vocab_size=500,
        train_problems=64,
        eval_per_split=4,
        sft_steps=3,
        sft_batch=8,
        grpo_steps=1,
        grpo_prompts=2,
        grpo_generations=4,
        max_new_tokens=24,
    ),
    # The tiny model, every method trained separately, three seeds.
    "quick": AdaptiveConfig(train_problems=2000, eval_per_split=50, sft_steps=150, grpo_steps=5),
    # <= ~30 min idle: longer training, more items, and `ours` on SmolLM2-135M with LoRA.
    "full": AdaptiveConfig(
        train_problems=6000,
        eval_per_split=300,
        sft_steps=600,
        grpo_steps=30,
        grpo_prompts=16,
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

_OVER_SFT = "gap.{q}.ours.sft_only - 2 * gap_se.{q}.ours.sft_only > 0"

CLAIMS = [
    Claim(
        "thinking_needed",
        "The premise holds at this scale: on complex held-out problems the always-think model "
        "is at least 10 points more accurate than the never-think model (each trained in its "
        "mode), by more than 2 SE over seeds.",
        "complex problems need explicit reasoning (premise)",
        "gap.accuracy.always_think.never_think - 2 * gap_se.accuracy.always_think.never_think "
        ">= 0 and accuracy.complex.always_think >= accuracy.complex.never_think + 0.10",
        placebo={"always_think": "never_think"},
    ),
    Claim(
        "fewer_tokens_same_accuracy",
        "Ours generates at most 85% of always-think's tokens with accuracy within 2 points "
        "(the paired gap minus 2 SE over seeds >= -0.02), and GRPO adds to stage 1: its "
        "reward exceeds sft_only's by more than 2 SE.",
        "reduces computational overhead without sacrificing accuracy",
        "tokens.all.ours <= 0.85 * tokens.all.always_think and "
        "gap.accuracy.ours.always_think - 2 * gap_se.accuracy.ours.always_think >= -0.02 and "
        + _OVER_SFT.format(q="reward"),
        placebo={"ours": "sft_only"},
    ),
    Claim(
        "best_reward",
        "Ours earns a higher held-out reward (accuracy minus the token cost) than every "
        "separately trained baseline: always-think, never-think, the length-penalty GRPO "
        "reasoner and sft_only, each by more than 2 SE (paired by seed).",
        "an adaptive policy learnt from accuracy and cost (AdaptThink / Thinkless setting)",
        " and ".join(
            f"gap.reward.ours.{b} - 2 * gap_se.reward.ours.{b} > 0"
            for b in ("always_think", "never_think", "length_penalty", "sft_only")
        ),
        placebo={"ours": "sft_only"},
    ),
    Claim(
        "verbosity_gap_exists",
        "The failure the paper fixes exists here: the no-augmentation reasoner thinks at least "
        "10 points more often on verbosely worded simple problems than on concise ones.",
        "adaptive reasoners are misled by superficial linguistic complexity",
        "verbosity_gap.no_augmentation - 2 * verbosity_gap_se.no_augmentation >= 0.10",
        kind="absolute",
        floor="0: a reasoner that reads the operation count thinks equally often on both "
        "wordings; not forced: stage 1 never pairs verbose simple problems with think targets, "
        "the gap has to come from the length shortcut it learns on the natural data",
    ),
    Claim(
        "smaller_verbosity_gap",
        "Ours has a verbosity gap at least 10 points smaller than the no-augmentation "
        "reasoner, and GRPO narrows the gap stage 1 leaves (below sft_only's by 2 SE).",
        "improved robustness to misleading linguistic cues",
        "verbosity_gap.ours <= verbosity_gap.no_augmentation - 0.10 and "
        "gap.verbosity_gap.ours.sft_only + 2 * gap_se.verbosity_gap.ours.sft_only < 0",
        placebo={"ours": "sft_only"},
    ),
    Claim(
        "mode_by_true_complexity",
        "Ours thinks by true complexity: its think rate on complex items exceeds that on "
        "simple ones by at least 0.5, and by more than sft_only's (2 SE): GRPO, which sees no "
        "complexity label, sharpens the choice.",
        "selects a reasoning mode based on true task complexity rather than surface-level cues",
        "separation.ours >= 0.5 and " + _OVER_SFT.format(q="separation"),
        placebo={"ours": "sft_only"},
    ),
]

BENCH_CLAIMS = [
    Claim(
        "ours_cheaper_per_solve",
        "Ours spends fewer generated tokens per solved problem than always-think (<= 85%) "
        "and than its own stage-1 weights (sft_only).",
        "reduces computational overhead",
        "tokens_per_solved.ours <= 0.85 * tokens_per_solved.always_think and "
        "tokens_per_solved.ours < tokens_per_solved.sft_only",
        placebo={"ours": "sft_only"},
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
    summary="Think or answer directly by true complexity, not wording: augmented SFT, then GRPO on accuracy and cost",
)
