"""k-anonymity, user-level DP (noise scale, budget), contribution caps and the leak audit."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.disempowerment.analysis import AnalysisInputs, analyse, calibration_from_labels
from icml26.disempowerment.classifiers import fit_classifier
from icml26.disempowerment.config import RunConfig
from icml26.disempowerment.datasets import synthetic_labelled
from icml26.disempowerment.judge import JudgeOutput
from icml26.disempowerment.labels import Labels
from icml26.disempowerment.measurement import (
    IntervalSettings,
    PrivacySettings,
    log_inputs,
    month_number,
)
from icml26.disempowerment.pipeline import dp_analyses, privacy_of, privacy_totals
from icml26.disempowerment.privacy import (
    GUARANTEES,
    KAnonymity,
    PrivacyLedger,
    cap_contributions,
    laplace_noise,
    pii_leak_audit,
    release_manifest,
)
from icml26.disempowerment.synthetic import generate_log
from icml26.disempowerment.validation import judge_study


@given(st.lists(st.integers(0, 30), min_size=0, max_size=80), st.integers(2, 20))
def test_group_below_k_is_never_released(users: list[int], k: int) -> None:
    gate = KAnonymity(k)
    allowed = gate.allow("g", [f"u{u}" for u in users])
    assert allowed == (len(set(users)) >= k)
    if allowed:
        assert gate.min_group_size >= k
    else:
        assert gate.suppressed == ["g"]
        assert gate.released_sizes == []


def test_many_conversations_of_few_users_are_not_a_group() -> None:
    gate = KAnonymity(5)
    assert not gate.allow("g", ["u1"] * 100 + ["u2"] * 100)


def _labels(n: int, rng: np.random.Generator, domain: np.ndarray | None = None) -> Labels:
    sev = np.zeros((n, 3), int)
    sev[rng.random(n) < 0.05, 0] = 2
    return Labels(
        sev, np.zeros((n, 4), bool), domain if domain is not None else rng.integers(0, 6, n)
    )


def test_analysis_suppresses_small_domains() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    domain = np.where(np.arange(n) < 40, 5, rng.integers(0, 5, n))  # creative: 40 convs...
    users = np.array([f"u{i % 500}" for i in range(n)])
    users[:40] = "u_only"  # ... all from one user
    pred = _labels(n, rng, domain)
    cal = calibration_from_labels(pred, pred)
    res = analyse(
        AnalysisInputs(
            pred, users, [f"c{i}" for i in range(n)], rng.integers(0, 6, n), rng.integers(-1, 2, n)
        ),
        cal,
        k=10,
        epsilon=None,
        cap=5,
        draws=200,
        level=0.95,
        rng=rng,
    )
    assert "domain_rate.creative.severe_or_moderate" not in res.metrics
    assert "domain.creative" in res.suppressed
    assert "domain_rate.work.severe_or_moderate" in res.metrics
    assert res.metrics["privacy.min_group_size"] >= 10


def test_laplace_noise_has_the_stated_scale() -> None:
    rng = np.random.default_rng(1)
    n = 200_000
    noise = laplace_noise(np.zeros(n), sensitivity=10.0, epsilon=2.0, rng=rng)
    b = 10.0 / 2.0
    # Laplace(b): mean 0, E|X| = b, Var = 2 b^2; the sample sizes make 3% a >6-sigma margin
    assert abs(noise.mean()) < 0.05 * b
    assert np.mean(np.abs(noise)) == pytest.approx(b, rel=0.03)
    assert noise.var() == pytest.approx(2 * b * b, rel=0.03)


def test_ledger_splits_and_records_the_budget() -> None:
    ledger = PrivacyLedger(epsilon=4.0, n_tables=4, cap=3, rng=np.random.default_rng(0))
    assert ledger.scale == pytest.approx(3 / 1.0)
    for i in range(4):
        ledger.release(f"t{i}", np.ones(5))
    assert ledger.spent == pytest.approx(4.0)
    with pytest.raises(RuntimeError, match="budget"):
        ledger.release("one too many", np.ones(5))
    plain = PrivacyLedger(epsilon=None, n_tables=2, cap=3, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(plain.release("t", np.arange(3)), np.arange(3))
    assert plain.spent == 0.0
    assert plain.scale == 0.0


def test_analysis_spends_exactly_epsilon() -> None:
    rng = np.random.default_rng(2)
    n = 2000
    pred = _labels(n, rng)
    users = np.array([f"u{i % 300}" for i in range(n)])
    res = analyse(
        AnalysisInputs(
            pred, users, [f"c{i}" for i in range(n)], rng.integers(0, 4, n), rng.integers(-1, 2, n)
        ),
        calibration_from_labels(pred, pred),
        k=5,
        epsilon=3.0,
        cap=4,
        draws=200,
        level=0.95,
        rng=rng,
        n_months=4,
    )
    assert res.metrics["privacy.dp_epsilon_spent"] == pytest.approx(3.0)
    # 300 users capped at 4 conversations: 1,200, released as the noisy table's total
    assert res.metrics["n_conversations"] == pytest.approx(300 * 4, abs=300)
    assert res.metrics["n_conversations"] != 300 * 4


@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 10_000)),
        min_size=1,
        max_size=60,
        unique_by=lambda t: t[1],
    ),
    st.integers(1, 5),
)
def test_cap_contributions(pairs: list[tuple[int, int]], cap: int) -> None:
    users = [f"u{u}" for u, _ in pairs]
    convs = [f"c{c}" for _, c in pairs]
    keep = cap_contributions(users, convs, cap)
    for u in set(users):
        idx = [i for i, x in enumerate(users) if x == u]
        assert keep[idx].sum() == min(cap, len(idx))
    # the choice does not depend on the order of the log
    perm = list(reversed(range(len(users))))
    keep2 = cap_contributions([users[i] for i in perm], [convs[i] for i in perm], cap)
    assert {convs[i] for i in perm if keep2[perm.index(i)]} == {
        c for c, k in zip(convs, keep, strict=True) if k
    }


def test_leak_audit_finds_strings(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"x": "contact ana@example.com"}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.bin").write_bytes(b"\x00\xffPriya Nair\x00")
    hits, files = pii_leak_audit(tmp_path, ["ana@example.com", "Priya Nair", "absent string"])
    assert hits == 2
    assert len(files) == 2
    assert pii_leak_audit(tmp_path, ["nothing here"])[0] == 0


def test_noisy_gate_under_dp_is_noisy_and_spends_its_share() -> None:
    rng = np.random.default_rng(4)
    ledger = PrivacyLedger(epsilon=2.0, n_tables=4, cap=5, rng=rng)
    gate = ledger.gate(k=10, groups=3)
    assert gate.noise_scale == pytest.approx(3 / 0.5)  # min(cap, groups) / (epsilon / n_tables)
    assert ledger.spent == pytest.approx(0.5)
    sizes = []
    for i in range(400):
        gate.allow(f"g{i}", [f"u{j}" for j in range(30)])
    sizes = np.array(gate.released_sizes)
    assert sizes.std() > 3  # the released sizes are noisy, not the exact 30
    exact = PrivacyLedger(epsilon=None, n_tables=2, cap=5, rng=rng).gate(k=10, groups=3)
    assert exact.noise_scale == 0
    assert not exact.allow("g", ["u1"] * 50)


def test_release_manifest_names_every_guarantee() -> None:
    keys = [
        "rate.any.severe",
        "n_users",
        "clusters.released",
        "classifier.tfidf.macro_f1",
        "scrub.recall.all",
        "privacy.k",
        "throughput.local",
        "input.malformed_lines",
    ]
    dp = release_manifest(keys, dp=True)
    assert dp["rate.any.severe"] == "dp"
    assert dp["n_users"] == "dp"
    assert dp["clusters.released"] == "k_anonymous_not_dp"
    assert dp["classifier.tfidf.macro_f1"] == "labelled_set"
    assert dp["scrub.recall.all"] == "synthetic"
    assert dp["privacy.k"] == "setting"
    assert dp["input.malformed_lines"] == "input_file"
    assert release_manifest(keys, dp=False)["rate.any.severe"] == "k_anonymous"
    assert set(dp.values()) <= set(GUARANTEES)


def test_leak_audit_counts_tokens_not_digits_inside_numbers(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text('{"rate": 0.0012345678, "zip": "near 94110 now"}')
    hits, _ = pii_leak_audit(tmp_path, ["12345", "94110"])
    assert hits == 1


def _inputs(n: int, months: np.ndarray, rng: np.random.Generator) -> AnalysisInputs:
    return AnalysisInputs(
        _labels(n, rng),
        np.array([f"u{i % 300}" for i in range(n)]),
        [f"c{i}" for i in range(n)],
        months,
        rng.integers(-1, 2, n),
    )


def test_dp_needs_a_public_month_window() -> None:
    rng = np.random.default_rng(5)
    inputs = _inputs(600, rng.integers(0, 4, 600), rng)
    cal = calibration_from_labels(inputs.pred, inputs.pred)
    kw = {"k": 5, "cap": 4, "draws": 100, "level": 0.95, "rng": rng}
    with pytest.raises(ValueError, match="month window must be public"):
        analyse(inputs, cal, epsilon=1.0, **kw)
    with pytest.raises(ValueError, match="month window must be public"):
        PrivacySettings(epsilon=1.0)
    with pytest.raises(ValueError, match="set together"):
        PrivacySettings(first_month="2025-01")
    with pytest.raises(ValueError, match="YYYY-MM"):
        PrivacySettings(first_month="2025-13", months=3)
    ok = PrivacySettings(epsilon=1.0, first_month="2025-01", months=12)
    assert ok.months == 12


def test_month_window_leaves_out_what_falls_outside_and_sizes_the_tables() -> None:
    rng = np.random.default_rng(6)
    n = 3000
    months = rng.integers(-2, 9, n)  # two months before the window, three after it
    inputs = _inputs(n, months, rng)
    cal = calibration_from_labels(inputs.pred, inputs.pred)
    res = analyse(inputs, cal, k=5, epsilon=None, cap=4, draws=100, level=0.95, rng=rng, n_months=6)
    inside = int(((months >= 0) & (months < 6)).sum())
    assert res.metrics["n_conversations"] == inside
    assert len(res.monthly["any.months"]) == 6
    # the window, not the data, sizes the month table: a seventh month is never released
    dp = analyse(inputs, cal, k=5, epsilon=2.0, cap=4, draws=100, level=0.95, rng=rng, n_months=6)
    assert dp.metrics["privacy.dp_epsilon_spent"] == pytest.approx(2.0)
    assert max(dp.monthly["any.months"], default=0) <= 5


def test_log_inputs_count_months_from_the_window() -> None:
    log = generate_log(60, seed=3)
    inputs = log_inputs(
        log.conversations, Labels(log.severity, log.amplifiers, log.domain), "2024-11"
    )
    first = min(c.timestamp.year * 12 + c.timestamp.month - 1 for c in log.conversations)
    assert inputs.month.min() == first - month_number("2024-11")
    assert month_number("2025-01") == 2025 * 12


def test_a_judged_run_splits_its_budget_and_reports_the_total() -> None:
    cfg = RunConfig(judge="smollm2-135m-instruct-q4_1", dp_epsilon=3.0)
    privacy, _ = privacy_of(cfg)
    assert dp_analyses(cfg) == 3
    assert privacy.epsilon == pytest.approx(1.0)
    assert (privacy.first_month, privacy.months) == ("2025-01", 12)
    spent = {
        "privacy.dp_epsilon_spent": 1.0,
        "judge.privacy.dp_epsilon_spent": 1.0,
        "judge_tfidf.privacy.dp_epsilon_spent": 1.0,
    }
    totals = privacy_totals(cfg, spent)
    assert totals["privacy.dp_epsilon_spent"] == pytest.approx(3.0)
    assert totals["privacy.dp_epsilon"] == 3.0
    assert privacy_of(RunConfig(dp_epsilon=3.0))[0].epsilon == pytest.approx(3.0)


class _FakeJudge:
    """The TF-IDF classifier behind the judge's interface (every reply well formed)."""

    def __init__(self, classifier) -> None:
        self.classifier = classifier
        self.malformed_rate = self.malformed_rate_first = 0.0
        self.backend = SimpleNamespace(usage=SimpleNamespace(total_tokens=0))

    def judge(self, texts):
        labels = self.classifier.predict(texts)
        return JudgeOutput(labels, np.ones(len(texts), dtype=bool), [""] * len(texts))


