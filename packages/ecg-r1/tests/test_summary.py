"""The dropout claims' figures pair ``ecg_r1`` and ``no_dropout`` by seed, and the hallucination
statistic is the pooled metric's difference (hand-made numbers)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from icml26.ecg_r1.evaluate import pooled_hallucination_test
from icml26.ecg_r1.paper import PAPER
from icml26.ecg_r1.summary import seed_paired_dropout
from icml26.shared.claims import evaluate_rule


def _seed(name: str, both: float, sig: float, img: float, cons: float) -> dict[str, float]:
    return {
        f"diagnosis_jaccard.both.{name}": both,
        f"diagnosis_jaccard.signal_only.{name}": sig,
        f"diagnosis_jaccard.image_only.{name}": img,
        f"cross_modal_consistency.{name}": cons,
    }


R1 = [_seed("ecg_r1", 0.6, 0.55, 0.50, 0.80), _seed("ecg_r1", 0.7, 0.60, 0.65, 0.90)]
R1.append(_seed("ecg_r1", 0.5, 0.48, 0.40, 0.70))
ND = [_seed("no_dropout", 0.7, 0.3, 0.2, 0.50), _seed("no_dropout", 0.8, 0.5, 0.3, 0.60)]
ND.append(_seed("no_dropout", 0.6, 0.2, 0.3, 0.45))


def test_gaps_are_paired_by_seed_with_the_se_over_seeds() -> None:
    out = seed_paired_dropout(R1, ND)
    # signal_only gaps: no_dropout 0.4, 0.3, 0.4; ecg_r1 0.05, 0.1, 0.02 -> 0.35, 0.2, 0.38
    d = np.array([0.35, 0.2, 0.38])
    key = "signal_only.no_dropout_minus_ecg_r1"
    assert out[f"gap_diff.{key}"] == pytest.approx(d.mean())
    assert out[f"gap_diff_seed_se.{key}"] == pytest.approx(d.std(ddof=1) / math.sqrt(3))
    t = stats.ttest_rel([0.4, 0.3, 0.4], [0.05, 0.1, 0.02]).statistic
    assert out["z.gap_signal_only_no_dropout_minus_ecg_r1"] == pytest.approx(t)
    c = np.array([0.30, 0.30, 0.25])
    assert out["consistency_diff.ecg_r1_minus_no_dropout"] == pytest.approx(c.mean())
    assert out["z.consistency_ecg_r1_minus_no_dropout"] == pytest.approx(
        c.mean() / (c.std(ddof=1) / math.sqrt(3))
    )


def test_pairing_follows_the_seed_order() -> None:
    """Shuffling one method's seeds changes the paired SE (a pooled test would not)."""
    a = seed_paired_dropout(R1, ND)["gap_diff_seed_se.image_only.no_dropout_minus_ecg_r1"]
    b = seed_paired_dropout(R1, ND[1:] + ND[:1])[
        "gap_diff_seed_se.image_only.no_dropout_minus_ecg_r1"
    ]
    assert a != pytest.approx(b)


def test_one_seed_gives_no_z_and_the_claim_fails() -> None:
    out = seed_paired_dropout(R1[:1], ND[:1])
    assert math.isnan(out["z.consistency_ecg_r1_minus_no_dropout"])
    claim = next(c for c in PAPER.claims if c.id == "dropout_raises_consistency")
    metrics = R1[0] | ND[0] | out
    assert evaluate_rule(claim.rule, metrics)[0] is not True  # undecided (nan) or failed


def test_seed_noise_larger_than_the_gap_fails_the_consistency_claim() -> None:
    claim = next(c for c in PAPER.claims if c.id == "dropout_raises_consistency")
    base = {"diagnosis_jaccard.signal_only.ecg_r1": 0.5, "diagnosis_jaccard.image_only.ecg_r1": 0.5}
    steady = seed_paired_dropout(R1, ND)
    noisy_nd = [ND[0] | {"cross_modal_consistency.no_dropout": v} for v in (0.2, 0.95, 0.6)]
    noisy = seed_paired_dropout(R1, noisy_nd)
    means = {"cross_modal_consistency.ecg_r1": 0.8, "cross_modal_consistency.no_dropout": 0.55}
    assert evaluate_rule(claim.rule, base | means | steady)[0] is True
    assert evaluate_rule(claim.rule, base | means | noisy)[0] is False


def test_mismatched_seeds_are_refused() -> None:
    with pytest.raises(ValueError, match="same seeds"):
        seed_paired_dropout(R1, ND[:2])


class _Counts:
    """What :func:`pooled_hallucination_test` reads of a :class:`MethodScores`."""

    def __init__(self, bad: list[float], total: list[float]) -> None:
        self.halluc_bad, self.halluc_total = np.array(bad), np.array(total)


def test_pooled_hallucination_test_is_the_pooled_metrics_difference() -> None:
    """The statistic is the difference of the pooled rates (statements over records and seeds
    pooled, records with no statement adding nothing), not of per-record rates."""
    a = [_Counts([1, 0, 3, 0], [2, 0, 4, 10]), _Counts([2, 0, 0, 1], [2, 1, 0, 5])]
    b = [_Counts([0, 0, 1, 0], [2, 1, 4, 10]), _Counts([1, 0, 0, 0], [2, 1, 0, 5])]
    gap, se, z = pooled_hallucination_test(a, b, n_boot=500)  # type: ignore[arg-type]
    assert gap == pytest.approx(7 / 24 - 2 / 25)
    per_record = np.mean([1 / 2, 0, 3 / 4, 0]) - np.mean([0, 0, 1 / 4, 0])  # the old statistic
    assert gap != pytest.approx(per_record)
    assert se > 0
    assert z == pytest.approx(gap / se)
    same = pooled_hallucination_test(a, a, n_boot=200)  # type: ignore[arg-type]
    assert same == (0.0, 0.0, 0.0)  # the placebo: a method against itself
