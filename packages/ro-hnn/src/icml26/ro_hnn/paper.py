"""The RO-HNN paper as the ``icml26`` CLI sees it (light: no jax import here)."""

from __future__ import annotations

from icml26.ro_hnn.config import Architecture, BenchConfig, RunConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

PROFILES = {
    # seconds: the CLI path end to end, tiny sizes (used by the tests)
    "smoke": RunConfig(
        systems=("fput",),
        models=("rohnn", "ae_node"),
        n_seeds=1,
        fput_n=8,
        n_train=4,
        n_test=2,
        horizon=4,
        steps=6,
        batch=4,
        window=2,
        chunk=6,
        checkpoint_every=6,
        arch=Architecture(
            latent_dof=2,
            ae_hidden=(4,),
            hnn_hidden=(8,),
            node_hidden=(8,),
            ae_mlp_hidden=(8,),
            full_hidden=(8,),
            iterations=1,
        ),
    ),
    # <= 5 min on 2 cores: every model on every system at the sizes, 3 seeds
    "quick": RunConfig(),
    # the best reproduction 2 cores allow (~30 min): larger systems (cloth: 588 dims), longer training
    "full": RunConfig(
        fput_n=64,
        wave_n=128,
        cloth_n=10,
        n_train=48,
        n_test=32,
        steps=1500,
        batch=32,
        window=8,
        checkpoint_every=500,
        arch=Architecture(
            latent_dof=6, ae_hidden=(32,), hnn_hidden=(64, 64), full_hidden=(128, 128)
        ),
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

_SYSTEMS = ("fput", "wave", "cloth")

CLAIMS = [
    Claim(
        "energy_bounded",
        "RO-HNN predictions are physically consistent: the true energy of decoded long rollouts "
        "(10x the training horizon) stays close to the truth.",
        "qualitative ('physically-consistent, stable' predictions); we test drift <= 10%",
        'max_of("energy_drift.*.rohnn") <= 0.1',
    ),
    Claim(
        "long_horizon_beats_unconstrained",
        "RO-HNN is more accurate at long horizons than an unconstrained autoencoder with latent neural ODE.",
        "qualitative (stable long-term predictions vs unstructured baselines)",
        " and ".join(
            f"rollout_error.{s}.rohnn.h10 < rollout_error.{s}.ae_node.h10" for s in _SYSTEMS
        ),
        profiles=("quick", "full"),  # smoke simulates FPUT only
    ),
    Claim(
        "generalises",
        "RO-HNN generalises to unseen initial conditions: its error on held-out initial conditions at the "
        "training horizon is within 2x of its error on the training initial conditions.",
        "qualitative ('generalizable predictions')",
        'max_of("generalisation_gap.*.rohnn") <= 2',
    ),
    Claim(
        "symplectic_by_construction",
        "The autoencoder's decoder is symplectic by construction (exactly, not by a penalty).",
        "exact (biorthogonal constraint + cotangent lift)",
        'max_of("symplecticity_defect.*.rohnn") < 1e-9',
    ),
    Claim(
        "scales_beyond_full_hnn",
        "RO-HNN extends HNNs to high-dimensional systems: on the highest-dimensional system (damped cloth) "
        "it is more accurate at long horizons than a full-order HNN trained with the same budget.",
        "qualitative (HNN baseline degrades in high dimension)",
        "rollout_error.cloth.rohnn.h10 < rollout_error.cloth.full_hnn.h10",
        profiles=("quick", "full"),  # smoke simulates FPUT only
    ),
]

BENCH_CLAIMS = [
    Claim(
        "reduced_rollout_faster",
        "The reduced model is cheaper to roll out than the full-order reference integrator at n = 512.",
        "qualitative (model order reduction for scalability)",
        "rollout_speedup.n512 > 1",
    ),
    Claim(
        "speedup_grows_with_dimension",
        "The speed-up grows with the full dimension.",
        "qualitative",
        "rollout_speedup.n512 > rollout_speedup.n32",
    ),
]

PAPER = Paper(
    slug="ro-hnn",
    title="Reduced-order Hamiltonian neural networks (Learning Hamiltonian Dynamics at Scale: A Differential-Geometric Approach)",
    profiles=PROFILES,
    run="icml26.ro_hnn.experiment:run",
    claims=CLAIMS,
    bench="icml26.ro_hnn.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="jax",
    summary="symplectic autoencoder + geometric HNN vs PSD, AE-NODE, full HNN on FPUT, wave, damped cloth",
)