def test_judge_study_under_dp_spends_its_share_and_every_key_is_labelled() -> None:
    train = synthetic_labelled(600, seed=1, share=0.3)
    clf = fit_classifier("tfidf", [c.text() for c in train.conversations], train.labels)
    log = generate_log(2500, seed=2)
    audit = synthetic_labelled(600, seed=3, share=0.15)
    privacy = PrivacySettings(k=5, epsilon=0.5, first_month="2025-01", months=12)
    out = judge_study(
        _FakeJudge(clf),
        clf,
        log.conversations,
        audit,
        log.planted,
        n_audit=300,
        n_log=2000,
        privacy=privacy,
        intervals=IntervalSettings(draws=100),
        seed=0,
    )
    assert out["judge.privacy.dp_epsilon_spent"] == pytest.approx(0.5)
    assert out["judge_tfidf.privacy.dp_epsilon_spent"] == pytest.approx(0.5)
    manifest = release_manifest(out, dp=True)
    analyses = ("judge.", "judge_tfidf.")
    families = ("rate.", "observed.", "domain_rate.", "trend_slope.", "approval_association")
    for key, guarantee in manifest.items():
        is_analysis = key.startswith(analyses) and key.split(".", 1)[1].startswith(families)
        assert (guarantee == "dp") == is_analysis, (key, guarantee)
    assert manifest["judge.kappa.reality"] == "labelled_set"
    assert manifest["judge.malformed_rate"] == "judge_subset"
    assert manifest["judge.privacy.dp_epsilon_spent"] == "setting"
    assert manifest["judge.covered.reality.severe"] == "synthetic"


