"""Weak-strong verification policies (ICML 2026): accept, reject, or defer to a strong verifier.

The public API (NumPy only; the LLM task imports torch lazily)::

    from icml26.weak_strong import OnlineWeakStrong, run_policy, error_rates

    policy = OnlineWeakStrong(alpha=0.1, beta=0.1, seed=0)
    for score in weak_scores:                      # a live stream
        step = policy.decide(score)                # ACCEPT / REJECT / DEFER, and a query flag
        if step.queried:
            policy.observe(step, score, strong_verifier(answer))

    trace = run_policy(policy, scores, labels)     # or a whole recorded stream at once
    print(error_rates(trace.accepted, trace.labels, trace.queried))
"""

from icml26.weak_strong.guarantees import ErrorBound, freedman_radius, online_error_bounds
from icml26.weak_strong.lengths import LengthCurve, control_length, error_vs_length
from icml26.weak_strong.metrics import (
    ErrorRates,
    error_rates,
    expected_calibration_error,
    reliability_curve,
    resolution,
    running_error_rates,
    sharpness,
)
from icml26.weak_strong.policies import (
    ACCEPT,
    DEFER,
    REJECT,
    AlwaysStrong,
    CalibratedThresholds,
    FixedThresholds,
    LabelFreeThresholds,
    OnlineWeakStrong,
    Policy,
    Step,
    Trace,
    TraceRecorder,
    WeakOnly,
    conformal_thresholds,
    decide_and_verify,
    label_free_thresholds,
    oracle_policy,
    run_policy,
)
from icml26.weak_strong.population import (
    PopulationPolicy,
    ScoreLaw,
    optimal_policy,
    policy_risks,
    score_thresholds,
)
from icml26.weak_strong.streams import (
    SYNTHETIC_STREAMS,
    Stream,
    load_stream_file,
    make_stream,
    run_adaptive_adversary,
)

__all__ = [
    "ACCEPT",
    "DEFER",
    "REJECT",
    "SYNTHETIC_STREAMS",
    "AlwaysStrong",
    "CalibratedThresholds",
    "ErrorBound",
    "ErrorRates",
    "FixedThresholds",
    "LabelFreeThresholds",
    "LengthCurve",
    "OnlineWeakStrong",
    "Policy",
    "PopulationPolicy",
    "ScoreLaw",
    "Step",
    "Stream",
    "Trace",
    "TraceRecorder",
    "WeakOnly",
    "conformal_thresholds",
    "control_length",
    "decide_and_verify",
    "error_rates",
    "error_vs_length",
    "expected_calibration_error",
    "freedman_radius",
    "label_free_thresholds",
    "load_stream_file",
    "make_stream",
    "online_error_bounds",
    "optimal_policy",
    "oracle_policy",
    "policy_risks",
    "reliability_curve",
    "resolution",
    "run_adaptive_adversary",
    "run_policy",
    "running_error_rates",
    "score_thresholds",
    "sharpness",
]
