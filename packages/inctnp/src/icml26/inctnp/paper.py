"""The incTNP paper as the ``icml26`` CLI sees it: configs, profiles and claims (light imports)."""

from __future__ import annotations

from icml26.inctnp.config import BenchConfig, RunConfig
from icml26.shared import Claim, Paper

__all__ = ["PAPER", "BenchConfig", "RunConfig"]

_SMOKE = RunConfig(
    groups=("gp", "diabetes"),
    width=32,
    layers=2,
    heads=4,
    steps=20,
    batch_size=8,
    n_points=32,
    n_test_tasks=8,
    ctx_sizes=(4, 16),
    bayes_points=8,
    bayes_perms=3,
    bayes_samples=4,
    bayes_tasks=2,
    latency_sizes=(16, 32),
    latency_repeats=2,
)
# quick: <= ~150 CPU-s on 2 cores (600 steps per model; 5 timing repeats)
_QUICK = RunConfig(steps=600, latency_repeats=5)
_FULL = RunConfig(
    groups=("gp", "gp2d", "diabetes", "temperature"),
    width=128,
    layers=5,
    heads=8,
    steps=6000,
    n_test_tasks=256,
    bayes_tasks=64,
    latency_repeats=20,
)

CLAIMS = [
    Claim(
        "matches_tnp",
        "incTNP matches (or beats) TNP-D's predictive performance (mean test NLL per point over tasks, within 0.05 nats).",
        "comparable or better NLL on GP, tabular and temperature tasks",
        'mean_of("nll.*.inctnp") <= mean_of("nll.*.tnp") + 0.05',
    ),
    Claim(
        "linear_updates",
        "Adding a point costs linear time for incTNP (log-log slope <= 1.2) versus super-linear, near-quadratic (>= 1.5) for TNP-D.",
        "O(N^2) -> O(N) per update",
        "scaling_exponent.inctnp <= 1.2 and scaling_exponent.tnp >= 1.5",
    ),
    Claim(
        "sequential_speedup",
        "Sequential inference is at least an order of magnitude faster at N = 1024.",
        "orders-of-magnitude speedups",
        "speedup.n1024 >= 10",
        profiles=("quick", "full"),  # smoke times N <= 32 only
    ),
    Claim(
        "implicit_bayes",
        "Under one-at-a-time streaming incTNP is as implicitly Bayesian as TNP-D: its KL to "
        "the permutation mixture (the paper's measure, mean over tasks) within 1.5x of TNP-D's.",
        "comparable implicit Bayesianness",
        'mean_of("exchangeability_kl.*.inctnp") <= 1.5 * mean_of("exchangeability_kl.*.tnp")',
    ),
    Claim(
        "implicit_bayes_spread",
        "The same on our second measure: the spread over orders of the sequential "
        "log-likelihood (mean over tasks) within 1.5x of TNP-D's.",
        "comparable implicit Bayesianness",
        'mean_of("implicit_bayes_gap.*.inctnp") <= 1.5 * mean_of("implicit_bayes_gap.*.tnp")',
    ),
]

BENCH_CLAIMS = [
    Claim(
        "speedup_4096",
        "Orders-of-magnitude speedup for one streaming update at N = 4096.",
        "orders of magnitude",
        "speedup.n4096 >= 100",
    ),
    Claim(
        "linear_cache",
        "Streaming memory is linear in N: the peak bytes allocated by one incTNP update "
        "(the cache doubling included) have a log-log slope within 0.2 of 1 over N >= 512.",
        "linear memory",
        "abs(update_peak_scaling_exponent.inctnp - 1) <= 0.2",
    ),
]

PAPER = Paper(
    slug="inctnp",
    title="incTNP: Incremental Transformer Neural Processes",
    profiles={"smoke": _SMOKE, "quick": _QUICK, "full": _FULL},
    run="icml26.inctnp.experiment:run",
    claims=CLAIMS,
    timing_claims=True,  # linear_updates, sequential_speedup: update latencies
    bench="icml26.inctnp.experiment:bench",
    bench_profiles={
        "smoke": BenchConfig(width=32, layers=2, heads=4, sizes=(16, 32, 64), repeats=2),
        "quick": BenchConfig(),
        "full": BenchConfig(sizes=(64, 128, 256, 512, 1024, 2048, 4096, 8192), repeats=20),
    },
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="incremental transformer neural process: causal masking + KV cache, vs TNP-D and exact GP",
)
