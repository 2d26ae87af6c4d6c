"""The generator's planted truth matches what it generates."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.disempowerment.synthetic import (
    GeneratorSpec,
    cell_table,
    generate_labelled,
    generate_log,
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
