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
_QUICK = RunConfig()
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
    """``method`` above ``other`` by ``margin`` plus two standard errors of each (SEs over
    seeds, added: conservative for paired seeds). Under the placebo method -> other both
    sides are equal and the rule fails."""
    head, _, rest = metric.partition(".")
    se = ".".join(p for p in (f"{head}_se", rest) if p)
    return (
        f"{metric}.{method} >= {metric}.{other} + {margin} + 2 * {se}.{method} + 2 * {se}.{other}"
    )


#: minigrid's registry levels with the bot's demonstrations (``icml26 run syvla --profile
#: babyai``): the same pipeline, far below published BabyAI budgets (stated in the results)
_BABYAI = RunConfig(
    levels=BABYAI_LEVELS,
    methods=("syvla", "bc", "bc_ppo"),
    rgb_steps=1500,
    demo_episodes=300,
    rl_updates=8,
    eval_episodes=64,
)

_MEASURED = ("quick", "full")
CLAIMS = [
    Claim(
        "success_in_distribution",
        "SyVLA's task success on the training distribution beats BC followed by plain PPO "
        "(joint training, no guidance, no co-training) by 3 points beyond two SEs of each.",
        "superior task success rates (real-robot tasks; no number in the abstract)",
        _beats("success.train", "syvla", "bc_ppo", 0.03),
        profiles=_MEASURED,
        placebo={"syvla": "bc_ppo"},
    ),
    Claim(
        "success_out_of_distribution",
        "SyVLA's mean success over the unseen colour-object, layout and language splits beats "
        "BC + plain PPO by 3 points beyond two SEs of each.",
        "stronger out-of-distribution generalisation (no number in the abstract)",
        _beats("success_ood", "syvla", "bc_ppo", 0.03),
        profiles=_MEASURED,
        placebo={"syvla": "bc_ppo"},
    ),
    Claim(
        "decoupling_preserves_vqa",
        "Intention Decoupling preserves the pretrained backbone: after BC and RL, SyVLA's "
        "held-out VQA accuracy beats the same pipeline without decoupling (gradients of the "
        "action losses into the backbone, in BC and RL) by 2 points beyond two SEs of each.",
        "effectively preserving core vision-language capabilities",
        _beats("vqa_accuracy", "syvla", "no_decoupling", 0.02),
        profiles=_MEASURED,
        placebo={"syvla": "no_decoupling"},
    ),
    Claim(
        "guidance_stabilises",
        "Similar-sample guidance stabilises policy updates: the mean per-update KL(pi_old || "
        "pi_new) with guidance is at most 80% of that without, beyond two SEs of each.",
        "a similar-sample guided RL pipeline to stabilize policy updates",
        "update_kl.syvla + 2 * update_kl_se.syvla + 2 * update_kl_se.no_similar "
        "<= 0.8 * update_kl.no_similar",
        profiles=_MEASURED,
        placebo={"syvla": "no_similar"},
    ),
    Claim(
        "pretrained_backbone",
        "The VQA-pretrained backbone answers at least 80% of held-out questions before any "
        "action is learnt (the issue's bar for a backbone worth protecting).",
        "SyVLA starts from a pretrained VLM (method description)",
        "vqa_pretrained >= 0.8",
        profiles=(*_MEASURED, "babyai"),
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
        "success averaged over the levels beats BC + plain PPO by 3 points beyond two SEs of each.",
        "superior task success rates (real-robot tasks; no number in the abstract)",
        _beats("babyai.mean", "syvla", "bc_ppo", 0.03),
        profiles=("babyai",),
        placebo={"syvla": "bc_ppo"},
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
    profiles={"smoke": _SMOKE, "quick": _QUICK, "full": _FULL, "babyai": _BABYAI},
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
