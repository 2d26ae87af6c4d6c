"""Each claim can come out false, and its placebo (always strong in the online policy's place)
fails it; the facts that were claims but cannot fail are tests on the smoke run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from icml26.shared.claims import placebo_metrics
from icml26.weak_strong.config import SYNTHETIC_STREAMS
from icml26.weak_strong.evaluate import evaluate_stream
from icml26.weak_strong.paper import MATH_TOL, PAPER
from icml26.weak_strong.study import population_study

ALPHAS = ("a0p05", "a0p1", "a0p2")


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def _at_target(excess: float = 0.0, streams=SYNTHETIC_STREAMS) -> dict[str, float]:
    out = {}
    for stream in streams:
        for side in ("accept", "reject"):
            for a in ALPHAS:
                out[f"excess_{side}.{stream}.online.{a}"] = excess
                out[f"excess_{side}.{stream}.always_strong.{a}"] = -float(a[1:].replace("p", "."))
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


@pytest.mark.parametrize("cid", [c.id for c in PAPER.claims])
def test_always_strong_in_the_online_place_fails_every_claim(cid: str) -> None:
    claim = _claim(cid)
    assert claim.placebo == {"online": "always_strong"}
    metrics = _at_target(0.0, (*SYNTHETIC_STREAMS, "math"))
    for s in ("math", "sudoku"):
        for p, freq in (("online", 0.3), ("always_strong", 1.0)):
            t = f"{s}.{p}.a0p1"
            metrics.update(
                {
                    f"strong_freq.{t}": freq,
                    f"strong_freq_se.{t}": 0.01,
                    f"incorrect_accept.{t}": 0.1 if p == "online" else 0.0,
                    f"incorrect_reject.{t}": 0.1 if p == "online" else 0.0,
                    f"final_accuracy.{t}": 0.9 if p == "online" else 1.0,
                }
            )
    metrics["n_correct.math"] = 3000.0
    for a in ALPHAS:
        metrics[f"needed_correct.math.{a}"] = 2450.0
    assert claim.evaluate(metrics)["holds"] is True
    placebo, _ = placebo_metrics(metrics, claim.placebo)
    assert claim.evaluate(placebo)["holds"] is False


def test_online_at_target_math_needs_enough_correct_answers() -> None:
    claim = _claim("online_at_target_math")
    metrics = _at_target(MATH_TOL / 2, ("math",))
    metrics["n_correct.math"] = 3000.0
    for a in ALPHAS:
        metrics[f"needed_correct.math.{a}"] = 2450.0
    assert claim.evaluate(metrics)["holds"] is True
    metrics["n_correct.math"] = 705.0  # the 0.1.0 stream: the slack exceeds the tolerance
    assert claim.evaluate(metrics)["holds"] is False


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


def test_the_step_size_default_is_the_validation_selection() -> None:
    """The one default is what the job's selection picks on its validation streams
    (calibrated and drifting, drawn from their own seed stream; no claim reads them)."""
    from icml26.weak_strong.config import DEFAULT_STEP_SIZE, RunConfig
    from icml26.weak_strong.evaluate import select_step_size

    cfg = RunConfig()
    out = select_step_size(cfg, cfg.front_step_sizes)
    assert out["selected_step_size.validation"] == DEFAULT_STEP_SIZE
