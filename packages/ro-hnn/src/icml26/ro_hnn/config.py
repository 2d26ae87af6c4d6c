"""Configs of the run and bench jobs: frozen dataclasses, validated on creation (no jax import)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = [
    "BENCH_PROFILES",
    "MODELS",
    "PROFILES",
    "SYSTEM_NAMES",
    "Architecture",
    "BenchConfig",
    "RunConfig",
]

MODELS = ("rohnn", "rohnn_l2", "psd_hnn", "ae_node", "full_hnn")
SYSTEM_NAMES = ("fput", "wave", "cloth")


@dataclass(frozen=True)
class Architecture:
    """Sizes shared by the models (see :func:`icml26.ro_hnn.models.build_model`).

    Attributes:
        latent_dof: latent configuration dimension ``d`` (latent phase space ``2d``).
        ae_hidden: hidden widths of the symplectic autoencoder's embedding ``φ`` (capped at ``n``).
        hnn_hidden: hidden widths of the geometric HNN's ``M^{-1}``, ``V`` and ``D`` networks.
        node_hidden: hidden widths of the neural ODE's vector field.
        ae_mlp_hidden: hidden widths of the unconstrained autoencoder's MLPs.
        full_hidden: hidden widths of the full-order plain HNN.
        iterations: fixed-point iterations of the implicit Störmer-Verlet stages.
        substeps: latent integrator steps per observation step.
        activation_c: shape parameter of the biorthogonal layers' activations, in ``[0, 1)``.
        ae_activations: one activation per layer of the symplectic autoencoder
            (``len(ae_hidden) + 1`` names among ``identity``, ``smooth_leaky``, ``asinh``);
            empty: ``identity`` first, ``smooth_leaky`` after.
        init_from_psd: start the RO-HNN embedding (and the MLP autoencoder) at the PSD basis.
    """

    latent_dof: int = 4
    ae_hidden: tuple[int, ...] = (16,)
    hnn_hidden: tuple[int, ...] = (32, 32)
    node_hidden: tuple[int, ...] = (32, 32)
    ae_mlp_hidden: tuple[int, ...] = (64,)
    full_hidden: tuple[int, ...] = (64, 64)
    iterations: int = 3
    substeps: int = 1
    activation_c: float = 0.5
    ae_activations: tuple[str, ...] = ()
    init_from_psd: bool = True

    def __post_init__(self) -> None:
        if self.latent_dof < 1:
            raise ValueError(f"latent_dof must be >= 1, got {self.latent_dof}")
        if self.iterations < 1 or self.substeps < 1:
            raise ValueError("iterations and substeps must be >= 1")
        if not 0.0 <= self.activation_c < 1.0:
            raise ValueError(f"activation_c must be in [0, 1), got {self.activation_c}")
        known = ("identity", "smooth_leaky", "asinh")
        bad = [a for a in self.ae_activations if a not in known]
        if bad:
            raise ValueError(f"unknown ae_activations {bad}; choose from {', '.join(known)}")
        if self.ae_activations and len(self.ae_activations) != len(self.ae_hidden) + 1:
            raise ValueError(
                f"ae_activations needs len(ae_hidden) + 1 = {len(self.ae_hidden) + 1} names, "
                f"got {len(self.ae_activations)}"
            )
        if any(b < a for a, b in zip(self.ae_hidden, self.ae_hidden[1:], strict=False)):
            raise ValueError(
                f"ae_hidden must be non-decreasing (d -> ... -> n), got {self.ae_hidden}"
            )
        for name in ("ae_hidden", "hnn_hidden", "node_hidden", "ae_mlp_hidden", "full_hidden"):
            if any(int(w) < 1 for w in getattr(self, name)):
                raise ValueError(f"{name} widths must be positive, got {getattr(self, name)}")


@dataclass(frozen=True)
class RunConfig:
    """The main job: train every model on every system, roll out to 1x/5x/10x the horizon.

    Attributes:
        seed: the run's seed; separate streams of it (``icml26.shared.seed_for``) draw the
            data, and per model seed index ``k < n_seeds`` the initialisation and the windows.
        systems: systems to run, among ``fput``, ``wave``, ``cloth``.
        models: models to train, among :data:`MODELS` (``rohnn_l2``: RO-HNN without the
            energy term, the ablation).
        ablation_systems: systems on which ``rohnn_l2`` also runs (whatever ``models`` says).
        baseline_systems: systems on which the models other than ``rohnn`` run (empty: every
            system); see :meth:`models_for`.
        n_seeds: model seeds per (system, model); metrics are means over seeds.
        fput_n: FPUT masses; wave_n: wave nodes; cloth_n: cloth nodes per side.
        fput_amplitude: scale of the FPUT initial mode amplitudes (nonlinearity ``β·a²``).
        wave_dt: the wave's observation step (the training horizon is ``horizon · wave_dt``;
            the pulses' period is 2).
        cloth_damping: the cloth's Rayleigh damping rate γ.
        cloth_velocity: std of the cloth's random initial velocity (0: tilt-only family).
        cloth_tilt_max: the largest initial tilt of the cloth from horizontal (radians).
        cloth_dt: the cloth's observation step (the training horizon is ``horizon · cloth_dt``).
        n_train, n_test: trajectories (initial conditions) for training and for testing.
        horizon: observation steps of the training horizon (test rollouts go to 10x).
        steps: optimiser steps per model; batch: windows per step; window: rollout length.
        lr: peak Adam learning rate (cosine decay); w_*: loss weights (``w_energy``: the
            term on the true energy of decoded states, see :mod:`icml26.ro_hnn.train`; the
            models of ``energy_models`` are trained with it, never ``rohnn_l2``).
        energy_models: the models trained with the energy term (chosen on validation data,
            :mod:`icml26.ro_hnn.validation`).
        pretrain_steps: reconstruction-only steps of a trainable autoencoder (``rohnn``,
            ``rohnn_l2``, ``ae_node``) before the joint loss; pretrain_lr: their peak
            learning rate; pretrain_batch: states per step (see :mod:`icml26.ro_hnn.train`).
        n_val: validation trajectories (training horizon, their own seed stream) on which
            each trainer keeps its best checkpoint (:mod:`icml26.ro_hnn.train`); 0: the last.
        noise: relative Gaussian noise added to the training data.
        chunk: optimiser steps per compiled call; checkpoint_every: steps between checkpoints.
        data_file: a user ``.npz`` (``q``, ``p``, ``t``) run as the extra system ``user``.
        arch: model sizes.
        w_rec: weight of the reconstruction term.
        w_latent: weight of the latent-rollout term.
        w_obs: weight of the observed-rollout term.
    """

    seed: int = 0
    systems: tuple[str, ...] = SYSTEM_NAMES
    models: tuple[str, ...] = ("rohnn", "psd_hnn", "ae_node", "full_hnn")
    ablation_systems: tuple[str, ...] = ("fput",)
    baseline_systems: tuple[str, ...] = ()
    n_seeds: int = 3
    fput_n: int = 32
    wave_n: int = 64
    cloth_n: int = 5
    fput_amplitude: float = 0.3
    wave_dt: float = 0.1
    cloth_damping: float = 3.0
    cloth_velocity: float = 0.0
    cloth_tilt_max: float = 1.0471975511965976  # π/3
    cloth_dt: float = 0.05
    n_train: int = 24
    n_test: int = 16
    horizon: int = 20
    steps: int = 400
    batch: int = 16
    window: int = 6
    lr: float = 3e-3
    w_rec: float = 1.0
    w_latent: float = 1.0
    w_obs: float = 1.0
    w_energy: float = 1.0
    # psd_hnn without the term: on validation (icml26.ro_hnn.validation) it biases the dynamics of
    # a fixed linear decoder (wave h1 0.778 with, 0.733 without); RO-HNN keeps it (0.694, 0.704)
    energy_models: tuple[str, ...] = ("rohnn", "ae_node", "full_hnn")
    pretrain_steps: int = 0
    pretrain_lr: float = 1e-2
    pretrain_batch: int = 64
    n_val: int = 8
    noise: float = 0.0
    chunk: int = 50
    checkpoint_every: int = 200
    data_file: str = ""
    arch: Architecture = field(default_factory=Architecture)

    def __post_init__(self) -> None:
        unknown = [s for s in self.systems if s not in SYSTEM_NAMES]
        if unknown:
            raise ValueError(f"unknown systems {unknown}; choose among {', '.join(SYSTEM_NAMES)}")
        odd = [
            s
            for s in (*self.ablation_systems, *self.baseline_systems)
            if s not in (*SYSTEM_NAMES, "user")
        ]
        if odd:
            raise ValueError(
                f"unknown ablation_systems or baseline_systems {odd}; choose among "
                f"{', '.join(SYSTEM_NAMES)}, user"
            )
        if not self.systems and not self.data_file:
            raise ValueError("nothing to run: give at least one system or a data_file")
        if any(m not in MODELS or m == "rohnn_l2" for m in self.energy_models):
            raise ValueError(
                f"energy_models must be among {', '.join(MODELS)} except rohnn_l2, "
                f"got {self.energy_models}"
            )
        bad = [m for m in self.models if m not in MODELS]
        if bad or not self.models:
            raise ValueError(
                f"models must be a non-empty subset of {', '.join(MODELS)}, got {self.models}"
            )
        positive = (
            "n_seeds",
            "n_train",
            "n_test",
            "horizon",
            "steps",
            "batch",
            "window",
            "chunk",
            "checkpoint_every",
            "pretrain_batch",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.window > self.horizon:
            raise ValueError(
                f"window ({self.window}) cannot exceed the training horizon ({self.horizon})"
            )
        if self.fput_n < 2 or self.wave_n < 4 or self.cloth_n < 2:
            raise ValueError("sizes: fput_n >= 2, wave_n >= 4, cloth_n >= 2")
        if not (self.fput_amplitude > 0 and self.cloth_dt > 0 and self.wave_dt > 0):
            raise ValueError("fput_amplitude, wave_dt and cloth_dt must be > 0")
        if self.cloth_damping < 0 or self.cloth_velocity < 0 or self.cloth_tilt_max < 0:
            raise ValueError("cloth_damping, cloth_velocity and cloth_tilt_max must be >= 0")
        if self.n_val < 0:
            raise ValueError(f"n_val must be >= 0, got {self.n_val}")
        if self.pretrain_steps < 0 or self.pretrain_lr <= 0:
            raise ValueError("pretrain_steps must be >= 0 and pretrain_lr > 0")
        if (
            self.lr <= 0
            or self.noise < 0
            or min(self.w_rec, self.w_latent, self.w_obs, self.w_energy) < 0
        ):
            raise ValueError("lr must be > 0; noise and loss weights must be >= 0")
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed}")
        if self.data_file and not Path(self.data_file).suffix == ".npz":
            raise ValueError(f"data_file must be a .npz file with q, p, t; got {self.data_file!r}")
        if self.data_file and not Path(self.data_file).expanduser().is_file():
            raise ValueError(f"data_file {self.data_file!r} does not exist (or is not a file)")

    def models_for(self, system: str) -> tuple[str, ...]:
        """The models trained on ``system``: ``rohnn``, the baselines where ``baseline_systems``
        allows them, and ``rohnn_l2`` on the ``ablation_systems``.

        Args:
            system: a system name (or ``"user"``).

        Returns:
            Model names, without repeats.
        """
        baselines = not self.baseline_systems or system in self.baseline_systems
        kinds = [m for m in self.models if m == "rohnn" or baselines]
        if system in self.ablation_systems:
            kinds.append("rohnn_l2")
        return tuple(dict.fromkeys(kinds))


@dataclass(frozen=True)
class BenchConfig:
    """Rollout cost of RO-HNN vs the full-order reference integrator on FPUT chains of growing size.

    Attributes:
        seed: initialisation seed.
        sizes: FPUT chain lengths ``n`` (full phase space ``2n``).
        horizon: observation steps rolled out.
        trajectories: initial conditions rolled out at once.
        repeats: timed repetitions (the minimum is kept).
        train_steps: timed optimiser steps of RO-HNN (training step time).
        arch: RO-HNN sizes.
    """

    seed: int = 0
    sizes: tuple[int, ...] = (32, 128, 512)
    horizon: int = 200
    trajectories: int = 16
    repeats: int = 3
    train_steps: int = 20
    arch: Architecture = field(default_factory=Architecture)

    def __post_init__(self) -> None:
        if not self.sizes or any(n < max(2, self.arch.latent_dof) for n in self.sizes):
            raise ValueError(f"sizes must be >= max(2, latent_dof), got {self.sizes}")
        for name in ("horizon", "trajectories", "repeats", "train_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


#: The deep, wide biorthogonal stack of the wave comparison (capped at ``n`` per system).
DEEP_STACK = Architecture(latent_dof=4, ae_hidden=(16, 32, 64), hnn_hidden=(32, 32))

PROFILES = {
    # seconds: the CLI path end to end, tiny sizes (used by the tests)
    "smoke": RunConfig(
        systems=("fput",),
        models=("rohnn",),  # PSD + HNN: the quick run and the slow baseline tests
        ablation_systems=(),
        n_seeds=2,
        fput_n=8,
        wave_n=8,
        n_train=4,
        n_test=2,
        horizon=4,
        steps=6,
        batch=4,
        window=2,
        chunk=6,
        checkpoint_every=6,
        n_val=0,  # 6 steps: a checkpoint choice would pick the untrained start half the time
        arch=Architecture(latent_dof=2, ae_hidden=(4, 8), hnn_hidden=(8,), iterations=1),
    ),
    # the wave at the Kolmogorov barrier (PSD fails) and FPUT, RO-HNN with and without the
    # energy term against PSD + the same HNN, 3 seeds each; measured at c5965a8 (with 300
    # pretraining steps and best-validation checkpoints): 223 CPU-s, 436 s wall at load ~5
    # (791 s wall at load 10 before them). Chunks of 200 steps: 6 validation checkpoints.
    "quick": RunConfig(
        systems=("fput", "wave"),
        models=("rohnn", "psd_hnn"),
        baseline_systems=("wave",),
        fput_n=16,
        wave_n=32,
        n_train=24,
        n_test=8,
        steps=1000,
        chunk=200,
        checkpoint_every=1000,
        pretrain_steps=300,
        arch=DEEP_STACK,
    ),
    # every model and system, longer training (<= ~30 min on one core)
    "full": RunConfig(
        fput_n=32,
        wave_n=64,
        n_train=48,
        n_test=16,
        steps=1500,
        chunk=500,
        checkpoint_every=500,
        arch=replace(DEEP_STACK, ae_hidden=(16, 32, 64, 64)),
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(
        sizes=(8, 16),
        horizon=20,
        trajectories=2,
        repeats=1,
        train_steps=2,
        arch=Architecture(latent_dof=2, ae_hidden=(4,), hnn_hidden=(8,), iterations=1),
    ),
    "quick": BenchConfig(),
    "full": BenchConfig(
        sizes=(32, 128, 512, 1024), horizon=400, trajectories=32, repeats=5, train_steps=50
    ),
}
