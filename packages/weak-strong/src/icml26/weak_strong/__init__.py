"""Weak-strong verification policies (ICML 2026): accept, reject, or defer to a strong verifier.

The public API (NumPy only; the LLM task imports torch lazily)::

    from icml26.weak_strong import OnlineWeakStrong, run_policy, error_rates

    policy = OnlineWeakStrong(alpha=0.1, beta=0.1, seed=0)
    for score in weak_scores:                      # a live stream
        step = policy.decide(score)                # ACCEPT / REJECT / DEFER, and a query flag
        if step.queried:                           # now or later (delayed feedback)
            policy.observe(step, score, strong_verifier(answer))

    trace = run_policy(policy, scores, labels)     # or a whole recorded stream at once
    print(error_rates(trace.accepted, trace.labels, trace.queried))

Baselines (always strong, weak only, fixed / calibrated / label-free thresholds, the hindsight
oracle) are in :mod:`icml26.weak_strong.baselines`.
"""

from typing import TYPE_CHECKING

from icml26.shared.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ACCEPT": ".policies",
        "DEFER": ".policies",
        "REJECT": ".policies",
        "OnlineWeakStrong": ".policies",
        "Policy": ".policies",
        "Step": ".policies",
        "run_policy": ".policies",
        "error_rates": ".metrics",
        "online_error_bounds": ".guarantees",
        "ScoreLaw": ".population",
        "optimal_policy": ".population",
        "policy_risks": ".population",
        "Stream": ".streams",
        "make_stream": ".streams",
        "load_stream_file": ".streams",
        "RunConfig": ".config",
    },
    submodules=["baselines"],
)

if TYPE_CHECKING:
    from icml26.weak_strong import baselines as baselines
    from icml26.weak_strong.config import RunConfig as RunConfig
    from icml26.weak_strong.guarantees import online_error_bounds as online_error_bounds
    from icml26.weak_strong.metrics import error_rates as error_rates
    from icml26.weak_strong.policies import ACCEPT as ACCEPT
    from icml26.weak_strong.policies import DEFER as DEFER
    from icml26.weak_strong.policies import REJECT as REJECT
    from icml26.weak_strong.policies import OnlineWeakStrong as OnlineWeakStrong
    from icml26.weak_strong.policies import Policy as Policy
    from icml26.weak_strong.policies import Step as Step
    from icml26.weak_strong.policies import run_policy as run_policy
    from icml26.weak_strong.population import ScoreLaw as ScoreLaw
    from icml26.weak_strong.population import optimal_policy as optimal_policy
    from icml26.weak_strong.population import policy_risks as policy_risks
    from icml26.weak_strong.streams import Stream as Stream
    from icml26.weak_strong.streams import load_stream_file as load_stream_file
    from icml26.weak_strong.streams import make_stream as make_stream
