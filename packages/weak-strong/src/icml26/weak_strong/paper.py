"""The ``weak-strong`` paper as the ``icml26`` CLI sees it (light imports only)."""

from __future__ import annotations

from dataclasses import replace

from icml26.shared import Claim, Paper
from icml26.shared.keys import number_part
from icml26.weak_strong.config import (
    DEFAULT_STEP_SIZE,
    SYNTHETIC_STREAMS,
    BenchConfig,
    RunConfig,
)

__all__ = ["BENCH_PROFILES", "CLAIMS", "COST_MARGIN", "MATH_TOL", "PAPER", "PROFILES"]

_QUICK = RunConfig()


#: Least tolerance of ``online_at_target_math`` (both sides of the target, shown within it:
#: ``|excess| + 2 SE <= tolerance``); the
#: claim's tolerance on each side is the larger of this and the guarantee's slack at the
#: stream's length (``slack_accept`` = ``C_a / #wrong``, ``slack_reject`` = ``C_r / #correct``,
#: reported by the length study), so a short real stream is not asked for more than the
#: guarantee gives.
MATH_TOL = 0.02

#: A controlling policy must save at least this much on the score-blind policy's strong
#: calls (``1 - 2 alpha``: accept w.p. alpha, reject w.p. alpha, ask the rest).
COST_MARGIN = 0.05


def _at_target(stream: str, tol: float, *, slack: bool = False) -> str:
    """At every target: both online error rates shown within ``tol`` of the target on either
    side (with ``slack``: within ``max(tol, slack_<side>.<stream>.a<alpha>)``, the guarantee's
    slack at the stream's length): ``|excess| + 2 SE <= tol``, the whole 2-SE interval of the
    mean over repeats inside the band (more noise makes the rule harder to pass, never
    easier), and strong calls at least :data:`COST_MARGIN` below the score-blind policy's
    ``1 - 2 alpha`` (mean + 2 SE), so neither always-strong nor a score-blind coin passes."""
    terms = []
    for alpha in _QUICK.alphas:
        t = f"{stream}.online.a{number_part(alpha)}"
        for side in ("accept", "reject"):
            x, se = f"excess_{side}.{t}", f"excess_{side}_se.{t}"
            bound = f"{tol:g}"
            if slack:
                bound = f"max({tol:g}, slack_{side}.{stream}.a{number_part(alpha)})"
            terms.append(f"abs({x}) + 2 * {se} <= {bound}")
        terms.append(f"strong_freq.{t} + 2 * strong_freq_se.{t} <= {1 - 2 * alpha - COST_MARGIN:g}")
    return " and ".join(terms)


def _every_synthetic_stream_at_target(tol: float) -> str:
    """:func:`_at_target` over every stream of
    :data:`~icml26.weak_strong.config.SYNTHETIC_STREAMS` (so a new stream is covered too)."""
    return " and ".join(_at_target(stream, tol) for stream in SYNTHETIC_STREAMS)


