"""Each claim can come out false, and its placebo (the score-blind policy for the control
claims, always strong for the cost claims) fails it; the facts that were claims but cannot fail are tests on the smoke run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from icml26.shared.claims import placebo_metrics
from icml26.weak_strong.config import SYNTHETIC_STREAMS
from icml26.weak_strong.evaluate import evaluate_stream, pick_step_size
from icml26.weak_strong.paper import MATH_TOL, PAPER
from icml26.weak_strong.study import population_study

ALPHAS = ("a0p05", "a0p1", "a0p2")


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


STREAMS = (*SYNTHETIC_STREAMS, "math")


def _alpha(a: str) -> float:
    return float(a[1:].replace("p", "."))


def _at_target(
    excess: float = 0.0, se: float = 0.002, freq: float = 0.3, streams=STREAMS
) -> dict[str, float]:
    """Control metrics for online, the score-blind placebo and always-strong."""
    out: dict[str, float] = {}
    for stream in streams:
        for a in ALPHAS:
            for pol, x, f in (
                ("online", excess, freq),
                ("score_blind", 0.0, 1 - 2 * _alpha(a)),  # on target, blind: 1 - 2 alpha calls
                ("always_strong", -_alpha(a), 1.0),
            ):
                t = f"{stream}.{pol}.{a}"
                for side in ("accept", "reject"):
                    out[f"excess_{side}.{t}"] = x
                    out[f"excess_{side}_se.{t}"] = se
                out[f"strong_freq.{t}"] = f
                out[f"strong_freq_se.{t}"] = 0.005
            out[f"slack_accept.{stream}.{a}"] = 0.01
            out[f"slack_reject.{stream}.{a}"] = 0.01
    return out


def _cost(ia: float = 0.1, ir: float = 0.1, se: float = 0.005) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in ("math", "sudoku"):
        for p, freq, err in (("online", 0.3, (ia, ir)), ("always_strong", 1.0, (0.0, 0.0))):
            t = f"{s}.{p}.a0p1"
            out.update(
                {
                    f"strong_freq.{t}": freq,
                    f"strong_freq_se.{t}": 0.01,
                    f"incorrect_accept.{t}": err[0],
                    f"incorrect_accept_se.{t}": se,
                    f"incorrect_reject.{t}": err[1],
                    f"incorrect_reject_se.{t}": se,
                }
            )
    return out


def test_online_at_target_holds_when_every_stream_is_at_target() -> None:
    assert _claim("online_at_target_synthetic").evaluate(_at_target(0.01))["holds"] is True


@pytest.mark.parametrize("stream", SYNTHETIC_STREAMS)
@pytest.mark.parametrize("excess", [0.03, -0.03])
def test_online_at_target_fails_on_any_single_stream_either_side(
    stream: str, excess: float
) -> None:
    """Two-sided: an online policy far *below* the target (over-cautious) fails too."""
    metrics = _at_target(0.0)
    metrics[f"excess_reject.{stream}.online.a0p2"] = excess
    assert _claim("online_at_target_synthetic").evaluate(metrics)["holds"] is False


def test_online_at_target_must_show_the_band_with_its_noise() -> None:
    """Strict: ``|excess| + 2 SE <= 0.02``. A mean miss of 0.01 is shown within the band at
    SE 0.004 (0.018) but not at SE 0.006 (0.022): more noise never makes the claim easier, and
    a miss of 0.025 fails at any SE (the old rule passed it at SE 0.005)."""
    claim = _claim("online_at_target_synthetic")
    assert claim.evaluate(_at_target(0.01, se=0.004))["holds"] is True
    assert claim.evaluate(_at_target(-0.01, se=0.004))["holds"] is True
    assert claim.evaluate(_at_target(0.01, se=0.006))["holds"] is False
    assert claim.evaluate(_at_target(-0.01, se=0.006))["holds"] is False
    for se in (0.0, 0.001, 0.005, 0.05):
        assert claim.evaluate(_at_target(0.025, se=se))["holds"] is False


def test_online_at_target_math_must_show_the_band_with_its_noise() -> None:
    claim = _claim("online_at_target_math")
    assert claim.evaluate(_at_target(0.01, se=0.004, streams=("math",)))["holds"] is True
    assert claim.evaluate(_at_target(0.01, se=0.006, streams=("math",)))["holds"] is False
    assert claim.evaluate(_at_target(0.025, se=0.05, streams=("math",)))["holds"] is False


def test_online_at_target_has_a_cost_floor() -> None:
    """At alpha = 0.2 the score-blind policy asks 0.6: the online policy must ask at most
    0.55 (mean + 2 SE) even when both errors are on target."""
    claim = _claim("online_at_target_synthetic")
    assert claim.evaluate(_at_target(0.0, freq=0.54))["holds"] is True
    assert claim.evaluate(_at_target(0.0, freq=0.56))["holds"] is False


@pytest.mark.parametrize("cid", ["online_at_target_synthetic", "online_at_target_math"])
def test_score_blind_placebo_fails_the_control_claims(cid: str) -> None:
    claim = _claim(cid)
    assert claim.placebo == {"online": "score_blind"}
    metrics = _at_target(0.0)
    assert claim.evaluate(metrics)["holds"] is True
    placebo, _ = placebo_metrics(metrics, claim.placebo)
    assert claim.evaluate(placebo)["holds"] is False


@pytest.mark.parametrize(
    "cid", ["math_reliability_at_lower_cost", "sudoku_reliability_at_lower_cost"]
)
def test_always_strong_placebo_fails_the_cost_claims(cid: str) -> None:
    claim = _claim(cid)
    assert claim.placebo == {"online": "always_strong"}
    metrics = _cost()
    assert claim.evaluate(metrics)["holds"] is True
    placebo, _ = placebo_metrics(metrics, claim.placebo)
    assert claim.evaluate(placebo)["holds"] is False


@pytest.mark.parametrize(
    "cid", ["math_reliability_at_lower_cost", "sudoku_reliability_at_lower_cost"]
)
def test_cost_claims_judge_errors_beyond_noise_without_a_final_accuracy_term(cid: str) -> None:
    """0.149 incorrect rejection is not "within 5 points" once its SE is counted; a policy
    exactly on target holds although its final accuracy (no longer read) is 0.9 < 1 - 0.1."""
    claim = _claim(cid)
    assert "final_accuracy" not in claim.rule
    assert claim.evaluate(_cost(ir=0.149, se=0.01))["holds"] is False
    assert claim.evaluate(_cost(ir=0.12, se=0.01))["holds"] is True


def test_online_at_target_math_does_not_gate_on_the_stream_length() -> None:
    """The correct answers the slack needs is a reported figure, not a clause of the claim."""
    claim = _claim("online_at_target_math")
    assert "needed_correct" not in claim.rule
    assert "n_correct" not in claim.rule
    assert claim.evaluate(_at_target(MATH_TOL / 2, streams=("math",)))["holds"] is True


def test_online_at_target_math_tolerance_is_the_larger_of_tol_and_the_slack() -> None:
    """At a slack under the tolerance the tolerance decides; at a larger slack the slack does
    (on each side), and a miss beyond the slack still fails."""
    claim = _claim("online_at_target_math")
    small = _at_target(MATH_TOL + 0.01, se=0.001, streams=("math",))
    assert claim.evaluate(small)["holds"] is False
    wide = dict(small)
    for a in ALPHAS:
        wide[f"slack_accept.math.{a}"] = wide[f"slack_reject.math.{a}"] = MATH_TOL + 0.02
    assert claim.evaluate(wide)["holds"] is True
    beyond = _at_target(MATH_TOL + 0.05, se=0.001, streams=("math",))
    beyond.update({k: v for k, v in wide.items() if k.startswith("slack_")})
    assert claim.evaluate(beyond)["holds"] is False
    assert claim.evaluate({**wide, "excess_reject.math.online.a0p1": -0.05})["holds"] is False


@pytest.fixture(scope="module")
def smoke_metrics() -> dict[str, float]:
    """The smoke profile's figures for the facts below, computed by the job's own steps
    (the policies they read only, one repeat)."""
    cfg = replace(PAPER.profiles["smoke"], repeats=1)
    out = dict(population_study(cfg.alphas, cfg.seed))
    for stream, policy in (
        ("drift", "fixed_calibrated"),
        ("adversarial", "fixed_calibrated"),
        ("calibrated", "label_free"),
        ("overconfident", "label_free"),
    ):
        out.update(evaluate_stream(stream, replace(cfg, policies=(policy,)))["metrics"])
    return out


def test_fixed_thresholds_break_under_drift(smoke_metrics: dict[str, float]) -> None:
    """Forced by the streams' construction (a test, not a claim): thresholds fixed on the
    calibration split exceed the acceptance target once the stream drifts or is reordered."""
    for stream in ("drift", "adversarial"):
        for a in ALPHAS:
            assert smoke_metrics[f"excess_accept.{stream}.fixed_calibrated.{a}"] > 0.02


def test_sharpness_and_calibration_value(smoke_metrics: dict[str, float]) -> None:
    """Closed-form facts on laws we designed (tests, not claims): sharper calibrated
    verifiers need fewer strong calls; raw-score thresholds pay for confident mistakes;
    label-free thresholds hold on calibrated scores and miss on overconfident ones."""
    m = smoke_metrics
    f = [m[f"population.strong_freq.{k}.a0p1"] for k in ("sharp", "medium", "blunt")]
    assert f[0] < f[1] < f[2]
    assert (
        m["population.strong_freq.nonmonotone.score_order.a0p1"]
        > m["population.strong_freq.nonmonotone.eta_order.a0p1"] + 0.01
    )
    # smoke: 2,000 items, a 300-item calibration split, one repeat (quick: -0.005 vs +0.148)
    assert abs(m["excess_accept.calibrated.label_free.a0p1"]) <= 0.06
    assert (
        m["excess_accept.overconfident.label_free.a0p1"]
        > m["excess_accept.calibrated.label_free.a0p1"] + 0.06
    )


def _validation(excess: dict[float, float], freq: dict[float, float]) -> dict[str, float]:
    out = {}
    for eta, x in excess.items():
        for kind in ("calibrated", "drift"):
            for a in ALPHAS:
                t = f"validation_{kind}.online_eta{str(eta).replace('.', 'p')}.{a}"
                out[f"excess_accept.{t}"] = x
                out[f"excess_reject.{t}"] = -x
                out[f"strong_freq.{t}"] = freq[eta]
    return out


def test_step_size_rule_picks_the_cheapest_candidate_that_controls_both_errors() -> None:
    """The rule, not its noisy outcome: fewest strong calls among candidates within 0.02."""
    m = _validation({0.01: 0.01, 0.03: 0.019, 0.1: 0.03}, {0.01: 0.5, 0.03: 0.45, 0.1: 0.3})
    assert pick_step_size(m, (0.01, 0.03, 0.1), [0.05, 0.1, 0.2]) == 0.03
    m = _validation({0.01: 0.03, 0.1: -0.05}, {0.01: 0.5, 0.1: 0.3})
    assert pick_step_size(m, (0.01, 0.1), [0.05, 0.1, 0.2]) == -1.0  # none controls


def test_step_size_rule_refuses_a_missing_metric() -> None:
    m = _validation({0.01: 0.0}, {0.01: 0.5})
    del m["excess_reject.validation_drift.online_eta0p01.a0p1"]
    with pytest.raises(ValueError, match=r"excess_reject\.validation_drift\.online_eta0p01\.a0p1"):
        pick_step_size(m, (0.01,), [0.05, 0.1, 0.2])
