"""The ``disempowerment`` paper as the ``icml26`` CLI sees it (light imports only)."""

from __future__ import annotations

from dataclasses import replace

from icml26.disempowerment.config import BenchConfig, DisempowermentConfig
from icml26.shared import Claim, Paper

__all__ = ["BENCH_PROFILES", "CLAIMS", "PAPER", "PROFILES"]

_QUICK = DisempowermentConfig()

PROFILES = {
    "smoke": replace(
        _QUICK,
        n_conversations=3000,
        n_train=400,
        n_calibration=600,
        calibration_positive_share=0.3,
        minilm_eval_n=20,
        bootstrap_draws=300,
        n_clusters=2,
        k_anonymity=3,
        coverage_repeats=1,
        coverage_n=2000,
        coverage_calibration_n=300,
        dp_epsilon=50.0,
    ),
    "quick": _QUICK,  # the defaults of DisempowermentConfig
    "full": replace(
        _QUICK,
        n_conversations=300_000,
        n_train=6000,
        n_calibration=30_000,
        minilm_eval_n=600,
        coverage_repeats=10,
        coverage_n=40_000,
        coverage_calibration_n=12_000,
        judge="smollm2-135m-instruct-q4_1",
        judge_n=60,
    ),
}

BENCH_PROFILES = {
    "smoke": BenchConfig(sizes=(500, 1000), n_train=600, cost_n=40, engines=("local",)),
    "quick": BenchConfig(sizes=(10_000, 100_000)),
    "full": BenchConfig(sizes=(10_000, 100_000), cost_n=1000, judge="smollm2-135m-instruct-q4_1"),
}

CLAIMS = [
    Claim(
        "severe_rare_measured",
        "Severe disempowerment potential occurs in fewer than one in a thousand conversations; "
        "measured on a log with a planted severe rate below 1/1000, the pipeline's estimate is "
        "below 1/1000, its 95% interval covers the planted rate, and the interval is narrower "
        "than 1e-3.",
        "severe < 1/1000 (reality ~1/1300, value ~1/2100, action ~1/6000)",
        "rate.any.severe < 1e-3 and rate.any.severe.lo <= planted.any.severe"
        " and planted.any.severe <= rate.any.severe.hi"
        " and rate.any.severe.hi - rate.any.severe.lo <= 1e-3",
    ),
    Claim(
        "personal_domains_higher",
        "Rates are substantially higher in personal domains: the lower interval ends of "
        "relationships and lifestyle (moderate or severe, any dimension) exceed the upper "
        "ends of every other domain.",
        "higher in relationships and lifestyle",
        "min(domain_rate.relationships.severe_or_moderate.lo,"
        " domain_rate.lifestyle.severe_or_moderate.lo)"
        " > max(domain_rate.health.severe_or_moderate.hi, domain_rate.work.severe_or_moderate.hi,"
        " domain_rate.technical.severe_or_moderate.hi, domain_rate.creative.severe_or_moderate.hi)",
    ),
    Claim(
        "rising_trend",
        "The prevalence of disempowerment potential rises over time: the monthly slope of "
        "the share with any dimension mild or worse has a 95% interval above zero.",
        "increase over time",
        "trend_slope.any.lo > 0",
    ),
    Claim(
        "approval_higher",
        "Interactions with greater disempowerment potential receive higher approval: the "
        "calibrated approval difference (moderate-or-severe vs none) and the per-level "
        "logistic coefficient with domain controls both have 95% intervals above zero.",
        "higher approval ratings for higher potential",
        "approval_association.lo > 0 and approval_regression.level_coef.lo > 0",
    ),
    Claim(
        "intervals_cover",
        "The rate intervals cover the planted rates at about their level: over fresh "
        "generated logs and calibration sets, at least 85% of the nominal-95% intervals of "
        "the 12 rates (3 dimensions and any, mild/moderate/severe) hold the planted rate.",
        "(method property; the paper reports intervals)",
        "coverage.rate_intervals >= 0.85",
    ),
    Claim(
        "zero_pii_leaks",
        "Nothing but aggregates leaves the pipeline: no planted PII string is found in any "
        "output file, and every released group holds at least k distinct users.",
        "privacy-preserving analysis (Clio)",
        "privacy.pii_leaks == 0 and privacy.min_group_size >= privacy.k",
    ),
]

BENCH_CLAIMS = [
    Claim(
        "staged_cheaper_than_minilm",
        "Screening in stages is what makes volume affordable: the staged classifier costs at "
        "most a fifth of MiniLM on every conversation (CPU seconds per 1,000 conversations).",
        "not quantified in the paper (Clio-style pipelines classify millions of conversations)",
        "cost_cpu_s_per_1k.staged * 5 <= cost_cpu_s_per_1k.minilm",
    ),
]

PAPER = Paper(
    slug="disempowerment",
    title="Who's in charge? Disempowerment patterns in real-world AI assistant conversations",
    profiles=PROFILES,
    run="icml26.disempowerment.experiment:run",
    claims=CLAIMS,
    bench="icml26.disempowerment.experiment:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="privacy-preserving rates of disempowerment potential with calibrated intervals",
)
