"""The generator's planted truth matches what it generates."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.disempowerment.synthetic import (
    NULL_WORLDS,
    GeneratorSpec,
    cell_table,
    generate_labelled,
    generate_log,
    null_spec,
    planted_truth,
)
from icml26.disempowerment.taxonomy import DOMAINS


def test_planted_world_has_the_papers_shape() -> None:
    t = planted_truth(GeneratorSpec())
    assert t["rate.any.severe"] < 1e-3
    assert t["rate.reality.severe"] > t["rate.value.severe"] > t["rate.action.severe"]
    personal = min(
        t["domain_rate.relationships.severe_or_moderate"],
        t["domain_rate.lifestyle.severe_or_moderate"],
    )
    others = max(t[f"domain_rate.{d}.severe_or_moderate"] for d in DOMAINS[2:])
    assert personal > 2 * others
    assert t["trend_slope.any"] > 0
    assert t["approval_association"] > 0
    probs, _ = cell_table(GeneratorSpec())
    assert probs.sum() == pytest.approx(1.0)


def test_generated_frequencies_match_the_planted_truth() -> None:
    log = generate_log(20_000, seed=5)
    t = log.planted
    n = len(log)
    for k, dim in enumerate(("reality", "value", "action")):
        for s, sev in enumerate(("mild", "moderate"), start=1):
            p = t[f"rate.{dim}.{sev}"]
            emp = np.mean(log.severity[:, k] == s)
            assert abs(emp - p) <= 5 * np.sqrt(p * (1 - p) / n), (dim, sev, emp, p)
    assert len({c.id for c in log.conversations}) == n
    months = {c.month for c in log.conversations}
    assert len(months) == 12


def test_labelled_set_oversamples_cues() -> None:
    lab = generate_labelled(2000, seed=1, positive_share=0.5)
    share = np.mean(lab.log.pattern > 0)
    assert 0.45 < share < 0.55
    assert np.bincount(lab.log.pattern, minlength=13)[1:].min() > 40


def test_spec_validation() -> None:
    with pytest.raises(ValueError, match="domain_mix"):
        GeneratorSpec(domain_mix=(1.0,))
    with pytest.raises(ValueError, match="leave"):
        GeneratorSpec(trend=0.5)


@pytest.mark.parametrize("world", sorted(NULL_WORLDS))
def test_null_worlds_remove_exactly_their_effect(world: str) -> None:
    base, null = planted_truth(GeneratorSpec()), planted_truth(null_spec(world))
    if world == "no_trend":
        assert abs(null["trend_slope.any"]) < 1e-12
    if world == "no_approval":
        assert null["approval_regression.level_coef"] == 0
        assert abs(null["approval_association"]) < abs(base["approval_association"])
    if world == "equal_domains":
        rates = [null[f"domain_rate.{d}.severe_or_moderate"] for d in DOMAINS]
        assert max(rates) - min(rates) < 1e-12
        assert null["rate.any.moderate"] == pytest.approx(base["rate.any.moderate"])
    if world == "severe_at_threshold":
        assert null["rate.reality.severe"] == pytest.approx(1e-3)
        assert null["rate.value.severe"] == pytest.approx(base["rate.value.severe"])
    changed = {k for k in base if not np.isclose(base[k], null[k], rtol=1e-9, atol=1e-15)}
    assert changed  # and the other effects stay (checked per world above)
    with pytest.raises(ValueError, match="unknown null world"):
        null_spec("no_effect")


def test_rating_depends_on_severity_and_planted_approval_is_among_rated() -> None:
    spec = GeneratorSpec(feedback_beta=1.5)
    log = generate_log(40_000, seed=9, spec=spec, with_pii=False)
    level = log.any_severity
    rated = np.array([c.feedback is not None for c in log.conversations])
    assert rated[level >= 2].mean() > rated[level == 0].mean() + 0.2
    up = np.array([bool(c.feedback) for c in log.conversations])
    emp = up[rated & (level >= 2)].mean() - up[rated & (level == 0)].mean()
    n_hi = (rated & (level >= 2)).sum()
    assert abs(emp - log.planted["approval_association"]) < 4 * 0.5 / np.sqrt(n_hi)
