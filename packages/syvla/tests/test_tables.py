"""The paired gaps the claims read: against scipy's paired t-test, the placebo's self-gap,
and a placebo check of every comparative claim on made-up per-seed figures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from icml26.shared.claims import evaluate_rule
from icml26.syvla.paper import CLAIMS
from icml26.syvla.tables import put_gaps, t_margin

_VALUES = st.lists(st.floats(0.0, 1.0), min_size=3, max_size=6)


@settings(max_examples=40, deadline=None)
@given(x=_VALUES, shift=st.floats(-0.5, 0.5), noise=st.integers(0, 2**16))
def test_gap_beyond_its_margin_is_scipys_paired_t_test(
    x: list[float], shift: float, noise: int
) -> None:
    n = len(x)
    y = list(np.asarray(x) - shift + np.random.default_rng(noise).normal(0, 0.05, n))
    m = {f"babyai.mean.syvla.seed{k}": x[k] for k in range(n)}
    m |= {f"babyai.mean.bc_ppo.seed{k}": y[k] for k in range(n)}
    put_gaps(m)
    gap, margin = m["gap.babyai.mean.syvla.bc_ppo"], m["gap_margin.babyai.mean.syvla.bc_ppo"]
    assert gap == pytest.approx(np.mean(np.subtract(x, y)))
    test = stats.ttest_rel(x, y)
    if abs(abs(gap) - margin) > 1e-9 and np.isfinite(test.pvalue):
        assert (abs(gap) > margin) == (test.pvalue < 0.05)
    # the baseline against itself, seed i with seed i + 1: gap 0 by construction
    assert m["gap.babyai.mean.bc_ppo.bc_ppo"] == pytest.approx(0.0, abs=1e-12)


def test_t_margin_values_and_one_seed() -> None:
    assert t_margin(1.0, 3) == pytest.approx(4.3027, rel=1e-4)
    assert t_margin(0.5, 5) == pytest.approx(0.5 * 2.7764, rel=1e-4)
    assert np.isnan(t_margin(1.0, 1))
    m = {"babyai.mean.syvla.seed0": 0.5, "babyai.mean.bc_ppo.seed0": 0.1}
    put_gaps(m)
    assert np.isnan(m["gap_margin.babyai.mean.syvla.bc_ppo"])  # one seed decides nothing


def _metrics(method_lift: float) -> dict[str, float]:
    """Per-seed figures of every method and metric the claims read: the baselines a seed
    effect plus noise, ``syvla`` the same plus ``method_lift`` (negative on the KL)."""
    rng = np.random.default_rng(0)
    m: dict[str, float] = {"vqa_pretrained": 0.9}
    names = ("success.train", "success_ood", "vqa_accuracy", "log10_update_kl", "babyai.mean")
    for name in names:
        seed_effect = rng.normal(0.4, 0.1, 3)
        for method in ("bc_ppo", "no_decoupling", "no_cotrain", "no_similar", "syvla"):
            lift = method_lift if method == "syvla" else 0.0
            lift = -lift if name == "log10_update_kl" else lift
            for k in range(3):
                m[f"{name}.{method}.seed{k}"] = seed_effect[k] + lift + rng.normal(0, 0.005)
    put_gaps(m)
    return m


def test_every_comparative_claim_holds_with_a_clear_lift_and_fails_under_its_placebo() -> None:
    lifted, flat = _metrics(0.3), _metrics(0.0)
    for claim in CLAIMS:
        if claim.kind == "absolute":
            continue
        holds, _, note = evaluate_rule(claim.rule, lifted)
        assert holds, (claim.id, note)
        assert evaluate_rule(claim.rule, flat)[0] is False, claim.id
        placebo_holds, _ = claim.under_placebo(lifted)
        assert placebo_holds is False, claim.id
