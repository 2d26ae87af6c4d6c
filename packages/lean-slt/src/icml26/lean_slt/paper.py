"""The ``lean-slt`` paper as the ``icml26`` CLI sees it (light imports only).

The formalisation's theorems cannot fail, so "the bound holds" is a *test* here (``checks.*``
metrics, asserted in the test suite). The claims below measure what a theorem does not
force: how tight each bound is, and whether simulated rates follow the theorems' exponents.
"""

from __future__ import annotations

from dataclasses import replace

from icml26.lean_slt.config import BenchConfig, LeanSLTConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "CLAIMS", "PAPER", "PROFILES"]

_QUICK = LeanSLTConfig()

PROFILES = {
    "smoke": replace(
        _QUICK,
        dudley_sizes=(10, 100, 1000),
        dudley_draws=400,
        concentration_dim=20,
        concentration_draws=5000,
        linear_sizes=(50, 200, 800),
        linear_dims=(5, 20, 80),
        linear_dim_n=500,
        l1_dim=100,
        l1_sizes=(50, 100, 200),
        l0_dim=8,
        l0_sizes=(50, 200, 800),
        ls_reps=3,
        l1_reps=2,
        maurey_dims=(2, 10, 100),
        maurey_samples=300,
    ),
    "quick": _QUICK,
    "full": replace(
        _QUICK,
        dudley_sizes=(10, 18, 32, 56, 100, 178, 316, 562, 1000, 1778, 3162, 5623, 10000),
        dudley_draws=20_000,
        concentration_dim=200,
        concentration_draws=1_000_000,
        linear_sizes=(50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000),
        linear_dims=(5, 10, 20, 40, 80, 160, 320),
        linear_dim_n=5000,
        l1_dim=2000,
        l1_sizes=(100, 200, 400, 800, 1600, 3200),
        l0_dim=24,
        l0_sizes=(50, 100, 200, 500, 1000, 2000, 5000, 10000),
        ls_reps=50,
        l1_reps=6,
        maurey_dims=(2, 5, 10, 100, 1000, 10000),
        maurey_samples=4000,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(dudley_size=300, greedy_points=200, greedy_dim=10, rounds=1),
    "quick": BenchConfig(),
    "full": BenchConfig(dudley_size=100_000, greedy_points=5000, rounds=5),
}

_SLOPE = (
    "Dudley's bound and the Monte Carlo E sup grow with the same slope in log n (log-log "
    "slopes within 0.1 over the run's sizes, n from 10 to 10^4) for the {what}."
)

CLAIMS = [
    Claim(
        "dudley_slope_finite_iid",
        _SLOPE.format(what="maximum of n iid Gaussians (exact covering numbers)"),
        "E sup <= 12√2 σ ∫ √log N (theorem; tightness not stated)",
        "dudley.finite_iid.slope_gap <= 0.1",
    ),
    Claim(
        "dudley_slope_euclidean_ball",
        _SLOPE.format(what="linear process on the Euclidean ball B_2^n (volumetric covering)"),
        "E sup <= 12√2 σ ∫ √log N (theorem; tightness not stated)",
        "dudley.euclidean_ball.slope_gap <= 0.1",
    ),
    Claim(
        "dudley_slope_brownian",
        _SLOPE.format(what="Brownian motion on a grid of n + 1 points (exact covering numbers)"),
        "E sup <= 12√2 σ ∫ √log N (theorem; tightness not stated)",
        "dudley.brownian.slope_gap <= 0.1",
    ),
    Claim(
        "dudley_slope_l1_ball",
        _SLOPE.format(what="linear process on the l1 ball B_1^n (Maurey ∧ volumetric covering)"),
        "E sup <= 12√2 σ ∫ √log N (theorem; tightness not stated)",
        "dudley.l1_ball.slope_gap <= 0.1",
    ),
    Claim(
        "dudley_within_factor",
        "Where the covering numbers are exact or volumetric (finite iid, Euclidean ball, "
        "Brownian grid), the formalised Dudley bound is within a factor 32 of the true E sup "
        "at the largest n (the constant 12√2 ≈ 17 is most of the gap).",
        "constant 12√2 (no tightness figure in the paper)",
        "max(dudley.finite_iid.ratio, dudley.euclidean_ball.ratio, dudley.brownian.ratio) <= 32",
    ),
    Claim(
        "dudley_l1_log_loss",
        "On the l1 ball, Dudley's integral with Maurey's covering loses a logarithmic factor "
        "(bound ~ (log n)^{3/2}, truth ~ (log n)^{1/2}): its looseness grows by at least 1.5x "
        "from the smallest to the largest n.",
        "not in the paper (chaining theory: Dudley is not sharp on l1 balls)",
        "dudley.l1_ball.ratio >= 1.5 * dudley.l1_ball.first_ratio",
    ),
    Claim(
        "concentration_sharp_linear",
        "Gaussian Lipschitz concentration is sharp in its exponent for linear f = <a, X>: the "
        "smallest variance proxy that keeps the empirical tail under 2exp(-t²/2L²_eff) is at "
        "least 0.6 L² (it tends to L² in the far tail).",
        "P(|f - Ef| >= t) <= 2 exp(-t²/(2L²)) (theorem)",
        "concentration.linear.tightness >= 0.6",
    ),
    Claim(
        "concentration_loose_max",
        "For the maximum of n = 100 Gaussians the bound is loose (superconcentration): the "
        "empirical variance proxy is at most 0.35 L².",
        "P(|f - Ef| >= t) <= 2 exp(-t²/(2L²)) (theorem)",
        "concentration.max.tightness <= 0.35",
        profiles=("quick", "full"),
    ),
    Claim(
        "ls_linear_rate",
        "Least squares over linear predictors: ||f̂ - f*||²_n decays like n^-1 (fitted "
        "exponent within 0.15 of the theorem's).",
        "O(σ² r / n) (linear_minimax_rate_rank)",
        "abs(ls_rate.linear.exponent - ls_rate.linear.theory_exponent) <= 0.15",
    ),
    Claim(
        "ls_linear_dim_rate",
        "Least squares over linear predictors: the error grows like d^1 at fixed n (fitted "
        "exponent within 0.15 of the theorem's).",
        "O(σ² r / n) (linear_minimax_rate_rank)",
        "abs(ls_rate.linear_dim.exponent - ls_rate.linear_dim.theory_exponent) <= 0.15",
    ),
    Claim(
        "ls_l1_rate",
        "l1-constrained least squares at hard points of the l1 ball: the error decays like "
        "n^-1/2 (the slow rate σR√(log d / n)), fitted exponent within 0.15.",
        "sharp rate for sparse (l1) regression via Dudley + Maurey",
        "abs(ls_rate.l1.exponent - ls_rate.l1.theory_exponent) <= 0.15",
    ),
    Claim(
        "ls_l0_rate",
        "Best-subset least squares over s-sparse vectors: the error decays like n^-1 "
        "(σ² s log(ed/s)/n), fitted exponent within 0.15 (textbook, not formalised).",
        "σ² s log(ed/s) / n (Raskutti et al. 2011; not in the formalisation)",
        "abs(ls_rate.l0.exponent - ls_rate.l0.theory_exponent) <= 0.15",
    ),
    Claim(
        "maurey_squeeze",
        "For d >= 100, Maurey's bound on log N(ε, B_1^d) is within a factor 10 of a "
        "certified packing lower bound (at ε = R/4).",
        "N(ε) <= (2d+1)^⌈R²/ε²⌉ (theorem)",
        "maurey.squeeze_high_dim <= 10",
    ),
]

BENCH_CLAIMS = [
    Claim(
        "entropy_integral_fast",
        "The vectorised Gauss-Legendre entropy integral is at least 10x faster than adaptive "
        "scipy quadrature on the same integrand, agreeing to 1e-3.",
        "not in the paper",
        "bench.integral_speedup >= 10 and bench.integral_rel_diff <= 1e-3",
    ),
    Claim(
        "greedy_net_fast",
        "The vectorised greedy net returns the same net as a plain Python scan at least 5x faster.",
        "not in the paper",
        "bench.greedy_speedup >= 5 and bench.greedy_same_net == 1",
    ),
]

PAPER = Paper(
    slug="lean-slt",
    title="Lean 4 formalisation of statistical learning theory: the results as checked numerics",
    profiles=PROFILES,
    run="icml26.lean_slt.experiment:run",
    claims=CLAIMS,
    bench="icml26.lean_slt.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="numpy",
    summary="covering numbers, Dudley, Gaussian concentration, LS rates, Maurey: bounds vs Monte Carlo, mapped to Lean theorems",
)
