"""The ``weak-strong`` paper as the ``icml26`` CLI sees it (light imports only)."""

from __future__ import annotations

from dataclasses import replace

from icml26.shared import Claim, Paper
from icml26.weak_strong.config import SYNTHETIC_STREAMS, BenchConfig, WeakStrongConfig

__all__ = ["BENCH_PROFILES", "CLAIMS", "PAPER", "PROFILES"]

_QUICK = WeakStrongConfig()


def _every_synthetic_stream_at_target(tol: float) -> str:
    """The rule "both online error rates end within ``tol`` of the target" over every stream of
    :data:`~icml26.weak_strong.config.SYNTHETIC_STREAMS` (so a new stream is covered too)."""
    return " and ".join(
        f'max_of("excess_{side}.{stream}.online.*") <= {tol:g}'
        for stream in SYNTHETIC_STREAMS
        for side in ("accept", "reject")
    )


PROFILES = {
    "smoke": replace(
        _QUICK,
        streams=(*SYNTHETIC_STREAMS, "math", "sudoku"),
        n_items=2000,
        repeats=1,
        n_calibration=300,
        math_source="fixture",
        sudoku_puzzles=4,
        sudoku_blanks=40,
    ),
    "quick": _QUICK,
    "full": replace(
        _QUICK,
        n_items=100_000,
        repeats=10,
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

CLAIMS = [
    Claim(
        "online_at_target_synthetic",
        "On every synthetic stream (calibrated, over/under-confident, drifting, adversarially "
        "ordered; 20k items), the online algorithm's two error rates end within 2 points of "
        "the targets.",
        "running errors converge below alpha, beta",
        _every_synthetic_stream_at_target(0.02),
    ),
    Claim(
        "fixed_breaks_under_drift",
        "Thresholds fixed on a calibration split (conformal style) break when the stream "
        "drifts or is adversarially ordered: incorrect acceptance exceeds the target by more "
        "than 2 points at every target.",
        "fixed-threshold baseline violates the targets under shift",
        'min_of("excess_accept.drift.fixed_calibrated.*") > 0.02'
        ' and min_of("excess_accept.adversarial.fixed_calibrated.*") > 0.02',
    ),
    Claim(
        "math_reliability_at_lower_cost",
        "On mathematical reasoning, the online policy reaches reliability comparable to "
        "exhaustive strong verification (both error rates within 5 points of the target, "
        "final accuracy within alpha) with far fewer strong calls (46% fewer in the paper; "
        "here at alpha = beta = 0.1).",
        "up to 46% fewer strong calls on MATH at controlled errors",
        'm("strong_freq.math.online.a0.1") <= 0.54'
        ' and m("incorrect_accept.math.online.a0.1") <= 0.15'
        ' and m("incorrect_reject.math.online.a0.1") <= 0.15'
        ' and m("final_accuracy.math.online.a0.1") >= m("final_accuracy.math.always_strong.a0.1") - 0.1',
    ),
    Claim(
        "online_at_target_math",
        "On the real math stream at its full length (6,400 SmolLM2-135M answers, each seen "
        "once; mean over 20 random orders), the online algorithm's two error rates end within "
        "2 points of the targets at every target, as on the synthetic streams.",
        "the online algorithm controls both errors on any stream (long-run guarantee)",
        'min_of("control_length.math.online.*") > 0',
    ),
    Claim(
        "sudoku_reliability_at_lower_cost",
        "On sequential Sudoku solving (solver check as strong verifier), the online policy "
        "keeps move-level reliability comparable to exhaustive verification (both error rates "
        "within 5 points of the target, final accuracy within alpha) with far fewer strong "
        "calls (60% fewer in the paper; alpha = beta = 0.1).",
        "up to 60% fewer strong calls on Sudoku at controlled errors",
        'm("strong_freq.sudoku.online.a0.1") <= 0.4'
        ' and m("incorrect_accept.sudoku.online.a0.1") <= 0.15'
        ' and m("incorrect_reject.sudoku.online.a0.1") <= 0.15'
        ' and m("final_accuracy.sudoku.online.a0.1") >= m("final_accuracy.sudoku.always_strong.a0.1") - 0.1',
    ),
    Claim(
        "sharpness_value",
        "Sharpness governs the value of a calibrated weak verifier: the sharper its scores, "
        "the fewer strong calls the optimal policy needs.",
        "sharper verifiers need fewer strong calls",
        'm("population.strong_freq.sharp.a0.1") < m("population.strong_freq.medium.a0.1")'
        ' < m("population.strong_freq.blunt.a0.1")',
    ),
    Claim(
        "calibration_value",
        "Calibration governs the value of a weak verifier: calibrated scores let thresholds "
        "be set without any strong label (label_free holds alpha on the calibrated stream, "
        "misses it on the overconfident one), and non-monotone miscalibration makes "
        "raw-score thresholds cost extra strong calls.",
        "calibration and sharpness govern the value of weak verifiers",
        'abs(m("excess_accept.calibrated.label_free.a0.1")) <= 0.02'
        ' and m("excess_accept.overconfident.label_free.a0.1") > 0.02'
        ' and m("population.strong_freq.nonmonotone.score_order.a0.1")'
        ' > m("population.strong_freq.nonmonotone.eta_order.a0.1") + 0.01',
    ),
]

BENCH_CLAIMS = [
    Claim(
        "online_overhead_negligible",
        "Deciding with the online policy costs microseconds per query, negligible next to a "
        "weak or strong verification call (milliseconds to seconds).",
        "not quantified in the paper",
        "overhead_us.online <= 10",
    ),
]

PAPER = Paper(
    slug="weak-strong",
    title="Weak-strong verification policies: when to trust cheap checks and when to verify",
    profiles=PROFILES,
    run="icml26.weak_strong.experiment:run",
    claims=CLAIMS,
    bench="icml26.weak_strong.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="numpy",
    summary="accept / reject / defer-to-strong policies with online error control (alpha, beta)",
)
