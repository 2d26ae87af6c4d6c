"""The ``eco`` paper as the ``icml26`` CLI sees it: profiles, claims, jobs (light imports only)."""

from __future__ import annotations

from icml26.eco.config import (
    ABLATIONS,
    ALL_SCHEMES,
    RTN_SCHEMES,
    WORKLOADS,
    BenchConfig,
    RunConfig,
)
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "PAPER", "PROFILES"]

PROFILES = {
    # seconds: a tiny slice of everything, for the tests (two paired seeds)
    "smoke": RunConfig(
        seeds=(0, 1),
        schemes=("fp32", "master_fp8_rtn", "naive_fp8_rtn", "eco_fp8_rtn"),
        extra_schemes=("eco_int4_sr",),
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
        sweep_seeds=(0, 1),
        ablations=(
            "scale_at_injection",
            "quantize_all",
            "error_buffer",
            "delayed_scale",
            "inject_then_rescale",
        ),
        ablation_workloads=("mlp",),
        ablation_schemes=("eco_fp8_rtn",),
        ablation_seeds=(0, 1),
        threads=1,
    ),
    # the RTN schemes on every workload over 3 paired seeds and on the MoE over 5 more (8: its
    # gaps sit within about 1 SE of the bars at 3), fp32 on the MoE at seed 0, a 3-point
    # equal-budget lr sweep over 3 seeds, the injection-scaling ablation of ECO-RTN on the MoE
    # over 3 paired seeds (quantize_all: the ablate profile; the FP8 stochastic-rounding
    # schemes, which no claim reads: the ablate profile). 330 s wall before the MoE's experts were
    # read once per forward and the SR schemes left (measured at 5287fc6 on the shared CPU)
    "quick": RunConfig(
        schemes=RTN_SCHEMES,
        moe_seeds=(3, 4, 5, 6, 7),
        extra_schemes=("fp32",),
        sweep_steps=100,
        ablations=("scale_at_injection",),
        threads=1,
    ),
    # 4x longer LM training (2x the batch), 5x longer MLP, a 4-point sweep with SR too, the
    # injection ablation of ECO-FP8-RTN on the MoE: about 23 CPU-minutes (estimated from the
    # quick run's per-training times; not run since the job-shape migration)
    "full": RunConfig(
        schemes=RTN_SCHEMES,
        extra_schemes=("fp32",),
        extra_workloads=WORKLOADS,
        corpus_bytes=4_000_000,
        lm_batch_size=16,
        lm_steps=800,
        mlp_steps=1500,
        sweep_lrs=(1e-2, 3e-3, 1e-3, 3e-4),
        sweep_schemes=(
            "master_fp8_rtn",
            "naive_fp8_rtn",
            "eco_fp8_rtn",
            "master_fp8_sr",
            "naive_fp8_sr",
            "eco_fp8_sr",
        ),
        sweep_seeds=(0, 1),
        ablations=("scale_at_injection",),
        ablation_schemes=("eco_fp8_rtn",),
        threads=1,
    ),
    # every ablation of ECO-RTN (FP8 and INT4) on the MoE and the MLP at the quick scale,
    # 4 paired seeds; the main stage on the RTN schemes only, no lr sweep
    "ablate": RunConfig(
        seeds=(0, 1, 2, 3),
        workloads=("moe_lm", "mlp"),
        # at seed 0 on the MoE (the quick run's until 0.3.0)
        extra_schemes=("master_fp8_sr", "naive_fp8_sr", "eco_fp8_sr"),
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
        fused=False,  # compiling takes tens of seconds
        threads=1,
    ),
    "quick": BenchConfig(schemes=ALL_SCHEMES, timed_steps=10, rounds=5, threads=1),
    "full": BenchConfig(
        schemes=ALL_SCHEMES, d_model=256, d_ff=1024, timed_steps=20, rounds=5, threads=1
    ),
}

# the smoke profile's models barely move from their initialisation: every scheme is within 1%
# of every other there, so the loss claims are decided on the trained profiles only (the
# ablate profile produces their figures too)
_TRAINED = ("quick", "full")
_RTN_TO_NAIVE = {"eco_fp8_rtn": "naive_fp8_rtn", "eco_int4_rtn": "naive_int4_rtn"}

