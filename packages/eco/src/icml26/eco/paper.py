"""The ``eco`` paper as the ``icml26`` CLI sees it: profiles, claims, jobs (light imports only)."""

from __future__ import annotations

from icml26.eco.config import ABLATIONS, ALL_SCHEMES, BenchConfig, ECOConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

PROFILES = {
    # seconds: a tiny slice of everything, for the tests
    "smoke": ECOConfig(
        schemes=("fp32", "master_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn", "eco_int4_sr"),
        corpus_bytes=200_000,
        d_model=32,
        n_heads=2,
        n_layers=1,
        d_ff=64,
        moe_d_ff=32,
        seq_len=32,
        lm_batch_size=4,
        lm_steps=6,
        val_batches=2,
        mlp_hidden=32,
        mlp_batch_size=32,
        mlp_steps=8,
        sweep_lrs=(1e-2, 1e-3),
        sweep_steps=4,
        ablations=("no_decay", "error_buffer", "delayed_scale", "inject_then_rescale"),
        ablation_workloads=("mlp",),
        ablation_schemes=("eco_fp8_rtn",),
        threads=1,
    ),
    # <= 3.5 CPU-minutes: every scheme on every workload, a 3-point equal-budget lr sweep, two
    # ablations (no lr decay, exact error feedback) of ECO-RTN on the MoE over 2 paired seeds
    "quick": ECOConfig(threads=1),
    # ~30 CPU-minutes (estimated, not run): 4x longer LM training, 5x longer MLP, a 5-point
    # sweep with SR too, the two quick ablations at this scale
    "full": ECOConfig(
        corpus_bytes=4_000_000,
        lm_batch_size=16,
        lm_steps=800,
        mlp_steps=1500,
        sweep_lrs=(1e-2, 3e-3, 1e-3, 3e-4),
        sweep_steps=150,
        sweep_schemes=(
            "master_fp8_rtn",
            "naive_fp8_rtn",
            "eco_fp8_rtn",
            "master_fp8_sr",
            "naive_fp8_sr",
            "eco_fp8_sr",
        ),
        threads=1,
    ),
    # ~17 CPU-minutes: every ablation of ECO-RTN (FP8 and INT4) on the MoE and the MLP at the
    # quick scale, 4 paired seeds; the main stage on the RTN schemes only, no lr sweep
    "ablate": ECOConfig(
        workloads=("moe_lm", "mlp"),
        schemes=(
            "fp32",
            *(f"{k}_{f}_rtn" for f in ("fp8", "int4") for k in ("master", "naive", "eco")),
        ),
        sweep_lrs=(),
        ablations=tuple(ABLATIONS),
        ablation_workloads=("moe_lm", "mlp"),
        ablation_seeds=(0, 1, 2, 3),
        threads=1,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(
        schemes=("master_fp8_rtn", "eco_fp8_rtn", "naive_fp8_rtn"),
        d_model=32,
        d_ff=64,
        n_experts=4,
        n_heads=2,
        seq_len=16,
        batch_size=2,
        warmup_steps=1,
        timed_steps=2,
        rounds=1,
        threads=1,
    ),
    "quick": BenchConfig(schemes=ALL_SCHEMES, threads=1),
    "full": BenchConfig(
        schemes=ALL_SCHEMES, d_model=256, d_ff=1024, timed_steps=30, rounds=3, threads=2
    ),
}

CLAIMS = [
    Claim(
        "eco_rtn_near_lossless_paired_seeds",
        "ECO with round-to-nearest FP8 matches master weights up to near-lossless accuracy on "
        "the sparse MoE, averaged over paired seeds (same initialisation and batches).",
        "near-lossless validation loss vs master weights (2.1B SMoE, FP8)",
        "ablation.moe_lm.eco_fp8_rtn.default.gap <= 0.02",
        profiles=("quick", "full"),  # and the ablate profile
    ),
    Claim(
        "eco_matches_master_fp8",
        "ECO (no master weights) matches the FP8 master-weight baseline up to near-lossless "
        "accuracy when pretraining transformer LMs (dense and sparse MoE).",
        "near-lossless validation loss vs master weights (30M-2.1B models, FP8)",
        'max_of("loss_gap_vs_master.*_lm.eco_fp8_*") <= 0.02',
    ),
    Claim(
        "eco_recovers_naive_loss",
        "Error feedback recovers most of what naive master-weight removal loses "
        "(round-to-nearest, every workload and format).",
        "naive removal degrades/diverges; ECO tracks the master-weight baseline",
        'mean_of("loss_gap_vs_master.*.eco_*_rtn") < 0.5 * mean_of("loss_gap_vs_master.*.naive_*_rtn")',
    ),
    Claim(
        "naive_error_inverse_lr",
        "Naive master-weight removal incurs an error that grows as the learning rate shrinks "
        "(∝ 1/lr), while ECO's stays small.",
        "Theorem: naive error ∝ 1/η; ECO converges to a constant-radius neighbourhood "
        "(checked on a convex problem, 10x lr range, equal lr·steps budget)",
        "lr_sweep.gap_at_min_lr.naive_fp8_rtn > 3 * lr_sweep.gap_at_max_lr.naive_fp8_rtn "
        "and lr_sweep.gap_at_min_lr.eco_fp8_rtn < 0.5 * lr_sweep.gap_at_min_lr.naive_fp8_rtn",
        profiles=("smoke", "quick", "full"),
    ),
    Claim(
        "pareto_shift_moe",
        "ECO shifts the static-memory vs validation-loss Pareto frontier of the sparse MoE: at "
        "lower static memory than the master-weight baseline of its format and rounding, its "
        "validation loss is within 2% of that baseline's (the best such ECO point).",
        "ECO moves the SMoE frontier (e.g. ~9 vs ~13 bytes/param with AdamW, FP8)",
        "pareto.moe_lm.eco_points_at_lower_memory >= 1 and "
        'min_of("pareto.moe_lm.eco_gap_at_lower_memory.*") <= 0.02',
    ),
]

BENCH_CLAIMS = [
    Claim(
        "step_cost_comparable",
        "ECO's step (update, re-quantize, momentum injection) costs about as much as the "
        "master-weight step it replaces.",
        "no extra memory; one extra fused elementwise op",
        "step_time_ms.eco_fp8_rtn <= 1.5 * step_time_ms.master_fp8_rtn",
    ),
]

PAPER = Paper(
    slug="eco",
    title="ECO: Quantized Training without Full-Precision Master Weights",
    profiles=PROFILES,
    run="icml26.eco.experiment:run",
    claims=CLAIMS,
    bench="icml26.eco.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="Error-compensating optimizer: FP8/INT4 weights, no FP32 master copy",
)
