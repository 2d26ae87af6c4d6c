"""The DiCode paper as the ``icml26`` CLI sees it (light: no jax import here)."""

from __future__ import annotations

from icml26.dicode.config import BASELINES, BenchConfig, RunConfig
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
    # all six methods x 3 seeds at equal step budgets; measured at 4550b7e (with the
    # learning-progress probe): 164.8 s wall, 207 CPU-s on the shared 2-core machine (load ~6,
    # JAX compilation cache warm, 2026-12-05)
    "quick": RunConfig(),
    # the best 2 cores allow in ~30 min: 3x the budget, more seeds, plus Craftax-Classic
    "full": RunConfig(n_seeds=4, total_steps=1_179_648, final_eval_episodes=256, craftax=True),
    # Craftax-Classic as the target over 3 seeds, sized to <= 60 min on this shared 2-core
    # CPU from a measured run: 786,432 steps per unit took 886 s in all (craftax stage 865 s,
    # ~6.5k steps/s, load 4-7; 2026-12-05), so 3x that: 2 methods x 3 seeds x 2,359,296
    # steps; the paper trains 2B steps (this is 0.12% of it)
    "craftax": RunConfig(
        methods=("dicode", "ppo_target"),
        total_steps=131_072,
        craftax=True,
        craftax_steps=2_359_296,
        craftax_seeds=3,
    ),
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

# the paired gain over each baseline minus two paired standard errors (seeds share their maps)
_GAIN_LCBS = ", ".join(
    f"return_gain.dicode.over.{b} - 2 * return_gain.dicode.over.{b}.se" for b in BASELINES
)
_BASE_LATE = ", ".join(f"late_success.{b}" for b in BASELINES)

