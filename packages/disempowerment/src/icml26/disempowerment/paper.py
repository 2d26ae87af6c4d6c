"""The ``disempowerment`` paper as the ``icml26`` CLI sees it (light imports only).

Every claim about a finding names the null world that removes its effect (``placebo``): the
run measures the same pipeline on that world (``null_seeds`` seeds; 20 in the ``nulls``
profile), and a finding that still holds there measures nothing.
"""

from __future__ import annotations

from icml26.disempowerment.config import BENCH_PROFILES, PROFILES
from icml26.shared import Claim, Paper

__all__ = ["BENCH_CLAIMS", "CLAIMS", "PAPER"]

_VALIDATED = ("smoke", "quick", "full")  # the profiles that measure coverage (nulls: FPRs)

CLAIMS = [
    Claim(
        "severe_rare_measured",
        "Severe disempowerment potential occurs in fewer than one in a thousand "
        "conversations: for each of the three dimensions, the upper end of the 95% interval "
        "of the corrected severe rate is below 1/1000.",
        "severe < 1/1000 (reality ~1/1300, value ~1/2100, action ~1/6000)",
        "rate.reality.severe.hi < 1e-3 and rate.value.severe.hi < 1e-3"
        " and rate.action.severe.hi < 1e-3",
        placebo="severe_at_threshold",
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
        placebo="equal_domains",
    ),
    Claim(
        "rising_trend",
        "The prevalence of disempowerment potential rises over time: the monthly slope of "
        "the share with any dimension mild or worse has a 95% interval above zero.",
        "increase over time",
        "trend_slope.any.lo > 0",
        placebo="no_trend",
    ),
    Claim(
        "approval_higher",
        "Interactions with greater disempowerment potential receive higher approval: the "
        "calibrated approval difference (moderate-or-severe vs none, among rated "
        "conversations) and the per-level logistic coefficient with domain controls both have "
        "95% intervals above zero.",
        "higher approval ratings for higher potential",
        "approval_association.lo > 0 and approval_regression.level_coef.lo > 0",
        placebo="no_approval",
    ),
    Claim(
        "null_worlds_false",
        "No finding is invented: on the null world that removes its effect (same generator, "
        "same pipeline, the run's sizes), each of the four findings above holds on at most "
        "10% of the null seeds (one seed per world in quick, 20 in the nulls profile).",
        "(method property: the paper's findings are only as good as the pipeline's false "
        "positives)",
        "null_fpr.severe_rare_measured <= 0.1 and null_fpr.personal_domains_higher <= 0.1"
        " and null_fpr.rising_trend <= 0.1 and null_fpr.approval_higher <= 0.1",
        kind="absolute",
        floor="A pipeline that reports what it was built to find (the previous package had no "
        "null world to tell) scores 1.0 on each; a calibrated 95% interval holds on about "
        "0.025 of a boundary null's seeds, so 0.10 leaves room for 20 seeds' noise (2 of 20) "
        "and no more. With quick's one seed per world each rate is 0 or 1.",
    ),
    Claim(
        "intervals_cover",
        "The rate intervals cover the planted rates at their nominal level: over fresh "
        "generated logs and calibration sets, the share of the nominal-95% intervals of the "
        "12 rates (3 dimensions and any; mild, moderate, severe) that hold the planted rate "
        "is consistent with 95% (its exact 95% Clopper-Pearson interval reaches 0.95: with "
        "quick's 48 intervals at least 42 must cover, with full's 120 at least 109) and is "
        "at least 0.85 (a floor for the smoke run's 12); Wilson intervals of the classifier's "
        "uncorrected shares (the placebo) do not. The 12 intervals of one log are counted as "
        "independent; they are correlated, which makes the exact interval too narrow and the "
        "test stricter, not laxer.",
        "(method property; the paper reports intervals)",
        "coverage.rate_intervals.hi >= 0.95 and coverage.rate_intervals >= 0.85",
        profiles=_VALIDATED,
        placebo={"rate_intervals": "naive_intervals"},
    ),
    Claim(
        "scrubber_recall",
        "PII is removed before any model sees text: the scrubber removes at least 95% of the "
        "PII planted in the log (names in and out of its list, lower-case names, titles with "
        "surnames, e-mails, phones, addresses, postcodes, dates of birth, handles, profile "
        "URLs, ids; 30% in formats and names held out of its development), both in the "
        "generator's sentences and with the same strings in carrier sentences written after "
        "the rules and never tuned on (pii.FRESH_FRAMES: the generator's wording partly "
        "shaped the rules, so its recall alone overstates).",
        "privacy-preserving analysis (Clio: PII removed before facet extraction)",
        "scrub.recall.all >= 0.95 and scrub.fresh_recall.all >= 0.95",
        profiles=_VALIDATED,
        kind="absolute",
        floor="A scrubber that removes nothing scores 0; the package's previous rules scored "
        "0.62 on this corpus (generate_log(3000, seed=11), planted string absent: lower-case "
        "names and handles 0, profile URLs 0.05, postcodes 0.14, dates of birth 0.48). "
        "Precision (scrub.precision: replaced spans that overlap planted PII, look-alike "
        "sentences planted beside) is reported with it, so removing everything would show.",
    ),
]

BENCH_CLAIMS = [
    Claim(
        "staged_cheaper_than_minilm",
        "Screening in stages is what makes volume affordable: the staged classifier costs at "
        "most a fifth of MiniLM on every conversation (CPU seconds per 1,000 conversations).",
        "not quantified in the paper (Clio-style pipelines classify millions of conversations)",
        "cost_cpu_s_per_1k.staged * 5 <= cost_cpu_s_per_1k.minilm",
        placebo={"staged": "minilm"},
    ),
]

PAPER = Paper(
    slug="disempowerment",
    title="Who's in charge? Disempowerment patterns in real-world AI assistant conversations",
    profiles=PROFILES,
    run="icml26.disempowerment.experiment:run",
    claims=CLAIMS,
    bench="icml26.disempowerment.bench:bench",
    bench_profiles=BENCH_PROFILES,
    bench_claims=BENCH_CLAIMS,
    framework="torch",
    summary="privacy-preserving rates of disempowerment potential with calibrated intervals",
)
