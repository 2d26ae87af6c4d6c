"""The incTNP paper as the ``icml26`` CLI sees it: profiles and claims (light imports).

Predictive claims read paired gaps over seeds (``gap.nll.<regime>.<model>``: the task-mean
NLL minus TNP-D's; TNP-D's own is 0 ± 0) and ask for the upper 2-SE bound to stay within
0.05 nats. Their placebo is the GP *prior* (``gp_prior``), a predictor that ignores the
context: it must fail them, and does. Latency claims use the quartiles of repeated timings
in one run, so the margin is above the spread; their placebo is TNP-D in incTNP's place.
"""

from __future__ import annotations

from icml26.inctnp.config import BENCH_PROFILES, PROFILES, BenchConfig, RunConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_CLAIMS", "CLAIMS", "PAPER", "BenchConfig", "RunConfig"]

_CONTEXT_FREE = {"inctnp": "gp_prior"}
_TNP = {"inctnp": "tnp"}


def _matches(regime: str, when: str) -> Claim:
    return Claim(
        f"matches_tnp_{regime}",
        f"incTNP matches or beats TNP-D's predictive performance {when}: the upper 2-SE bound "
        "of the paired NLL gap (incTNP minus TNP-D, task mean, over seeds) is at most 0.05 nats.",
        "comparable or better NLL on GP, tabular and temperature tasks",
        f"gap.nll.{regime}.inctnp + 2 * gap_se.nll.{regime}.inctnp <= 0.05",
        placebo=_CONTEXT_FREE,
    )


CLAIMS = [
    _matches("targets", "after the same number of training targets"),
    _matches("converged", "with both models trained to convergence (or the step cap)"),
    Claim(
        "implicit_bayes_gap",
        "Under one-at-a-time streaming incTNP is as implicitly Bayesian as TNP-D while "
        "predicting as well. Implicit Bayesianness: the spread over orders of the streaming "
        "log-likelihood per point (0 for the exact GP, whose chain rule makes every order give "
        "the same joint); the upper 2-SE bound of the paired gap to TNP-D over seeds is at most "
        "half TNP-D's spread (within 1.5x), and the paired NLL gap's upper bound at most 0.05 "
        "nats. A predictor that ignores its context (the GP prior) has spread 0 and fails the "
        "second part; the exact GP passes both.",
        "comparable implicit Bayesianness",
        "gap.implicit_bayes_gap.all.inctnp + 2 * gap_se.implicit_bayes_gap.all.inctnp "
        "<= 0.5 * implicit_bayes_gap.all.tnp and "
        "gap.nll.converged.inctnp + 2 * gap_se.nll.converged.inctnp <= 0.05",
        placebo=_CONTEXT_FREE,
    ),
    Claim(
        "linear_updates",
        "Adding a point costs linear time for incTNP (log-log slope + 2 SE <= 1.2) and grows "
        "faster for TNP-D (its slope above incTNP's by more than twice their SEs).",
        "O(N^2) -> O(N) per update",
        "scaling_exponent.inctnp + 2 * scaling_exponent_se.inctnp <= 1.2 and "
        "scaling_exponent.tnp - scaling_exponent.inctnp > "
        "2 * (scaling_exponent_se.tnp + scaling_exponent_se.inctnp)",
        placebo=_TNP,
    ),
    Claim(
        "sequential_speedup",
        "Sequential inference is at least an order of magnitude faster at N = 1024: TNP-D's "
        "lower-quartile update time is at least 10x incTNP's upper quartile.",
        "orders-of-magnitude speedups",
        "update_ms_q25.tnp.n1024 >= 10 * update_ms_q75.inctnp.n1024",
        profiles=("quick", "full"),  # smoke times N <= 64 only
        placebo=_TNP,
    ),
]

BENCH_CLAIMS = [
    Claim(
        "speedup_4096",
        "Orders-of-magnitude speedup for one streaming update at N = 4096 (the paper's model): "
        "TNP-D's lower quartile at least 100x incTNP's upper quartile.",
        "orders of magnitude",
        "update_ms_q25.tnp.n4096 >= 100 * update_ms_q75.inctnp.n4096",
        profiles=("quick", "full"),
        placebo=_TNP,
    ),
    Claim(
        "quadratic_to_linear",
        "At the paper's size, TNP-D's update grows near-quadratically (slope - 2 SE >= 1.5) "
        "and incTNP's linearly (slope + 2 SE <= 1.2).",
        "O(N^2) -> O(N) per update",
        "scaling_exponent.tnp - 2 * scaling_exponent_se.tnp >= 1.5 and "
        "scaling_exponent.inctnp + 2 * scaling_exponent_se.inctnp <= 1.2",
        profiles=("quick", "full"),
        placebo=_TNP,
    ),
]

PAPER = Paper(
    slug="inctnp",
    title="incTNP: Incremental Transformer Neural Processes",
    profiles=PROFILES,
    run="icml26.inctnp.experiment:run",
    claims=CLAIMS,
    timing_claims=True,  # linear_updates, sequential_speedup: update latencies
    bench="icml26.inctnp.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="incremental transformer neural process: causal masking + KV cache, vs TNP-D and exact GP",
)
