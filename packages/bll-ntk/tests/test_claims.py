"""Each "better than BLL" claim can be false: a gain inside twice its standard error, or an
AUROC below the floor, decides it False; and the paired gain behind the rules."""

from __future__ import annotations

import math

import pytest

from icml26.bll_ntk.experiment import _paired_gain
from icml26.bll_ntk.paper import PAPER


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def test_variance_theorem_is_not_a_claim() -> None:
    assert "variance_ge_bll" not in {c.id for c in PAPER.claims}


@pytest.mark.parametrize(
    ("cid", "metric", "group"),
    [
        ("regression_nll_vs_bll", "nll", "regression"),
        ("calibration_vs_bll", "ece", "all"),
        ("ood_vs_bll", "ood_auroc", "all"),
    ],
)
def test_gain_claims_need_a_margin_beyond_the_seed_spread(
    cid: str, metric: str, group: str
) -> None:
    claim = _claim(cid)
    floor = {"ood_auroc.digits_heldout.ntk_bll": 0.9}

    def m(gain: float, se: float) -> dict[str, float]:
        return {f"ntk_gain.{metric}.{group}": gain, f"ntk_gain_se.{metric}.{group}": se, **floor}

    assert claim.evaluate(m(0.05, 0.01))["holds"] is True
    assert claim.evaluate(m(0.015, 0.01))["holds"] is False  # a +0.015 win inside 2 SE is a tie
    assert claim.evaluate(m(-0.05, 0.01))["holds"] is False
    assert claim.evaluate(m(0.05, math.nan))["holds"] is None  # one seed: undecided, not won


def test_ood_claim_has_an_accuracy_floor() -> None:
    claim = _claim("ood_vs_bll")
    metrics = {
        "ntk_gain.ood_auroc.all": 0.05,
        "ntk_gain_se.ood_auroc.all": 0.01,
        "ood_auroc.a.ntk_bll": 0.62,
        "ood_auroc.b.ntk_bll": 0.66,
    }
    assert claim.evaluate(metrics)["holds"] is False  # better than BLL but near chance


def test_paired_gain() -> None:
    mean, se = _paired_gain([1.0, 2.0, 3.0], [0.5, 1.0, 2.5])
    assert mean == pytest.approx(2 / 3)
    assert se == pytest.approx(math.sqrt(1 / 12 / 3 * 1))  # std(ddof=1) of (.5, 1, .5) / sqrt 3
    assert math.isnan(_paired_gain([1.0], [0.0])[1])


def test_competitive_claim_fails_when_worse_than_a_baseline_beyond_noise() -> None:
    claim = _claim("competitive_with_baselines")

    def m(vs_ens: float, vs_mcd: float, se: float = 0.01) -> dict[str, float]:
        return {
            "ntk_gain.nll_vs_ensemble.all": vs_ens,
            "ntk_gain_se.nll_vs_ensemble.all": se,
            "ntk_gain.nll_vs_mc_dropout.all": vs_mcd,
            "ntk_gain_se.nll_vs_mc_dropout.all": se,
        }

    assert claim.evaluate(m(-0.01, 0.02))["holds"] is True  # a loss inside 2 SE is a tie
    assert claim.evaluate(m(-0.05, 0.02))["holds"] is False  # worse than ensembles
    assert claim.evaluate(m(0.02, -0.05))["holds"] is False  # worse than MC dropout


def test_bandit_claim_needs_seeds_and_a_margin() -> None:
    claim = _claim("bandit_regret_vs_bll")

    def m(ntk: float, bll: float, se: float) -> dict[str, float]:
        return {
            "bandit_regret.ntk_bll": ntk,
            "bandit_regret.bll": bll,
            "bandit_regret_gain.ntk_bll": bll - ntk,
            "bandit_regret_gain_se.ntk_bll": se,
        }

    assert claim.evaluate(m(400.0, 1000.0, 50.0))["holds"] is True
    assert claim.evaluate(m(850.0, 1000.0, 100.0))["holds"] is False  # 15% lower, inside 2 SE
    assert claim.evaluate(m(950.0, 1000.0, 1.0))["holds"] is False  # under the 10% bar
    assert claim.evaluate(m(400.0, 1000.0, math.nan))["holds"] is None  # one seed: undecided


def test_regression_competitive_claim_can_fail() -> None:
    """The UCI-regression "competitive" rule: a loss inside 2 SE of the paired difference over
    splits is a tie, a loss beyond it fails, against either baseline."""
    claim = _claim("regression_competitive_with_baselines")

    def m(vs_ens: float, vs_mcd: float, se: float = 0.01) -> dict[str, float]:
        return {
            "ntk_gain.nll_vs_ensemble.regression": vs_ens,
            "ntk_gain_se.nll_vs_ensemble.regression": se,
            "ntk_gain.nll_vs_mc_dropout.regression": vs_mcd,
            "ntk_gain_se.nll_vs_mc_dropout.regression": se,
        }

    assert claim.evaluate(m(-0.015, 0.01))["holds"] is True
    assert claim.evaluate(m(-0.03, 0.0))["holds"] is False
    assert claim.evaluate(m(0.0, -0.021))["holds"] is False
    assert claim.evaluate(m(-0.01, 0.0, se=math.nan))["holds"] is None  # one split: undecided