PROFILES = {
    "smoke": replace(
        _QUICK,
        streams=(*SYNTHETIC_STREAMS, "math", "sudoku"),
        n_items=2000,
        repeats=2,  # the fewest with a standard error
        stream_repeats=2,
        n_calibration=300,
        math_source="fixture",
        sudoku_puzzles=4,
        sudoku_blanks=40,
        front_step_sizes=(0.01, 0.1),
        length_orders=4,
    ),
    "quick": _QUICK,
    "full": replace(
        _QUICK,
        n_items=100_000,
        repeats=10,
        stream_repeats=20,  # one repeat's spread is about 0.01 at 100k items
        n_calibration=2000,
        sudoku_puzzles=150,
        length_orders=50,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(n_items=20_000, rounds=1),
    "quick": BenchConfig(n_items=1_000_000, rounds=1),
    "full": BenchConfig(n_items=1_000_000, rounds=3),
}

#: The control claims' placebo: a policy that ignores the score (accept w.p. alpha, reject
#: w.p. alpha, ask the rest) has both errors on target on any stream; it fails the claims
#: only through the cost floor, which is what the weak verifier buys.
_BLIND = {"online": "score_blind"}
#: The cost claims' placebo: exhaustive verification in the online policy's place.
_PLACEBO = {"online": "always_strong"}


def _cost_rule(stream: str, max_freq: float) -> str:
    """Strong calls at most ``max_freq`` and both errors within 5 points of the target, each
    beyond noise (mean + 2 SE over repeats), at alpha = beta = 0.1. No final-accuracy term:
    at alpha = 0.1 it is "weighted mean error <= alpha", stricter than the stated 5 points."""
    t = f"{stream}.online.a0p1"
    return (
        f"strong_freq.{t} + 2 * strong_freq_se.{t} <= {max_freq:g}"
        f" and incorrect_accept.{t} + 2 * incorrect_accept_se.{t} <= 0.15"
        f" and incorrect_reject.{t} + 2 * incorrect_reject_se.{t} <= 0.15"
    )


CLAIMS = [
    Claim(
        "online_at_target_synthetic",
        f"On every synthetic stream (calibrated, over/under-confident, drifting, adversarially "
        f"ordered; 20k items, {_QUICK.stream_repeats} repeats in quick), the online algorithm (step size {DEFAULT_STEP_SIZE:g}) ends with "
        "both error rates within 2 points of the targets on either side at every target, "
        "shown with its noise (|mean excess| + 2 SE over repeats <= 0.02), with at least 5 points fewer strong calls than a "
        "score-blind policy on target (1 - 2 alpha).",
        "running errors converge to alpha, beta",
        _every_synthetic_stream_at_target(0.02),
        placebo=_BLIND,
    ),
    Claim(
        "online_at_target_math",
        f"On the real math stream at its full length (each answer once, mean over the "
        f"repeats' random orders), the online algorithm (step size {DEFAULT_STEP_SIZE:g}) "
        f"ends with both error rates within max({MATH_TOL:g}, the guarantee's slack at the "
        "stream's length) of the targets at every target, shown with its noise (|mean excess| + 2 SE over "
        "repeats <= the tolerance), with "
        "at least 5 points fewer strong calls than a score-blind policy, as on the synthetic "
        "streams. The slack (slack_reject.math = C_r / #correct, slack_accept.math = C_a / "
        f"#wrong; martingale term left out) is reported, with the correct answers a "
        f"{MATH_TOL:g} tolerance would need (needed_correct.math).",
        "the online algorithm controls both errors on any stream (long-run guarantee)",
        _at_target("math", MATH_TOL, slack=True),
        placebo=_BLIND,
    ),
    Claim(
        "math_reliability_at_lower_cost",
        "On mathematical reasoning, the online policy (step size "
        f"{DEFAULT_STEP_SIZE:g}) reaches reliability comparable to exhaustive strong "
        "verification (both error rates within 5 points of the target) with at least 46% "
        "fewer strong calls (each mean + 2 SE over repeats; alpha = beta = 0.1).",
        "up to 46% fewer strong calls on MATH at controlled errors",
        _cost_rule("math", 0.54),
        placebo=_PLACEBO,
    ),
    Claim(
        "sudoku_reliability_at_lower_cost",
        "On sequential Sudoku solving (solver check as strong verifier), the online policy "
        f"(step size {DEFAULT_STEP_SIZE:g}) keeps move-level reliability comparable to "
        "exhaustive verification (both error rates within 5 points of the target) with at "
        "least 60% fewer strong calls (each mean + 2 SE over repeats; alpha = beta = 0.1).",
        "up to 60% fewer strong calls on Sudoku at controlled errors",
        _cost_rule("sudoku", 0.4),
        placebo=_PLACEBO,
    ),
]

BENCH_CLAIMS = [
    Claim(
        "online_overhead_negligible",
        "Deciding with the online policy costs microseconds per query, negligible next to a "
        "weak or strong verification call (milliseconds to seconds).",
        "not quantified in the paper",
        "overhead_us.online <= 10",
        kind="absolute",
        floor="fixed thresholds cost about 2 us here (the Python call itself); the bound is "
        "on our code's overhead, not forced: a per-item Python loop over a policy could cost more",
    ),
]

PAPER = Paper(
    slug="weak-strong",
    title="Weak-strong verification policies: when to trust cheap checks and when to verify",
    profiles=PROFILES,
    run="icml26.weak_strong.experiment:run",
    inputs="icml26.weak_strong.inputs:check_inputs",
    readme_tables="icml26.weak_strong.tables:readme_tables",
    claims=CLAIMS,
    bench="icml26.weak_strong.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="numpy",
    summary="accept / reject / defer-to-strong policies with online error control (alpha, beta)",
)
