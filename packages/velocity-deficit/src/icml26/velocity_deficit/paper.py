"""The ``Paper`` object for ``icml26 velocity-deficit`` (light imports only: no torch)."""

from __future__ import annotations

from icml26.shared import Claim, Paper
from icml26.velocity_deficit.config import BenchConfig, VDConfig

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

_SMOKE = VDConfig(
    datasets=("gmm2", "gmm16", "digits"),
    compare=("digits",),
    n_train=600,
    n_test=100,
    width=32,
    depth=1,
    train_steps=30,
    batch_size=64,
    nfe=(2, 4),
    n_samples=64,
    ratio_samples=64,
    ratio_times=(0.0, 0.5, 0.95),
    ssc_alphas=(-0.1, 0.1),
    ssc_betas=(1.0,),
    ssc_select_nfe=4,
    classifier_steps=20,
    seeds=2,
    threads=1,
)

# Five datasets (gmm2 and gmm64 are left to `--set datasets=...`: three seeds of all seven take
# 4.5 minutes on one core) and a short validation grid, to stay within 3.5 minutes.
_QUICK = VDConfig(
    datasets=("gmm16", "gmm256", "gmm1024", "digits", "mnist"),
    compare=("digits", "mnist"),
    n_train=10_000,
    n_test=1000,
    width=128,
    depth=2,
    train_steps=1000,
    batch_size=256,
    nfe=(5, 10, 25, 50, 250),
    n_samples=500,
    ratio_samples=500,
    ssc_alphas=(-0.05, 0.2),
    ssc_betas=(1.0, 3.0),
    classifier_steps=400,
    seeds=3,
)

# The highest-dimensional data (the d = 1024 mixture, MNIST 784-d) with a model 3x wider in
# parameters and trained 4x longer than quick's, so that the fit check (FM loss against the
# exact field's, R(t) against the exact field's at the start) can tell the objective's deficit
# from under-fitting; three seeds. About 25 minutes on one core.
_FULL = VDConfig(
    datasets=("gmm16", "gmm256", "gmm1024", "digits", "mnist"),
    compare=("digits", "mnist"),
    n_train=20_000,
    n_test=1000,
    width=256,
    depth=3,
    train_steps=4000,
    batch_size=256,
    nfe=(5, 10, 25, 50, 100, 250),
    n_samples=1000,
    ratio_samples=1000,
    ssc_alphas=(-0.1, -0.05, 0.05, 0.1, 0.2),
    ssc_betas=(1.0, 3.0),
    classifier_steps=1500,
    seeds=3,
)

PROFILES = {"smoke": _SMOKE, "quick": _QUICK, "full": _FULL}

BENCH_PROFILES = {
    "smoke": BenchConfig(dim=16, width=32, depth=1, batch=64, nfe=(2, 4), repeats=1, threads=1),
    "quick": BenchConfig(),
    "full": BenchConfig(dim=784, width=512, depth=3, batch=2000, nfe=(10, 50, 250), repeats=5),
}

CLAIMS = [
    Claim(
        "mse_underestimates_velocity",
        "The MSE objective systematically under-estimates the velocity magnitude (Velocity "
        "Deficit), more so in high dimension: learned |v| / E|x1 - x0| < 1 along the path on "
        "the highest-dimensional mixture, and the mean ratio falls as the dimension grows.",
        "qualitative (velocity deficit in high-dimensional practice)",
        'max_of("velocity_ratio.gmm1024.t*") < 1 and velocity_ratio_slope_vs_dim < 0',
        profiles=("quick", "full"),  # smoke: small mixtures, few steps
    ),
    Claim(
        "ssc_improves_fd",
        "SSC improves sample quality with zero retraining (FD at 50 steps, every dataset, by more "
        "than 2 standard errors over seeds).",
        "FID 13.68 -> 7.58 (-44.6%) on ImageNet-256 at 50 steps",
        'min_of("fd_improvement_lcb.*.ssc.nfe50") > 0',
        profiles=("quick", "full"),  # smoke: small mixtures, few steps
    ),
    Claim(
        "ssc_50_beats_baseline_250",
        "With SSC a 50-step sampler beats the 250-step baseline (on the image datasets, by more "
        "than 2 standard errors over seeds).",
        "FID 7.58 at 50 steps vs 8.65 at 250 steps (5x speed-up)",
        "fd_improvement_vs_baseline_250_lcb.digits.ssc.nfe50 > 0"
        " and fd_improvement_vs_baseline_250_lcb.mnist.ssc.nfe50 > 0",
        profiles=("quick", "full"),  # smoke: small mixtures, few steps
    ),
    Claim(
        "mafm_improves_fd",
        "MAFM (training-based) improves sample quality over the MSE baseline (FD at 50 steps, "
        "mean over the compared datasets of the change less 2 standard errors).",
        "improves FID (training-based Initial Energy Injection)",
        'mean_of("fd_improvement_lcb.*.mafm.nfe50") > 0',
        profiles=("quick", "full"),  # smoke: small mixtures, few steps
    ),
]

BENCH_CLAIMS = [
    Claim(
        "ssc_costs_nothing",
        "SSC is one line of code: it adds no measurable sampling cost (time ratio <= 1.1).",
        "zero retraining, one line of code",
        "ssc_overhead_ratio <= 1.1",
    )
]

PAPER = Paper(
    slug="velocity-deficit",
    title="Velocity deficit in flow matching: MAFM and the Scale Schedule Corrector",
    profiles=PROFILES,
    run="icml26.velocity_deficit.experiment:run",
    claims=CLAIMS,
    bench="icml26.velocity_deficit.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="Velocity Deficit / Integration Lag diagnostics, MAFM and SSC for flow matching",
)