# Placebos (review 44z, item 3). A key-part placebo that puts a baseline in DiCode's place
# compares that baseline with itself wherever the rule ranges over *every* baseline
# (beats_strongest_baseline: a min over all five; deep_achievements_only_dicode: a max over
# all five; craftax_beats_ppo: PPO on the target is the only Craftax baseline): that term reads
# an exact 0 (SE 0) and fails by construction, so there the placebo checks only that the
# margin is strict. No non-self swap exists for them: any baseline B in DiCode's place either
# meets itself in the min/max or, swapped both ways, meets DiCode, and "B beats DiCode" fails
# whenever the claim holds. Where the rule compares two methods, the placebo is a third:
# learnability_selection_matters puts domain randomisation (fresh uniform draws, no archive,
# no selection) in DiCode's place against dicode_random; if that also beat dicode_random, the
# gap would show a weak ablation, not the value of learnability selection.
# curriculum_stays_learnable has a data-level null (frozen_agent, below).
#
# curriculum_stays_learnable (review 44z, item 2; rule chosen before any run measured it).
# Its old rule (evaluated archive on the frontier, DiCode vs the uniform ablation) held for an
# agent that never learns (the reviewer's fixed-success agent: 0.64 vs 0.32): it measured the
# selection rule. The paper's sense, "sequences of experiences that remain learnable", is that
# the agent *learns* the worlds the curriculum dreams. So the rule now reads the agent: every
# child dreamed before the last round is played at its birth by the policy of the moment and
# at the end by the final policy, on the same held-out maps with the same keys
# (icml26.dicode.progress); its learning progress is the change in goal success. DiCode's mean
# progress must exceed two SEs over seeds and the uniform ablation's by two paired SEs (same
# seeds). A frozen policy scores every world the same twice (progress exactly 0): that is the
# null run `frozen_agent` (PPO with lr = 0; tests/test_progress.py), under which the rule must
# fail. The frontier fraction stays a reported mechanism figure, not a claim. Decided by the
# quick run at 4550b7e (fails). Known weakness: the uniform arm's progress is measured on its own
# children, so the gain over it also reflects which worlds each selection picks (a bystander
# policy probed on the same children would separate the two).
CLAIMS = [
    Claim(
        "beats_strongest_baseline",
        "DiCode's mean return on the target beats the strongest baseline (PPO on the target, "
        "domain randomisation, PLR, ACCEL, DiCode with uniform selection): against each "
        "baseline the mean paired difference over seeds (same seed, same evaluation maps) "
        "exceeds two paired standard errors.",
        "+17% mean return over the strongest baseline (Craftax, 2B steps)",
        f"min({_GAIN_LCBS}) > 0",
        profiles=("quick", "full"),
        placebo={"dicode": "ppo_target"},
    ),
    Claim(
        "deep_achievements_only_dicode",
        "The paper's late-game *combat* has no analogue in this world (no late-game enemies); "
        "its deepest tier is what needs iron tools (make an iron pickaxe or sword, collect a "
        "diamond). DiCode's late-tier success (per seed, its best late achievement) exceeds "
        "every baseline's by more than two standard errors over seeds.",
        "non-zero success on late-game combat tasks where prior methods fail",
        f"late_success.dicode - 2 * late_success.dicode.se > max({_BASE_LATE})",
        profiles=("quick", "full"),
        placebo={"dicode": "ppo_target"},
    ),
    Claim(
        "learnability_selection_matters",
        "Learnability-driven, lineage-aware selection beats the same loop with uniform "
        "selection from the archive (the dicode_random ablation): the mean paired return "
        "difference over seeds exceeds two paired standard errors.",
        "qualitative (ablation of the curriculum's selection)",
        "return_gain.dicode.over.dicode_random > 2 * return_gain.dicode.over.dicode_random.se",
        profiles=("quick", "full"),
        placebo={"dicode": "domain_randomisation"},
    ),
    Claim(
        "curriculum_stays_learnable",
        "The agent learns the worlds DiCode dreams: a child's goal success, measured at its "
        "birth and again after training on the same held-out maps, rises on average by more "
        "than two standard errors over seeds, and by more than under uniform selection from "
        "the same loop (dicode_random) by two paired standard errors.",
        "qualitative (sequences of experiences that remain learnable)",
        "learning_progress.dicode > 2 * learning_progress.dicode.se "
        "and learning_progress_gain_over_random > 2 * learning_progress_gain_over_random.se",
        profiles=("quick", "full"),
        placebo="frozen_agent",
    ),
    Claim(
        "craftax_beats_ppo",
        "On the real Craftax-Classic, DiCode's mean return on the target beats PPO trained on "
        "the target alone: the mean paired difference over the seeds (same seed: same PPO "
        "initialisation key and the same held-out evaluation maps) exceeds two paired standard "
        "errors. PPO on the target is the only Craftax baseline here (the others run only in "
        "the miniature world).",
        "+17% mean return over the strongest baseline (Craftax, 2B steps)",
        "craftax.return_gain.dicode.over.ppo_target "
        "> 2 * craftax.return_gain.dicode.over.ppo_target.se",
        profiles=("craftax", "full"),
        placebo={"dicode": "ppo_target"},
    ),
]

BENCH_CLAIMS = [
    Claim(
        "no_recompiles",
        "Dreamed worlds are lowered to one fixed-shape parameter pytree: feeding new worlds "
        "after warm-up compiles nothing.",
        "issue requirement (one recompile per world would eat the budget)",
        "recompiles_after_warmup == 0",
        kind="absolute",
        floor="a world lowered to a new pytree shape recompiles once per world (>= 1 here)",
    ),
    Claim(
        "millions_of_steps",
        "The crafting world is fast enough for millions of steps on 2 cores: over 100k "
        "vmapped steps per second with random actions.",
        "issue requirement",
        "env_steps_per_second.crafting_world > 100000",
        profiles=("quick", "full"),
        kind="absolute",
        floor="Craftax-Classic runs ~2.3k steps/s on this CPU; not forced by the bench",
    ),
]

PAPER = Paper(
    slug="dicode",
    title="Dreaming in Code: curricula of environment code for open-ended learning (DiCode)",
    profiles=PROFILES,
    run="icml26.dicode.experiment:run",
    claims=CLAIMS,
    bench="icml26.dicode.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="jax",
    summary="dreamed world programs + learnability curriculum vs PPO, DR, PLR, ACCEL in a JAX crafting world",
)