class _ConstantClassifier:
    """Predicts 'none' everywhere (an uninformative judge, as SmolLM2-135M was on an
    amplifier in the llm profile)."""

    def predict(self, texts):
        n = len(texts)
        return Labels(np.zeros((n, 3), int), np.zeros((n, 4), bool), np.zeros(n, int))


def test_judge_study_with_an_uninformative_judge_reports_agreement_and_no_rates() -> None:
    train = synthetic_labelled(600, seed=1, share=0.3)
    clf = fit_classifier("tfidf", [c.text() for c in train.conversations], train.labels)
    log = generate_log(1500, seed=2)
    audit = synthetic_labelled(400, seed=3, share=0.15)
    out = judge_study(
        _FakeJudge(_ConstantClassifier()),
        clf,
        log.conversations,
        audit,
        log.planted,
        n_audit=100,
        n_log=500,
        privacy=PrivacySettings(k=5),
        intervals=IntervalSettings(draws=100),
        seed=0,
    )
    assert out["judge.identified"] == 0.0
    assert out["judge.kappa.reality"] == pytest.approx(0.0)
    assert not any(k.startswith("judge.rate.") for k in out)  # refused, not made up
    assert any(k.startswith("judge_tfidf.rate.") for k in out)  # the baseline still measures
    manifest = release_manifest(out, dp=False)
    assert manifest["judge.identified"] == "labelled_set"
