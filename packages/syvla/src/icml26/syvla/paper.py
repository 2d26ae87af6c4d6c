"""The SyVLA paper as the ``icml26`` CLI sees it: configs, profiles and claims (light imports)."""

from __future__ import annotations

from icml26.shared import Claim, Paper
from icml26.syvla.config import BABYAI_LEVELS, BenchConfig, RunConfig

__all__ = ["CLAIMS", "PAPER"]

_SMOKE = RunConfig(
    seeds=1,
    demo_episodes=30,
    vqa_train_states=200,
    vqa_val=40,
    vqa_max_steps=4,
    bc_steps=8,
    bc_batch=32,
    rl_updates=2,
    n_envs=4,
    n_steps=8,
    ppo_epochs=1,
    minibatch=32,
    vqa_steps=1,
    eval_episodes=4,
    vqa_eval=40,
)
# trimmed to fit 5 minutes of one core (342 CPU-s at bc_steps 300, 8 RL updates, 64 episodes)
_QUICK = RunConfig(bc_steps=200, rl_updates=6, eval_episodes=48)
_FULL = RunConfig(
    shared_backbone=False,
    seeds=5,
    demo_episodes=1500,
    vqa_train_states=10_000,
    bc_steps=3000,
    rl_updates=60,
    eval_episodes=300,
    vqa_eval=1000,
)


def _beats(metric: str, method: str, other: str, margin: float) -> str:
    """``method`` above ``other`` by ``margin`` beyond the noise of the paired gap: the mean
    over seeds of ``method - other`` (same seed: same demonstrations, rooms and evaluation
    episodes) at least ``margin`` plus ``t(0.975, seeds - 1)`` standard errors of that mean
    (:mod:`icml26.syvla.tables`). Under the placebo ``{method: other}`` the rule reads the
    baseline against itself, seed ``i`` paired with ``i + 1`` (gap 0), and fails."""
    key = f"{metric}.{method}.{other}"
    return f"gap.{key} >= {margin} + gap_margin.{key}"


#: minigrid's registry levels with the bot's demonstrations (``icml26 run syvla --profile
#: babyai``): the same pipeline, far below published BabyAI budgets (stated in the results)
_BABYAI = RunConfig(
    levels=BABYAI_LEVELS,
    # the baseline and both ablations (decoupling, co-training) on every level and seed
    methods=("syvla", "bc", "bc_ppo", "no_decoupling", "no_cotrain"),
    rgb_steps=1500,
    demo_episodes=300,
    rl_updates=8,
    eval_episodes=64,
)

#: the VQA pretraining alone, written as a shippable backbone (``<run>/backbone/``): the
#: command that regenerates ``icml26/syvla/backbones/`` (:mod:`icml26.syvla.backbone`)
_PRETRAIN = RunConfig(pretrain_only=True, pretrained_backbone="train", cache_pretrain=False)

