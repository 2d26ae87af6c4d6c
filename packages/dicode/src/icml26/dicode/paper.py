"""The DiCode paper as the ``icml26`` CLI sees it (light: no jax import here)."""

from __future__ import annotations

from icml26.dicode.config import BASELINES, BenchConfig, RunConfig
from icml26.dicode.tech import DEEP_ACHIEVEMENTS
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

PROFILES = {
    # seconds of stepping (the compiles dominate): every method once, tiny PPO
    "smoke": RunConfig(
        n_seeds=1,
        total_steps=2 * 8 * 16 * 2,
        n_envs=8,
        rollout=16,
        updates_per_chunk=2,
        hidden=16,
        envs_per_slot=2,
        target_mix=0.25,
        children_per_round=2,
        eval_every=1,
        eval_episodes=4,
        final_eval_episodes=8,
        checkpoint_every=1,
    ),
    # <= 180 s on an idle 2-core machine: all six methods x 3 seeds at equal step budgets
    "quick": RunConfig(),
    # the best 2 cores allow in ~30 min: 3x the budget, more seeds, plus Craftax-Classic
    "full": RunConfig(n_seeds=4, total_steps=1_179_648, final_eval_episodes=256, craftax=True),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(
        env_batch=8,
        env_steps=8,
        repeats=1,
        worlds=2,
        archive_sizes=(4, 16),
        ppo_updates=1,
        n_envs=8,
        rollout=8,
        hidden=16,
        craftax=False,
    ),
    "quick": BenchConfig(craftax=False),
    "full": BenchConfig(craftax=True),
}

_BASE_RETURNS = ", ".join(f'm("return.{b}")' for b in BASELINES)  # `return` is a keyword
_DEEP_DICODE = ", ".join(f"achievement_success.{a}.dicode" for a in DEEP_ACHIEVEMENTS)
_DEEP_BASE = ", ".join(f"achievement_success.{a}.{b}" for a in DEEP_ACHIEVEMENTS for b in BASELINES)

CLAIMS = [
    Claim(
        "beats_strongest_baseline",
        "DiCode's mean return on the target beats the strongest baseline (PPO on the target, "
        "domain randomisation, PLR, ACCEL, DiCode with uniform selection): the lower end of "
        "DiCode's 95% seed interval lies above every baseline's mean.",
        "+17% mean return over the strongest baseline (Craftax, 2B steps)",
        f'm("return.dicode.lo") > max({_BASE_RETURNS})',
        profiles=("quick", "full"),
    ),
    Claim(
        "deep_achievements_only_dicode",
        "DiCode reaches non-zero success on the deepest achievements (iron, iron tools, "
        "diamond) where every baseline has none.",
        "non-zero success on late-game tasks where prior methods fail",
        f"max({_DEEP_DICODE}) > 0 and max({_DEEP_BASE}) == 0",
    ),
    Claim(
        "learnability_selection_matters",
        "Learnability-driven, lineage-aware selection beats the same loop with uniform "
        "selection from the archive (the dicode_random ablation) beyond seed noise.",
        "qualitative (ablation of the curriculum's selection)",
        'm("return.dicode.lo") > m("return.dicode_random")',
        profiles=("quick", "full"),
    ),
    Claim(
        "curriculum_stays_learnable",
        "The archive keeps a frontier of worlds that are neither solved nor hopeless (at least "
        "10% of the archive).",
        "qualitative (sequences of experiences that remain learnable)",
        "frontier_fraction >= 0.1",
    ),
]

BENCH_CLAIMS = [
    Claim(
        "no_recompiles",
        "Dreamed worlds are lowered to one fixed-shape parameter pytree: feeding new worlds "
        "after warm-up compiles nothing.",
        "issue requirement (one recompile per world would eat the budget)",
        "recompiles_after_warmup == 0",
    ),
    Claim(
        "millions_of_steps",
        "The crafting world is fast enough for millions of steps on 2 cores: over 100k "
        "vmapped steps per second with random actions.",
        "issue requirement",
        "env_steps_per_second.crafting_world > 100000",
        profiles=("quick", "full"),
    ),
]

PAPER = Paper(
    slug="dicode",
    title="Dreaming in Code: curricula of environment code for open-ended learning (DiCode)",
    profiles=PROFILES,
    run="icml26.dicode.experiment:run",
    claims=CLAIMS,
    bench="icml26.dicode.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="jax",
    summary="dreamed world programs + learnability curriculum vs PPO, DR, PLR, ACCEL in a JAX crafting world",
)
