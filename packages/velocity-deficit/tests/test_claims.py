"""The claims against the committed quick run (``docs/quick/results.json``, the README's
figures): every rule reads keys the run wrote, decides, and fails under its placebo. This is
where the placebos meet real numbers (smoke's models are too small to decide the claims)."""

from __future__ import annotations

from pathlib import Path

import pytest

from icml26.shared.results import load_results
from icml26.shared.testing import check_paper
from icml26.velocity_deficit.paper import PAPER

QUICK = Path(__file__).resolve().parents[1] / "docs" / "quick" / "results.json"


@pytest.mark.skipif(not QUICK.exists(), reason="no committed quick run")
def test_quick_claims_fail_under_their_placebos() -> None:
    check_paper(PAPER, QUICK, strict=True)
    res = load_results(QUICK)
    assert res["profile"] == "quick"
    assert {c["id"] for c in res["claims"]} == {c.id for c in PAPER.claims}
    for claim in res["claims"]:
        assert claim["placebo_holds"] is False, claim["id"]
