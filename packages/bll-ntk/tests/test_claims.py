"""Every claim can hold, can fail, and fails under its placebo (BLL in NTK-BLL's place)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml26.bll_ntk import NTKBLL, TrainSpec, make_mlp, train_regressor
from icml26.bll_ntk.paper import PAPER


def _claim(cid: str):  # type: ignore[no-untyped-def]
    return next(c for c in PAPER.claims if c.id == cid)


def test_variance_theorem_is_not_a_claim() -> None:
    assert "variance_ge_bll" not in {c.id for c in PAPER.claims}


def test_every_comparative_claim_has_a_placebo() -> None:
    for claim in [*PAPER.claims, *PAPER.bench_claims]:
        assert claim.kind == "comparative"
        assert claim.placebo, claim.id


def _gain_metrics(metric: str, group: str, gain: float, se: float) -> dict[str, float]:
    return {
        f"gain.{metric}.{group}.ntk_bll": gain,
        f"gain_se.{metric}.{group}.ntk_bll": se,
        f"gain.{metric}.{group}.bll": 0.0,
        f"gain_se.{metric}.{group}.bll": 0.0,
        f"{metric}.digits_heldout.ntk_bll": 0.9,
        f"{metric}.digits_heldout.bll": 0.85,
    }


@pytest.mark.parametrize(
    ("cid", "metric", "group"),
    [
        ("regression_nll_vs_bll", "nll", "regression"),
        ("calibration_vs_bll", "ece", "all"),
        ("ood_vs_bll", "ood_auroc", "all"),
        ("ood_variance_vs_bll", "ood_auroc_var", "all"),
    ],
)
def test_gain_claims_need_a_margin_beyond_the_seed_spread(
    cid: str, metric: str, group: str
) -> None:
    claim = _claim(cid)
    assert claim.evaluate(_gain_metrics(metric, group, 0.05, 0.01))["holds"] is True
    assert claim.evaluate(_gain_metrics(metric, group, 0.015, 0.01))["holds"] is False
    assert claim.evaluate(_gain_metrics(metric, group, -0.05, 0.01))["holds"] is False
    assert claim.evaluate(_gain_metrics(metric, group, 0.05, math.nan))["holds"] is None
    # the placebo: BLL's own gain (0 ± 0) in NTK-BLL's place never holds
    assert claim.under_placebo(_gain_metrics(metric, group, 0.05, 0.01))[0] is False


def test_ood_claims_have_an_auroc_floor() -> None:
    metrics = _gain_metrics("ood_auroc", "all", 0.05, 0.01)
    metrics["ood_auroc.digits_heldout.ntk_bll"] = 0.62
    assert _claim("ood_vs_bll").evaluate(metrics)["holds"] is False  # better but near chance
    metrics = _gain_metrics("ood_auroc_var", "all", 0.05, 0.01)
    metrics["ood_auroc_var.digits_heldout.ntk_bll"] = 0.55
    assert _claim("ood_variance_vs_bll").evaluate(metrics)["holds"] is False


def _bandit(ratio: float, gain: float, se: float) -> dict[str, float]:
    return {
        "bandit_regret_ratio.ntk_bll": ratio,
        "bandit_regret_ratio.bll": 1.0,
        "bandit_regret_gain.ntk_bll": gain,
        "bandit_regret_gain_se.ntk_bll": se,
        "bandit_regret_gain.bll": 0.0,
        "bandit_regret_gain_se.bll": 0.0,
    }


def test_bandit_claim_needs_seeds_and_a_margin_and_fails_its_placebo() -> None:
    claim = _claim("bandit_regret_vs_bll")
    assert claim.evaluate(_bandit(0.4, 600.0, 50.0))["holds"] is True
    assert claim.evaluate(_bandit(0.85, 150.0, 100.0))["holds"] is False  # inside 2 SE
    assert claim.evaluate(_bandit(0.95, 50.0, 1.0))["holds"] is False  # under the 10% bar
    assert claim.evaluate(_bandit(0.4, 600.0, math.nan))["holds"] is None
    assert claim.under_placebo(_bandit(0.4, 600.0, 50.0))[0] is False


def test_subsampled_projection_is_a_test_not_a_claim() -> None:
    """The review found the old claim near-forced (Gaussian-noise inputs passed it; an
    isotropic inflation of BLL's prior beat it): it is a property of the estimator, tested
    here, and the run only reports ``subsample_error_proj.*``. The uniform subsample's
    variance error shrinks as the subsample grows, and the whole set gives the exact one."""
    assert "subsample_recovers_projection" not in {c.id for c in PAPER.claims}
    torch.manual_seed(0)
    x = torch.linspace(-2, 2, 160)[:, None]
    y = torch.sin(3 * x) + 0.1 * torch.randn_like(x)
    model = make_mlp(1, 1, (16, 16))
    train_regressor(model, x, y, TrainSpec(steps=200))
    exact = NTKBLL(model, alpha=1.0, noise=0.01).fit(x, y)
    grid = torch.linspace(-3, 3, 50)[:, None]
    ref = exact.predict(grid).var

    def error(m: int) -> float:
        errs = []
        for r in range(4):
            sub = NTKBLL(model, alpha=1.0, noise=0.01, subsample=m, seed=r).fit(x, y)
            errs.append(float(((sub.predict(grid).var - ref).abs() / ref).mean()))
        return float(np.mean(errs))

    assert error(160) < 1e-8
    assert error(80) < error(8)


def test_cost_claims_fail_with_lla_in_ntk_bll_s_place() -> None:
    run = _claim("cheaper_than_lla")
    m = {
        "cost_ratio.a.ntk_bll": 0.1,
        "cost_ratio.b.ntk_bll": 0.3,
        "cost_ratio.a.lla": 1.0,
        "cost_ratio.b.lla": 1.0,
    }
    assert run.evaluate(m)["holds"] is True
    # every set must pass: one set where NTK-BLL costs as much as LLA fails the claim
    assert run.evaluate({**m, "cost_ratio.b.ntk_bll": 0.9})["holds"] is False
    assert run.under_placebo(m)[0] is False
    bench = PAPER.bench_claims[0]
    b = {"cost_ratio.w8.ntk_bll": 0.2, "cost_ratio.w8.lla": 1.0, "cost_ratio.w8.bll": 0.01}
    assert bench.evaluate(b)["holds"] is True
    assert bench.under_placebo(b)[0] is False
