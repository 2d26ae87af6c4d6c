"""The cyclic-oracle claim measures something: the budget binds, and the rule can be false."""

from __future__ import annotations

import pytest

from icml26.blitzrank.config import RunConfig
from icml26.blitzrank.paper import DEMOTED, PAPER, SPECTRUM
from icml26.blitzrank.tasks.certification import cyclic_task

_SMALL = {"sim_n": 30, "cyclic_queries": 3, "cyclic_ks": (5,)}


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def test_cyclic_budget_binds() -> None:
    """With half the calls a transitive oracle needs, nothing certifies; with plenty, all do:
    the certified rate is a measurement, not a loop that only exits certified."""
    tight = cyclic_task(RunConfig(**_SMALL, cyclic_budget=0.5))
    assert tight["certified_rate"]["blitzrank_k5"] == 0.0
    assert tight["calls"]["blitzrank_k5"] <= tight["budget"]["blitzrank_k5"]
    loose = cyclic_task(RunConfig(**_SMALL, cyclic_budget=10.0))
    assert loose["certified_rate"]["blitzrank_k5"] == 1.0
    assert loose["calls_over_perfect"]["blitzrank_k5"] > 0


def test_tiered_rankings_claim_can_fail() -> None:
    claim = _claim("tiered_rankings_under_cycles")
    ok = {
        "certified_rate.sim_cyclic.blitzrank_k2": 1.0,
        "certified_rate.sim_cyclic.blitzrank_k10": 0.9,
        "cycles_found.sim_cyclic": 2.0,
    }
    assert claim.evaluate(ok)["holds"] is True
    assert claim.evaluate({**ok, "certified_rate.sim_cyclic.blitzrank_k2": 0.8})["holds"] is False
    assert claim.evaluate({**ok, "cycles_found.sim_cyclic": 0.0})["holds"] is False


@pytest.mark.parametrize("budget", [0, -1.0])
def test_cyclic_budget_must_be_positive(budget: float) -> None:
    with pytest.raises(ValueError, match="cyclic_budget"):
        RunConfig(cyclic_budget=budget)


def test_spectrum_claims_cover_every_oracle_and_can_fail() -> None:
    ids = {c.id for c in PAPER.claims}
    assert not ids & DEMOTED  # demoted claims are reported metrics, not claims
    for oracle in SPECTRUM:
        for cid in (f"pareto_vs_tourrank_{oracle}", f"near_pairwise_{oracle}"):
            assert (cid in ids) != (cid in DEMOTED)
    claim = _claim("pareto_vs_setwise_minilm")
    ok = {
        "ndcg10.minilm.blitzrank_k10": 0.75,
        "ndcg10.minilm.setwise": 0.755,
        "tokens.minilm.blitzrank_k10": 36.0,
        "tokens.minilm.setwise": 100.0,
    }
    assert claim.evaluate(ok)["holds"] is True
    assert claim.evaluate({**ok, "tokens.minilm.blitzrank_k10": 39.0})["holds"] is False
    assert claim.evaluate({**ok, "ndcg10.minilm.setwise": 0.77})["holds"] is False


def test_reask_gain_claim_needs_two_standard_errors() -> None:
    claim = _claim("reask_gain_sim_pl_k20")
    key = "sim_pl.blitzrank_reask_k20"
    assert claim.evaluate({f"ndcg10_gain.{key}": 0.04, f"ndcg10_gain_se.{key}": 0.005})["holds"]
    assert not claim.evaluate({f"ndcg10_gain.{key}": 0.02, f"ndcg10_gain_se.{key}": 0.011})["holds"]