CLAIMS = [
    Claim(
        "eco_near_lossless_fp8",
        "ECO (no master weights, FP8, round-to-nearest) matches the FP8 master-weight baseline "
        "up to near-lossless accuracy when pretraining transformer LMs (dense and sparse MoE): "
        "the validation-loss gap, mean + 2 SE over paired seeds, is at most 2% on each.",
        "near-lossless validation loss vs master weights (30M-2.1B models, FP8)",
        'max_of("gap_ub.*_lm.eco_fp8_rtn") <= 0.02',
        profiles=_TRAINED,
        placebo={"eco_fp8_rtn": "naive_fp8_rtn"},
    ),
    Claim(
        "pareto_shift_rtn",
        "ECO shifts the static-memory vs validation-loss frontier of the sparse MoE (FP8, "
        "round-to-nearest): at the static memory of naive removal, below that of master "
        "weights, its validation loss is within 2% of master weights' (mean + 2 SE) and "
        "beats naive removal's (naive removal's paired gap minus ECO's, mean - 2 SE > 0).",
        "ECO moves the SMoE frontier (~9 vs ~13 bytes/param with AdamW, FP8)",
        "pareto.moe_lm.gap_at_lower_memory.eco_fp8_rtn <= 0.02 and "
        "vs_naive_lb.moe_lm.eco_fp8_rtn > 0",
        profiles=_TRAINED,
        placebo=_RTN_TO_NAIVE,
    ),
    Claim(
        "eco_recovers_naive_loss",
        "Error feedback recovers most of what naive master-weight removal loses: on every "
        "workload and format (round-to-nearest) where naive removal loses validation loss "
        "beyond noise, ECO removes at least half of that gap to master weights (the ratio "
        "of mean paired gaps, minus 2 delta-method SE).",
        "naive removal degrades/diverges; ECO tracks the master-weight baseline",
        'min_of("recovered_lb.*.eco_*_rtn") >= 0.5',
        profiles=_TRAINED,
        placebo=_RTN_TO_NAIVE,
    ),
    Claim(
        "naive_error_inverse_lr",
        "Naive master-weight removal incurs an error that grows as the learning rate shrinks "
        "(∝ 1/lr), while ECO's stays small.",
        "Theorem: naive error ∝ 1/η; ECO converges to a constant-radius neighbourhood "
        "(checked on a convex problem, 10x lr range, equal lr·steps budget)",
        "lr_sweep.gap_at_min_lr.naive_fp8_rtn > 3 * lr_sweep.gap_at_max_lr.naive_fp8_rtn "
        "and lr_sweep.gap_at_min_lr.eco_fp8_rtn + 2 * lr_sweep.gap_at_min_lr_se.eco_fp8_rtn "
        "< 0.5 * lr_sweep.gap_at_min_lr.naive_fp8_rtn",
        placebo={"eco_fp8_rtn": "naive_fp8_rtn"},
    ),
]

BENCH_CLAIMS = [
    Claim(
        "step_within_1p5x_adamw",
        "ECO's optimizer step (update, re-quantize, momentum injection) costs at most 1.5x "
        "torch.optim.AdamW's step (torch's default implementation, weight decay 0) on the "
        "same model (median over interleaved rounds); the ratios to AdamW's foreach and "
        "fused implementations are reported beside it.",
        "the paper: no extra memory, a few extra elementwise operations per step",
        "step_time_ratio.eco_fp8_rtn <= 1.5",
        kind="absolute",
        floor="AdamW itself scores 1.0; the per-parameter reference step of the same "
        "arithmetic (eco_fp8_rtn_reference, reported beside it) is what the batched step is "
        "measured against; 1.5 is the issue's budget, not a property the code forces",
    ),
    Claim(
        "fused_step_within_1p5x_adamw",
        "With fused=True (the whole step one compiled call per bucket, equal to the reference "
        "to float32 rounding), ECO's step costs at most 1.5x torch.optim.AdamW's step on the "
        "same model, timed after the compiling warm-up step.",
        "the paper: no extra memory, a few extra elementwise operations per step",
        "step_time_ratio.eco_fp8_rtn_fused <= 1.5",
        profiles=("quick", "full"),
        kind="absolute",
        floor="AdamW itself scores 1.0 and the eager batched step 1.3-1.6 here; the compiled "
        "step makes two fused loops per weight where AdamW makes seven passes, which nothing "
        "forces below 1.5",
    ),
    Claim(
        "step_cost_comparable",
        "ECO's step costs about as much as the master-weight step it replaces (within 1.5x).",
        "no extra memory; one extra fused elementwise op",
        "step_time_ms.eco_fp8_rtn <= 1.5 * step_time_ms.master_fp8_rtn",
        kind="absolute",
        floor="both steps share the update and the quantizer; ECO adds the error and its "
        "injection, master weights the FP32 copy's update: nothing forces either ratio",
    ),
]
PAPER = Paper(
    slug="eco",
    title="ECO: Quantized Training without Full-Precision Master Weights",
    profiles=PROFILES,
    run="icml26.eco.experiment:run",
    claims=CLAIMS,
    bench="icml26.eco.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="Error-compensating optimizer: FP8/INT4 weights, no FP32 master copy",
    readme_tables="icml26.eco.tables:readme_tables",
)
