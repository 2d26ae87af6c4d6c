"""Placebo checks: a comparative claim must not hold with the baseline in the method's place."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from icml26.shared import Claim, Paper, build_results
from icml26.shared.claims import placebo_metrics
from icml26.shared.migration import UNMIGRATED
from icml26.shared.testing import ClaimCheckError, PlaceboWarning, check_paper, placebo_problems

METRICS = {
    "ndcg.iid.blitz_k10": 0.95,
    "ndcg.iid.blitz_k20": 0.94,
    "ndcg.iid.sliding": 0.90,
    "tokens.iid.blitz_k10": 700.0,
    "tokens.iid.sliding": 1000.0,
    "gap.blitz_k10": 0.05,
}


@dataclass(frozen=True)
class _Cfg:
    seed: int = 0


def _paper(*claims: Claim, slug: str = "toy") -> Paper:
    profiles = {p: _Cfg() for p in ("smoke", "quick", "full")}
    return Paper(slug=slug, title="toy", profiles=profiles, run=lambda c, r: {}, claims=claims)


def _results(metrics: dict) -> dict:
    return build_results(
        paper="toy", version="0", profile="smoke", config={}, metrics=metrics, claims=(), seconds=1
    )


def test_substitution_replaces_method_parts_by_pattern() -> None:
    placebo, unmatched = placebo_metrics(METRICS, {"blitz_*": "sliding"})
    assert placebo["ndcg.iid.blitz_k10"] == placebo["ndcg.iid.blitz_k20"] == 0.90
    assert placebo["tokens.iid.blitz_k10"] == 1000.0
    assert placebo["ndcg.iid.sliding"] == 0.90
    assert unmatched == {"gap.blitz_k10": "gap.sliding"}


def test_a_real_comparison_passes_its_placebo() -> None:
    claim = Claim(
        "fewer_tokens_same_quality",
        "-",
        "-",
        "tokens.iid.blitz_k10 < 0.8 * tokens.iid.sliding and ndcg.iid.blitz_k10 >= ndcg.iid.sliding",
        placebo={"blitz_k10": "sliding"},
    )
    check_paper(_paper(claim), _results(METRICS))
    entry = claim.evaluate(METRICS)
    assert entry["holds"] is True
    assert entry["placebo_holds"] is False


def test_a_forced_rule_is_caught() -> None:
    # "no worse than the baseline" holds whatever the method does: the placebo shows it.
    forced = Claim(
        "forced",
        "-",
        "-",
        "ndcg.iid.blitz_k10 >= ndcg.iid.sliding - 0.01",
        placebo={"blitz_k10": "sliding"},
    )
    with pytest.raises(ClaimCheckError, match="forced: still holds under its placebo"):
        check_paper(_paper(forced), _results(METRICS))


def test_a_missing_placebo_is_caught_and_absolute_claims_need_a_floor() -> None:
    bare = Claim("bare", "-", "-", "ndcg.iid.blitz_k10 > ndcg.iid.sliding")
    with pytest.raises(ClaimCheckError, match="bare: a comparative claim must declare its placebo"):
        check_paper(_paper(bare), _results(METRICS))
    no_floor = Claim("level", "-", "-", "ndcg.iid.blitz_k10 > 0.5", kind="absolute")
    with pytest.raises(ClaimCheckError, match="level: an absolute claim must state its floor"):
        check_paper(_paper(no_floor), _results(METRICS))
    floored = Claim(
        "level",
        "-",
        "-",
        "ndcg.iid.blitz_k10 > 0.93",
        kind="absolute",
        floor="a random ranking scores 0.31; BM25 order 0.85",
    )
    check_paper(_paper(floored), _results(METRICS))


def test_a_placebo_without_baseline_figures_is_reported() -> None:
    claim = Claim("gap", "-", "-", "gap.blitz_k10 > 0.01", placebo={"blitz_k10": "sliding"})
    problems = placebo_problems(claim, METRICS, "smoke")
    assert problems == [
        "gap: cannot be evaluated under its placebo {'blitz_k10': 'sliding'}: "
        "no baseline figure 'gap.sliding' for 'gap.blitz_k10'"
    ]


def test_a_null_run_placebo_is_checked_on_the_null_metrics() -> None:
    claim = Claim("trend", "-", "-", "trend.slope > 2 * trend.se", placebo="flat_world")
    paper = _paper(claim)
    real = _results({"trend": {"slope": 1.0, "se": 0.1}})
    with pytest.raises(ClaimCheckError, match="pass its metrics"):
        check_paper(paper, real)
    check_paper(paper, real, nulls={"flat_world": {"trend.slope": 0.05, "trend.se": 0.1}})
    with pytest.raises(ClaimCheckError, match="still holds on the null run 'flat_world'"):
        check_paper(paper, real, nulls={"flat_world": {"trend.slope": 0.5, "trend.se": 0.1}})


@pytest.mark.skipif(not UNMIGRATED, reason="every package is migrated")
def test_unmigrated_packages_get_warnings_not_errors() -> None:
    slug = sorted(UNMIGRATED)[0]
    bare = Claim("bare", "-", "-", "ndcg.iid.blitz_k10 > ndcg.iid.sliding")
    with pytest.warns(PlaceboWarning, match="bare: a comparative claim"):
        check_paper(_paper(bare, slug=slug), _results(METRICS) | {"paper": slug})


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match="placebo must map key parts"):
        Claim("x", "-", "-", "a < b", placebo={"a.b": "c"})
    with pytest.raises(ValueError, match="kind must be one of"):
        Claim("x", "-", "-", "a < b", kind="relative")
    with pytest.raises(ValueError, match="absolute claim has a floor, not a placebo"):
        Claim("x", "-", "-", "a < 1", kind="absolute", placebo={"a": "b"})


def test_a_claim_its_placebo_also_meets_is_undecided_on_that_run() -> None:
    # the baseline also beats the floor here, so the run is no evidence for the method
    claim = Claim(
        "beats_floor",
        "-",
        "-",
        "ndcg.iid.blitz_k10 > 0.5",
        placebo={"blitz_k10": "sliding"},
    )
    entry = claim.evaluate(METRICS)
    assert entry["holds"] is None
    assert entry["placebo_holds"] is True
    assert "also holds under its placebo" in entry["note"]
    below = {**METRICS, "ndcg.iid.sliding": 0.4}
    entry = claim.evaluate(below)
    assert entry["holds"] is True
    assert entry["placebo_holds"] is False
    failing = {**METRICS, "ndcg.iid.blitz_k10": 0.3}
    assert claim.evaluate(failing)["holds"] is False


def test_check_paper_reports_a_claim_its_placebo_meets_once() -> None:
    claim = Claim(
        "beats_floor", "-", "-", "ndcg.iid.blitz_k10 > 0.5", placebo={"blitz_k10": "sliding"}
    )
    with pytest.raises(ClaimCheckError, match="still holds under its placebo") as caught:
        check_paper(_paper(claim), _results(METRICS))
    assert "undecided on the" not in str(caught.value)
    with pytest.warns(PlaceboWarning, match="still holds under its placebo"):
        check_paper(_paper(claim), _results(METRICS), strict=False)
