"""The ``lean-slt`` paper as the ``icml26`` CLI sees it (light imports only).

The formalisation's theorems cannot fail, so "the bound holds" is a *test* here (``checks.*``
metrics, asserted by the test suite), and so is every figure that a closed form fixes (the
OLS error is exactly ``sigma^2 d / n`` in expectation; Dudley's bound on the Euclidean ball is
exactly proportional to ``sqrt(n)``). The claims measure what neither a theorem nor a closed
form decides: a rate attained at the formalisation's hard points, a regime where a bound is
loose, and how loose; each with a placebo that must fail.
"""

from __future__ import annotations

from icml26.lean_slt.config import BENCH_PROFILES, PROFILES
from icml26.shared import Claim, Paper

__all__ = ["BENCH_CLAIMS", "CLAIMS", "PAPER"]

CLAIMS = [
    Claim(
        "l1_slow_rate",
        "l1-constrained least squares at hard points of the l1 ball (s ~ R sqrt(n / log d) / σ "
        "equal spikes, d = 1000) attains the slow rate σR sqrt(log d / n) that the formalised "
        "pieces (master error bound, Dudley, Maurey's covering of the l1 image) give: the "
        "error's exponent in n (mean-error curve) is within 0.15 of -1/2 with a jackknife standard "
        "error over repetitions of at most 0.05. Placebo: the same estimator at a fixed-sparsity "
        "point (s = 2), where the fast rate s log d / n (exponent -1) applies instead.",
        "sharp rate for sparse (l1) regression (abstract); exponent -1/2",
        "abs(ls_rate.l1.exponent + 0.5) <= 0.15 and ls_rate.l1.stderr <= 0.05",
        placebo={"l1": "l1_easy"},
    ),
    Claim(
        "superconcentration_max",
        "Gaussian Lipschitz concentration is loose for the maximum of n Gaussians: the "
        "smallest variance proxy that keeps its empirical tail under 2 exp(-t²/2L²_eff) is, "
        "with two standard errors over independent batches, at most half that of a linear "
        "1-Lipschitz f (for which the bound is sharp in its exponent). Placebo: the linear f "
        "in the max's place.",
        "P(|f - Ef| >= t) <= 2 exp(-t²/(2L²)) for every L-Lipschitz f (theorem)",
        "concentration.max.tightness + 2 * concentration.max.tightness_se "
        "<= 0.5 * concentration.linear.tightness",
        placebo={"max": "linear"},
    ),
    Claim(
        "dudley_l1_looseness_grows",
        "On the l1 ball, Dudley's bound with Maurey's covering loses a logarithmic factor "
        "(bound ~ (log n)^{3/2}, truth ~ (log n)^{1/2}): its ratio to the exact E sup grows by "
        "at least 1.5x from the smallest to the largest n. Placebo: the Euclidean ball, where "
        "the volumetric covering makes Dudley's bound a constant multiple of the truth.",
        "not in the paper (chaining theory: Dudley's integral is not sharp on l1 balls)",
        "dudley.l1_ball.looseness >= 1.5 * dudley.l1_ball.first_looseness",
        placebo={"l1_ball": "euclidean_ball"},
    ),
]

BENCH_CLAIMS = [
    Claim(
        "entropy_integral_fast",
        "The vectorised Gauss-Legendre entropy integral is at least 10x faster than adaptive "
        "scipy quadrature on the same integrand, agreeing to 1e-3.",
        "not in the paper",
        "bench.integral_speedup >= 10 and bench.integral_rel_diff <= 1e-3",
        kind="absolute",
        floor="the same algorithm scores a speed-up of 1; agreement is required, so a "
        "faster wrong integral fails",
    ),
    Claim(
        "greedy_net_fast",
        "The vectorised greedy net returns the same net as a plain Python scan at least 5x faster.",
        "not in the paper",
        "bench.greedy_speedup >= 5 and bench.greedy_same_net == 1",
        kind="absolute",
        floor="the same algorithm scores a speed-up of 1; the nets must be identical",
    ),
]

PAPER = Paper(
    slug="lean-slt",
    title="Lean 4 formalisation of statistical learning theory: the results as checked numerics",
    profiles=PROFILES,
    run="icml26.lean_slt.experiment:run",
    claims=CLAIMS,
    bench="icml26.lean_slt.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="numpy",
    summary="covering numbers, Dudley, Gaussian concentration, LS rates, Maurey: bounds vs "
    "Monte Carlo, mapped to Lean theorems",
)
