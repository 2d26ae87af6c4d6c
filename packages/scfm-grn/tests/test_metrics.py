"""Metrics against hand-computed cases and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

from icml26.scfm_grn.metrics import (
    METRICS,
    auprc,
    auprc_ratio,
    auroc,
    balanced_auprc,
    chance_levels,
    epr,
    score_all,
)


def test_hand_computed_case() -> None:
    # ranking: + - + - -  (5 pairs, 2 edges, density 0.4)
    y = np.array([1, 0, 1, 0, 0])
    s = np.array([0.9, 0.8, 0.7, 0.2, 0.1])
    # AP = 1/2 * 1 + 1/2 * 2/3
    assert auprc(y, s) == pytest.approx(0.5 + 1 / 3)
    assert auprc_ratio(y, s) == pytest.approx((0.5 + 1 / 3) / 0.4)
    # precision@2 = 1/2, over density 0.4
    assert epr(y, s) == pytest.approx(0.5 / 0.4)
    # pairs (pos, neg) won: 0.9 beats all 3, 0.7 beats 2 of 3 -> 5/6
    assert auroc(y, s) == pytest.approx(5 / 6)


def test_constant_scores_are_chance() -> None:
    y = np.array([1, 0, 0, 1, 0, 0, 0, 0])
    s = np.zeros(8)
    assert epr(y, s) == pytest.approx(1.0)
    assert auprc_ratio(y, s) == pytest.approx(1.0)
    assert auroc(y, s) == pytest.approx(0.5)


def test_perfect_ranking() -> None:
    y = np.array([0, 1, 0, 1, 0, 0])
    s = y.astype(float)
    assert auprc(y, s) == 1.0
    assert epr(y, s) == pytest.approx(3.0)
    assert balanced_auprc(y, s) == 1.0
    assert auroc(y, s) == 1.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 6)), min_size=4, max_size=60).filter(
        lambda xs: 0 < sum(b for b, _ in xs) < len(xs)
    )
)
def test_matches_sklearn_with_ties(pairs: list[tuple[bool, int]]) -> None:
    y = np.array([int(b) for b, _ in pairs])
    s = np.array([float(v) for _, v in pairs])
    assert auprc(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_balanced_auprc_of_random_scores_is_half() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(4000) < 0.05).astype(int)
    values = [balanced_auprc(y, rng.random(4000), seed=k) for k in range(5)]
    assert np.mean(values) == pytest.approx(0.5, abs=0.05)


def test_score_all_keys_and_bad_input() -> None:
    y = np.array([1, 0, 0, 1])
    assert set(score_all(y, np.arange(4.0))) == set(METRICS)
    with pytest.raises(ValueError, match="finite"):
        auprc(y, np.array([1.0, np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="positive and one negative"):
        auprc(np.zeros(4, dtype=int), np.arange(4.0))
    with pytest.raises(ValueError, match="1-D"):
        epr(y, np.arange(3.0))


def test_beeline_auprc_is_the_interpolated_area() -> None:
    """Distinct scores: Davis-Goadrich interpolation is the trapezoid of the PR curve
    (scikit-learn's auc of precision_recall_curve); all tied: the edge density exactly."""
    from sklearn.metrics import auc, precision_recall_curve

    rng = np.random.default_rng(3)
    y = (rng.random(300) < 0.1).astype(int)
    s = rng.random(300) + 0.5 * y
    p, r, _ = precision_recall_curve(y, s)
    assert auprc(y, s, convention="beeline") == pytest.approx(auc(r, p), abs=1e-12)
    assert auprc(y, np.zeros(300), convention="beeline") == pytest.approx(y.mean())
    with pytest.raises(ValueError, match="convention"):
        auprc(y, s, convention="prroc")


def test_beeline_epr_keeps_every_tie_at_the_kth_score() -> None:
    y = np.array([1, 0, 1, 0, 0, 0])
    s = np.array([0.9, 0.5, 0.5, 0.5, 0.1, 0.0])
    # k = 2: the k-th score is 0.5, tied three ways: BEELINE keeps 4 pairs (2 hits)
    assert epr(y, s, convention="beeline") == pytest.approx((2 / 4) / (2 / 6))
    # ours: the top one is a hit, then 1 of the 3 tied slots at the tied hit rate 1/3
    assert epr(y, s) == pytest.approx((1 + 1 / 3) / 2 / (2 / 6))


def test_chance_levels_are_computed_not_assumed() -> None:
    """A random ranking's balanced AUPRC with 23 edges is about 0.54, not 0.5; its AUPRC
    ratio about 1 + something, the mean of a random ranking's."""
    y = np.zeros(500, dtype=int)
    y[:23] = 1
    null = chance_levels(y, permutations=300, seed=0)
    assert 0.52 < null["balanced_auprc"].mean() < 0.57
    assert null["auroc"].mean() == pytest.approx(0.5, abs=0.02)
    assert null["epr"].mean() == pytest.approx(1.0, abs=0.15)
    assert null["balanced_auprc"].std() > 0.02
