"""The claim rules on hand-made metrics: each decides on the figure it names."""

from __future__ import annotations

from icml26.ecg_r1.paper import PAPER
from icml26.shared.claims import evaluate_rule


def _claim(name: str):
    return next(c for c in PAPER.claims if c.id == name)


def _halluc(gap: float, seed_se: float) -> dict[str, float]:
    return {
        "hallucination_rate.ecg_r1": 0.3,
        "hallucination_rate.sft_only": 0.3 + gap,
        "hallucination_gap.sft_only_minus_ecg_r1": gap,
        "hallucination_gap_seed_se.sft_only_minus_ecg_r1": seed_se,
        "z.hallucination_sft_only_minus_ecg_r1": 5.0,  # record bootstrap: always "significant"
        "diagnosis_jaccard.both.ecg_r1": 0.5,
        "diagnosis_jaccard.both.sft_only": 0.5,
    }


def test_hallucination_claim_needs_the_gap_beyond_seed_noise() -> None:
    claim = _claim("evidence_rewards_lower_hallucination")
    assert evaluate_rule(claim.rule, _halluc(0.1, 0.03))[0] is True
    # the record-bootstrap z alone does not decide: seeds disagree more than the gap
    assert evaluate_rule(claim.rule, _halluc(0.1, 0.065))[0] is False
    assert claim.under_placebo(_halluc(0.1, 0.03))[0] is False
