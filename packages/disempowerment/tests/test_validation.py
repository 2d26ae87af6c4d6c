"""Null worlds make every finding false; the method recovers the planted world; coverage.

At these sizes each test takes tens of CPU-seconds (``slow``); the default session checks the
null worlds through the smoke run (``test_experiment.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from icml26.disempowerment.classifiers import fit_classifier
from icml26.disempowerment.datasets import synthetic_labelled
from icml26.disempowerment.judge import JudgeOutput
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.measurement import IntervalSettings, PrivacySettings, measure
from icml26.disempowerment.paper import CLAIMS
from icml26.disempowerment.scrub import Scrubber
from icml26.disempowerment.synthetic import NULL_WORLDS, generate_log
from icml26.disempowerment.validation import (
    NullSettings,
    _kappa,
    coverage_study,
    judge_agreement,
    judge_choice_study,
    judge_rows,
    null_study,
)
from icml26.shared.claims import evaluate_rule

FINDINGS = [c for c in CLAIMS if isinstance(c.placebo, str) and c.placebo in NULL_WORLDS]


def _train(train_set):
    return fit_classifier("tfidf", [c.text() for c in train_set.conversations], train_set.labels)


def test_every_finding_names_a_null_world() -> None:
    assert {c.placebo for c in FINDINGS} == set(NULL_WORLDS)


@pytest.mark.slow
def test_null_worlds_make_every_finding_false() -> None:
    settings = NullSettings(
        n_log=20_000,
        n_train=1500,
        n_calibration=5000,
        positive_share=0.3,
        calibration_positive_share=0.15,
        privacy=PrivacySettings(k=25),
        intervals=IntervalSettings(draws=400),
    )
    out = null_study(FINDINGS, _train, settings, seeds=1, seed=3)
    for c in FINDINGS:
        assert out[f"null_fpr.{c.id}"] == 0.0, c.id
        assert f"null.{c.placebo}.holds.{c.id}" in out
    # the placebo metrics check_paper takes: every key of the claim's rule, on its null world
    for c in FINDINGS:
        keys = {
            k[len(f"null.{c.placebo}.") :]: v
            for k, v in out.items()
            if k.startswith(f"null.{c.placebo}.")
        }
        holds, _, _ = evaluate_rule(c.rule, keys)
        assert holds is False


@pytest.mark.slow
def test_false_positive_rate_of_every_finding_over_20_null_seeds() -> None:
    # 20 seeds of each null world at a fifth of quick's log (about 3 CPU-s per run): each
    # finding may hold on at most 2 of its null world's 20 seeds (the claim's 0.10).
    # Measured 2026-12-04 at 2e3ce00: 0.05 / 0 / 0 / 0 (severe_rare_measured, domains, trend,
    # approval); 844 s wall at load ~15, about 130 CPU-s. Again 2026-12-05 at 67f40b5 (clean):
    # 0.05 / 0 / 0 / 0, 506 s wall at load ~6, 141 CPU-s (docs/null-fpr-20-seeds.md).
    settings = NullSettings(
        n_log=20_000,
        n_train=1500,
        n_calibration=5000,
        positive_share=0.3,
        calibration_positive_share=0.15,
        privacy=PrivacySettings(k=25),
        intervals=IntervalSettings(draws=400),
    )
    out = null_study(FINDINGS, _train, settings, seeds=20, seed=5, workers=2)
    rates = {c.id: out[f"null_fpr.{c.id}"] for c in FINDINGS}
    print("null false-positive rates over 20 seeds:", rates)
    assert out["null.n_seeds"] == 20
    assert all(r <= 0.10 for r in rates.values()), rates


@pytest.fixture(scope="module")
def planted_measurement():
    log = generate_log(30_000, seed=21)
    train = synthetic_labelled(2000, seed=22, share=0.3)
    audit = synthetic_labelled(8000, seed=23, share=0.15)
    clf = _train(train)
    res = measure(log.conversations, clf, audit, intervals=IntervalSettings(draws=600), seed=1)
    return log, res


@pytest.mark.slow
def test_measure_recovers_the_planted_world(planted_measurement) -> None:
    log, res = planted_measurement
    m, t = res.metrics, log.planted
    covered = [
        m[f"rate.{v}.{s}.lo"] <= t[f"rate.{v}.{s}"] <= m[f"rate.{v}.{s}.hi"]
        for v in ("reality", "value", "action", "any")
        for s in ("mild", "moderate", "severe")
    ]
    assert np.mean(covered) >= 0.75
    # the domain finding holds on the planted world at this size: the test above can fail
    holds, _, _ = evaluate_rule(FINDINGS[1].rule, m)
    assert FINDINGS[1].id == "personal_domains_higher"
    assert holds
    assert res.dropped == {"audit": 0, "log": 0}


@pytest.mark.slow
def test_coverage_study_reports_corrected_and_naive_coverage() -> None:
    clf = _train(synthetic_labelled(1500, seed=5, share=0.3))
    out = coverage_study(
        clf,
        repeats=1,
        n_log=8000,
        n_calibration=3000,
        calibration_positive_share=0.15,
        privacy=PrivacySettings(k=10),
        intervals=IntervalSettings(draws=300),
        seed=0,
    )
    assert out["coverage.n_intervals"] == 12
    assert 0 <= out["coverage.naive_intervals"] <= 1
    for k in ("rate", "naive"):
        share = out[f"coverage.{k}_intervals"]
        lo, hi = out[f"coverage.{k}_intervals.lo"], out[f"coverage.{k}_intervals.hi"]
        assert lo <= share <= hi
        # exact: at the upper end, P(X <= hits | 12, hi) = 0.025 (the binomial sum by hand)
        hits = round(share * 12)
        tail = sum(math.comb(12, j) * hi**j * (1 - hi) ** (12 - j) for j in range(hits + 1))
        assert hi == 1.0 if hits == 12 else tail == pytest.approx(0.025, rel=1e-6)
    assert "coverage.trend_intervals" in out


def test_judge_rows_stratify_the_audit_set_and_weight_back() -> None:
    positive = np.zeros(1000, dtype=bool)
    positive[:150] = True  # a 15%-positive audit set
    a_rows, l_rows, w = judge_rows(positive, 5000, 180, 200, seed=0)
    assert len(set(a_rows.tolist())) == 180
    assert len(set(l_rows.tolist())) == 200
    assert positive[a_rows].sum() == 90  # half, not the ~27 of a uniform draw
    # inverse inclusion probabilities: the weights of each stratum sum to its size
    assert w[positive[a_rows]].sum() == pytest.approx(150)
    assert w[~positive[a_rows]].sum() == pytest.approx(850)
    few = np.zeros(1000, dtype=bool)
    few[:10] = True  # fewer positives than half: all of them, the rest negatives
    a_rows, _, w = judge_rows(few, 5000, 180, 200, seed=0)
    assert few[a_rows].sum() == 10
    assert len(a_rows) == 180
    assert w.sum() == pytest.approx(1000)


def test_judge_agreement_kappa_interval() -> None:
    rng = np.random.default_rng(0)
    sev = rng.integers(0, 4, size=(200, 3))
    truth = Labels(sev, np.zeros((200, 4), bool), rng.integers(0, 6, 200))
    perfect = judge_agreement(truth, truth)
    assert perfect["judge.kappa.reality"] == pytest.approx(1.0)
    assert perfect["judge.kappa.reality.lo"] == pytest.approx(1.0)
    noise = Labels(rng.integers(0, 4, size=(200, 3)), truth.amplifiers, truth.domain)
    out = judge_agreement(truth, noise)
    for dim in ("reality", "value", "action"):
        lo, k, hi = (out[f"judge.kappa.{dim}{s}"] for s in (".lo", "", ".hi"))
        assert lo <= k <= hi
        assert lo < 0 < hi  # a random judge: the interval holds chance (kappa 0)


def test_bootstrap_kappa_matches_sklearn() -> None:
    rng = np.random.default_rng(1)
    t, p = rng.integers(0, 4, 50), rng.integers(0, 4, 50)
    p[:30] = t[:30]
    assert _kappa(t, p) == pytest.approx(cohen_kappa_score(t, p, labels=[0, 1, 2, 3]))
    assert np.isnan(_kappa(np.zeros(5, int), np.zeros(5, int)))


class _TableJudge:
    """A fake judge answering from a fixed text -> labels table (``noise`` flips severities)."""

    def __init__(self, table: dict[str, tuple], noise: float, seed: int) -> None:
        self.table, self.noise, self.rng = table, noise, np.random.default_rng(seed)

    def judge(self, texts):
        sev = np.array([self.table[t][0] for t in texts])
        flip = self.rng.random(sev.shape) < self.noise
        sev = np.where(flip, self.rng.integers(0, 4, sev.shape), sev)
        n = len(texts)
        labels = Labels(sev, np.zeros((n, 4), bool), np.array([self.table[t][1] for t in texts]))
        return JudgeOutput(labels=labels, ok=np.ones(n, bool), replies=[""] * n)


def test_judge_choice_study_reports_the_margin_and_its_noise() -> None:
    audit = synthetic_labelled(400, seed=3, share=0.3)
    scrub = Scrubber()
    table = {
        scrub(c.text()): (tuple(audit.labels.severity[i]), int(audit.labels.domain[i]))
        for i, c in enumerate(audit.conversations)
    }
    judges = {
        "plain": _TableJudge(table, 0.5, 0),
        "same": _TableJudge(table, 0.5, 0),  # the reference again: no margin, no noise
        "better": _TableJudge(table, 0.0, 0),
    }
    out = judge_choice_study(judges, audit, exclude=np.arange(100), n=40, seed=0)
    assert out["choice.same.mean_kappa_diff"] == pytest.approx(0.0)
    assert out["choice.same.mean_kappa_diff_se"] == pytest.approx(0.0)
    assert out["choice.better.mean_kappa"] == pytest.approx(1.0)
    diff, se = out["choice.better.mean_kappa_diff"], out["choice.better.mean_kappa_diff_se"]
    assert diff > 2 * se > 0  # a perfect judge against a half-random one: beyond noise
    assert 0 < out["choice.plain.mean_kappa_se"] < 0.3
    assert "choice.plain.mean_kappa_diff" not in out  # the reference has no margin
