"""Policies: conventions, baselines, conformal thresholds, and the online error control."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.weak_strong.baselines import (
    AlwaysStrong,
    CalibratedThresholds,
    FixedThresholds,
    WeakOnly,
    conformal_thresholds,
    label_free_thresholds,
    oracle_policy,
)
from icml26.weak_strong.guarantees import freedman_radius, online_error_bounds
from icml26.weak_strong.metrics import error_rates
from icml26.weak_strong.policies import (
    ACCEPT,
    DEFER,
    REJECT,
    OnlineWeakStrong,
    Step,
    run_policy,
)
from icml26.weak_strong.streams import make_stream, run_adaptive_adversary


def test_fixed_threshold_regions() -> None:
    p = FixedThresholds(0.7, 0.3)
    assert [p.decide(s).region for s in (0.71, 0.7, 0.5, 0.3, 0.0)] == [
        ACCEPT,
        DEFER,
        DEFER,
        REJECT,
        REJECT,
    ]
    assert WeakOnly(0.5).decide(0.5).region == REJECT
    assert not WeakOnly(0.5).decide(0.9).queried


def test_baselines_metrics() -> None:
    st = make_stream("calibrated", 3000, 0)
    r = error_rates(*_run(AlwaysStrong(), st))
    assert (r.incorrect_accept, r.incorrect_reject, r.strong_freq, r.final_accuracy) == (0, 0, 1, 1)
    r = error_rates(*_run(WeakOnly(0.5), st))
    assert r.strong_freq == 0
    expected = np.mean(st.scores[~st.labels] > 0.5)
    assert r.incorrect_accept == pytest.approx(expected)


def _run(policy, st):
    tr = run_policy(policy, st.scores, st.labels)
    return tr.accepted, tr.labels, tr.queried


def test_oracle_meets_targets_in_hindsight() -> None:
    for kind in ("calibrated", "drift", "adversarial"):
        st = make_stream(kind, 5000, 3)
        for a in (0.05, 0.2):
            r = error_rates(*_run(oracle_policy(st.scores, st.labels, a, a, seed=0), st))
            # randomised per atom: at the target up to the coins' noise (n = 5000)
            assert r.incorrect_accept <= a + 0.03
            assert r.incorrect_reject <= a + 0.03


def test_conformal_thresholds_are_valid_on_exchangeable_data() -> None:
    rng = np.random.default_rng(0)
    misses_a, misses_r = [], []
    for _ in range(200):
        s = rng.random(400)
        y = rng.random(400) < s
        ta, tr = conformal_thresholds(s[:200], y[:200], 0.1, 0.1)
        s2, y2 = s[200:], y[200:]
        misses_a.append(np.mean(s2[~y2] > ta))
        misses_r.append(np.mean(s2[y2] <= tr))
    # Marginal validity: the average miss rate is at most the target (up to Monte Carlo noise).
    assert np.mean(misses_a) <= 0.1 + 0.01
    assert np.mean(misses_r) <= 0.1 + 0.01


def test_label_free_thresholds_need_calibration() -> None:
    cal = make_stream("calibrated", 20000, 5)
    over = make_stream("overconfident", 20000, 5)
    for st, ok in ((cal, True), (over, False)):
        ta, _tr = label_free_thresholds(st.scores, 0.1, 0.1)
        ia = np.mean(st.scores[~st.labels] > ta)
        assert bool(abs(ia - 0.1) < 0.02) is ok


def test_online_update_rule_by_hand() -> None:
    p = OnlineWeakStrong(
        0.1, 0.2, step_size=0.5, tau_a=0.7, tau_r=0.3, explore=1.0, explore_min=0.5
    )
    step = p.decide(0.5)  # band: always queried, weight 1
    assert step.region == DEFER
    assert step.queried
    assert step.prob == 1.0
    p.observe(step, 0.5, False)  # wrong answer in the band: tau_a -= eta * alpha
    assert p.tau_a == pytest.approx(0.7 - 0.5 * 0.1)
    step = p.decide(0.9)  # t = 2: p_t = max(0.5, 1 / sqrt 2)
    assert step.region == ACCEPT
    assert step.prob == pytest.approx(1 / np.sqrt(2))
    if step.queried:
        p.observe(step, 0.9, False)  # wrong answer accepted: tau_a += eta (1 - alpha) / p
        assert p.tau_a == pytest.approx(0.65 + 0.5 * 0.9 * np.sqrt(2))
    with pytest.raises(ValueError, match="only for items sent"):
        p.observe(p.decide(0.95)._replace(queried=False), 0.95, True)


def test_online_controls_errors_on_every_synthetic_stream() -> None:
    for kind in ("calibrated", "overconfident", "underconfident", "drift", "adversarial"):
        st = make_stream(kind, 20000, 11)
        p = OnlineWeakStrong(0.1, 0.1, seed=4, step_size=0.01)
        tr = run_policy(p, st.scores, st.labels)
        bounds = online_error_bounds(p, tr)
        assert bounds["accept"].holds
        assert bounds["reject"].holds
        # The theory's slack at this length is a few points; the rates sit near the target.
        assert bounds["accept"].rate <= 0.1 + 0.035
        assert bounds["reject"].rate <= 0.1 + 0.035


def test_online_error_control_against_adaptive_adversary_over_seeds() -> None:
    """An adversary that sees the thresholds puts every wrong answer just above tau_a and every
    right one on tau_r; over 100 seeds the rates never exceed the bound (delta = 0.05 per run,
    so the bound failing even once in 100 runs would be suspicious; it is also far slack)."""
    worst = 0.0
    for seed in range(100):
        p = OnlineWeakStrong(0.1, 0.1, seed=seed, step_size=0.05)
        tr = run_adaptive_adversary(p, 3000, seed=1000 + seed)
        b = online_error_bounds(p, tr, delta=0.05)
        assert b["accept"].holds, (seed, b)
        assert b["reject"].holds, (seed, b)
        worst = max(worst, b["accept"].rate - 0.1, b["reject"].rate - 0.1)
    # A policy with fixed thresholds facing the same adversary errs on every item.
    fixed = FixedThresholds(0.7, 0.3)
    tr = run_adaptive_adversary(fixed, 500, seed=0)
    r = error_rates(tr.accepted, tr.labels, tr.queried)
    assert r.incorrect_accept == 1.0
    assert r.incorrect_reject == 1.0
    assert worst < 0.2


def test_freedman_radius_solves_its_equation() -> None:
    eps = freedman_radius(50.0, 2.0, 0.01)
    assert np.exp(-(eps**2) / (2 * (50.0 + 2.0 * eps / 3))) == pytest.approx(0.01)


def test_calibrated_thresholds_freeze_after_split() -> None:
    st = make_stream("calibrated", 4000, 2)
    p = CalibratedThresholds(0.1, 0.1, 500)
    tr = run_policy(p, st.scores, st.labels)
    assert tr.queried[:500].all()
    assert p.thresholds == conformal_thresholds(st.scores[:500], st.labels[:500], 0.1, 0.1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.0, "beta": 0.1}, "alpha must lie strictly between 0 and 1"),
        ({"alpha": 0.1, "beta": 1.0}, "beta must lie strictly between 0 and 1"),
        ({"alpha": 0.1, "beta": 0.1, "step_size": -1.0}, "step_size"),
        ({"alpha": 0.1, "beta": 0.1, "explore_min": 0.0}, "explore"),
    ],
)
def test_online_bad_config(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        OnlineWeakStrong(**kwargs)


def test_run_policy_rejects_bad_scores() -> None:
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\]"):
        run_policy(AlwaysStrong(), [0.5, -0.1], [1, 0])
    with pytest.raises(ValueError, match="differ in length"):
        run_policy(AlwaysStrong(), [0.5], [1, 0])


@pytest.mark.parametrize("bad", [float("nan"), 1.2, -0.1, float("inf"), "high"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: OnlineWeakStrong(alpha=0.1, beta=0.1, seed=0),
        lambda: FixedThresholds(0.7, 0.3),
        lambda: WeakOnly(0.5),
        lambda: AlwaysStrong(),
        lambda: CalibratedThresholds(0.1, 0.1, n_calibration=5),
    ],
)
def test_decide_rejects_nan_and_scores_outside_unit_interval(make, bad) -> None:
    policy = make()
    with pytest.raises(ValueError, match="score must"):
        policy.decide(bad)
    assert policy.decide(1.0).prob > 0  # the bounds themselves are valid scores
    assert policy.decide(0.0).prob > 0


def test_rejected_score_leaves_the_online_state_unchanged() -> None:
    policy = OnlineWeakStrong(alpha=0.1, beta=0.1, seed=0)
    with pytest.raises(ValueError, match="score must"):
        policy.decide(float("nan"))
    assert policy.t == 0


def test_decide_and_verify_follows_the_protocol() -> None:
    from icml26.weak_strong.policies import decide_and_verify

    fixed = FixedThresholds(0.7, 0.3)
    assert decide_and_verify(fixed, 0.9, False) == (Step(ACCEPT, False, 1.0), True)
    assert decide_and_verify(fixed, 0.1, True) == (Step(REJECT, False, 1.0), False)
    # the band defers: the strong verdict decides either way
    assert decide_and_verify(fixed, 0.5, True)[1] is True
    assert decide_and_verify(fixed, 0.5, False)[1] is False


def test_trace_recorder_equals_run_policy_and_reads_thresholds_first() -> None:
    from icml26.weak_strong.policies import TraceRecorder

    rng = np.random.default_rng(3)
    s = rng.random(300)
    y = rng.random(300) < s
    a = run_policy(OnlineWeakStrong(0.1, 0.1, seed=1), s, y)
    pol = OnlineWeakStrong(0.1, 0.1, seed=1)
    rec = TraceRecorder(pol)
    for si, yi in zip(s.tolist(), y.tolist(), strict=True):
        rec.record(si, yi)
    b = rec.trace()
    for f in ("accepted", "queried", "region", "prob", "tau_a", "tau_r"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert b.tau_a[0] == 0.7
    assert len(rec) == 300
    # no thresholds recorded: NaN
    assert np.isnan(run_policy(AlwaysStrong(), s, y, record_thresholds=False).tau_a).all()


def test_score_blind_policy_is_on_target_at_one_minus_two_alpha_strong_calls() -> None:
    """The control claims' placebo: on target on any stream, blind to the score."""
    from icml26.weak_strong.baselines import ScoreBlind

    rng = np.random.default_rng(7)
    labels = rng.random(40_000) < 0.3
    scores = rng.random(40_000)
    trace = run_policy(ScoreBlind(0.1, 0.1, seed=3), scores, labels)
    r = error_rates(trace.accepted, trace.labels, trace.queried)
    assert abs(r.incorrect_accept - 0.1) < 0.01
    assert abs(r.incorrect_reject - 0.1) < 0.015
    assert abs(r.strong_freq - 0.8) < 0.01
    with pytest.raises(ValueError, match="alpha"):
        ScoreBlind(1.5, 0.1)
    with pytest.raises(ValueError, match="alpha \\+ beta"):
        ScoreBlind(0.6, 0.5)