_MEASURED = ("quick", "full")
CLAIMS = [
    Claim(
        "success_in_distribution",
        "SyVLA's task success on the training distribution beats BC followed by plain PPO "
        "(joint training, no guidance, no co-training) by 3 points beyond the paired noise "
        "(t(0.975, seeds - 1) SEs of the per-seed gap).",
        "superior task success rates (real-robot tasks; no number in the abstract)",
        _beats("success.train", "syvla", "bc_ppo", 0.03),
        profiles=_MEASURED,
        placebo={"syvla": "bc_ppo"},
    ),
    Claim(
        "success_out_of_distribution",
        "SyVLA's mean success over the unseen colour-object, layout and language splits beats "
        "BC + plain PPO by 3 points beyond the paired noise.",
        "stronger out-of-distribution generalisation (no number in the abstract)",
        _beats("success_ood", "syvla", "bc_ppo", 0.03),
        profiles=_MEASURED,
        placebo={"syvla": "bc_ppo"},
    ),
    Claim(
        "decoupling_preserves_vqa",
        "Intention Decoupling preserves the pretrained backbone: after BC and RL, SyVLA's "
        "held-out VQA accuracy beats the same pipeline without decoupling (gradients of the "
        "action losses into the backbone, in BC and RL) by 2 points beyond the paired noise.",
        "effectively preserving core vision-language capabilities",
        _beats("vqa_accuracy", "syvla", "no_decoupling", 0.02),
        profiles=(*_MEASURED, "babyai"),
        placebo={"syvla": "no_decoupling"},
    ),
    Claim(
        "cotrain_preserves_vqa",
        "VQA co-training during RL preserves the backbone: SyVLA's held-out VQA accuracy "
        "after BC and RL beats the same pipeline without co-training by 2 points beyond the "
        "paired noise (on `babyai` the co-training questions are about the registry levels' "
        "partial views, the held-out ones about fully observed custom rooms).",
        "effectively preserving core vision-language capabilities",
        _beats("vqa_accuracy", "syvla", "no_cotrain", 0.02),
        profiles=(*_MEASURED, "babyai"),
        placebo={"syvla": "no_cotrain"},
    ),
    Claim(
        "guidance_stabilises",
        "Similar-sample guidance stabilises policy updates: the mean per-update KL(pi_old || "
        "pi_new) with guidance is at most 80% of that without, paired by seed on the log "
        "scale (the per-seed log10 ratio at most log10(0.8) less t(0.975, seeds - 1) SEs).",
        "a similar-sample guided RL pipeline to stabilize policy updates",
        "gap.log10_update_kl.syvla.no_similar + gap_margin.log10_update_kl.syvla.no_similar "
        "<= log10(0.8)",
        profiles=_MEASURED,
        placebo={"syvla": "no_similar"},
    ),
    Claim(
        "pretrained_backbone",
        "The VQA-pretrained backbone answers at least 80% of held-out questions before any "
        "action is learnt (the issue's bar for a backbone worth protecting).",
        "SyVLA starts from a pretrained VLM (method description)",
        "vqa_pretrained >= 0.8",
        profiles=(*_MEASURED, "babyai", "pretrain"),
        kind="absolute",
        floor="the most frequent answer per question family scores about 0.35 and an untrained "
        "head about 0.05; 0.8 needs the backbone to ground colours, types and directions in "
        "the view, and is not forced: pretraining stops at max steps whether or not it is met",
    ),
]

CLAIMS.append(
    Claim(
        "success_babyai",
        "On minigrid's registry levels GoToLocal, PickupLoc and PutNextLocal (partial views), SyVLA's "
        "success averaged over the levels beats BC + plain PPO by 3 points beyond the paired "
        "noise (t(0.975, seeds - 1) SEs of the per-seed gap of the level means).",
        "superior task success rates (real-robot tasks; no number in the abstract)",
        _beats("babyai.mean", "syvla", "bc_ppo", 0.03),
        profiles=("babyai",),
        placebo={"syvla": "bc_ppo"},
    )
)
CLAIMS.append(
    Claim(
        "decoupling_success_babyai",
        "Intention Decoupling isolates control-relevant features: on the registry levels, "
        "SyVLA's mean success beats the same pipeline without decoupling (action losses into "
        "the backbone in BC and RL) by 3 points beyond the paired noise.",
        "isolate control-relevant features from reasoning contexts (no number in the abstract)",
        _beats("babyai.mean", "syvla", "no_decoupling", 0.03),
        profiles=("babyai",),
        placebo={"syvla": "no_decoupling"},
    )
)

BENCH_CLAIMS = [
    Claim(
        "realtime_policy",
        "One policy forward (batch 1) is fast enough for 20 Hz closed-loop control on a CPU core.",
        "not stated (real-robot control rates)",
        "forward_latency_ms.b1 < 50",
        kind="absolute",
        floor="no policy is faster than zero; 50 ms is the 20 Hz control budget, and a larger "
        "backbone or a loaded machine misses it",
    ),
]

PAPER = Paper(
    slug="syvla",
    title="SyVLA: Intention Decoupling and similar-sample guided RL for vision-language-action models",
    profiles={
        "smoke": _SMOKE,
        "quick": _QUICK,
        "full": _FULL,
        "babyai": _BABYAI,
        "pretrain": _PRETRAIN,
    },
    run="icml26.syvla.experiment:run",
    claims=CLAIMS,
    bench="icml26.syvla.bench:bench",
    bench_profiles={
        "smoke": BenchConfig(
            n_envs=4, env_steps=20, forward_batch=8, forward_reps=3, ppo_updates=1
        ),
        "quick": BenchConfig(),
        "full": BenchConfig(
            n_envs=64, env_steps=500, forward_batch=256, forward_reps=200, ppo_updates=5
        ),
    },
    bench_claims=BENCH_CLAIMS,
    readme_tables="icml26.syvla.tables:markdown_tables",
    framework="torch",
    summary="SyVLA on BabyAI: VQA-preserving VLA with Intention Decoupling and similar-sample guided PPO",
)
