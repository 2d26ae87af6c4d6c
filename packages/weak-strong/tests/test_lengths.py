"""The error-vs-length study against a direct computation on each prefix."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.weak_strong.guarantees import online_error_bounds
from icml26.weak_strong.lengths import (
    LengthCurve,
    control_length,
    error_vs_length,
    length_grid,
)
from icml26.weak_strong.metrics import error_rates
from icml26.weak_strong.policies import OnlineWeakStrong, run_policy
from icml26.weak_strong.streams import make_stream


def _policy(r: int) -> OnlineWeakStrong:
    return OnlineWeakStrong(0.1, 0.15, step_size=0.01, seed=100 + r)


@pytest.mark.parametrize("passes", [1, 2])
def test_error_vs_length_equals_fresh_runs_on_each_prefix(passes: int) -> None:
    stream = make_stream("calibrated", 1500, seed=3)
    n = len(stream)
    lengths = [50, 400, n] + ([2 * n] if passes == 2 else [])
    curve = error_vs_length(
        stream.scores, stream.labels, lengths, _policy, orders=3, passes=passes, seed=9
    )
    assert curve.lengths == tuple(lengths)
    assert curve.incorrect_accept.shape == (3, len(lengths))
    for r in range(3):
        rng = np.random.default_rng([9, r])
        order = np.concatenate([rng.permutation(n) for _ in range(passes)])
        for j, m in enumerate(lengths):
            # A fresh policy, same seed, run on the prefix alone.
            policy = _policy(r)
            s, y = stream.scores[order[:m]], stream.labels[order[:m]]
            trace = run_policy(policy, s, y)
            rates = error_rates(trace.accepted, trace.labels, trace.queried)
            bounds = online_error_bounds(policy, trace, delta=0.05)
            assert curve.incorrect_accept[r, j] == rates.incorrect_accept
            assert curve.incorrect_reject[r, j] == rates.incorrect_reject
            assert curve.strong_freq[r, j] == rates.strong_freq
            assert curve.bound_accept[r, j] == bounds["accept"].bound
            assert curve.bound_reject[r, j] == bounds["reject"].bound
    np.testing.assert_allclose(curve.mean("incorrect_reject"), curve.incorrect_reject.mean(0))
    assert curve.violations() == 0
    # The bound tightens with length.
    assert np.all(np.diff(curve.mean("bound_reject")) < 0)


def test_length_grid() -> None:
    assert length_grid(6400) == [200, 400, 800, 1600, 3200, 6400]
    assert length_grid(1000, start=200) == [200, 400, 800, 1000]
    assert length_grid(1000, start=200, passes=3) == [200, 400, 800, 1000, 1600, 3000]
    assert length_grid(80) == [80]
    with pytest.raises(ValueError, match="need n"):
        length_grid(0)


def _curve(ia: list[float], ir: list[float]) -> LengthCurve:
    a = np.asarray([ia])
    b = np.asarray([ir])
    z = np.zeros_like(a)
    return LengthCurve((100, 200, 400, 800), a, b, z + 1, z + 1, z, 0.1, 0.1, 800, 1)


def test_control_length() -> None:
    assert control_length(_curve([0.3, 0.1, 0.11, 0.1], [0.3, 0.2, 0.12, 0.09]), 0.02) == 400
    assert control_length(_curve([0.1] * 4, [0.1] * 4), 0.02) == 100
    # A dip that does not last does not count.
    assert control_length(_curve([0.1, 0.3, 0.1, 0.1], [0.1] * 4), 0.02) == 400
    assert control_length(_curve([0.1] * 4, [0.1, 0.1, 0.1, 0.2]), 0.02) is None
    # Only the lengths up to the stream's own (the rest are repeated passes).
    late = _curve([0.1] * 4, [0.3, 0.2, 0.2, 0.1])
    assert control_length(late, 0.02) == 800
    assert control_length(late, 0.02, up_to=400) is None
    assert control_length(_curve([0.1] * 4, [0.3, 0.1, 0.1, 0.3]), 0.02, up_to=400) == 200
    # At target + tol up to float rounding (a mean of count ratios) is within it.
    edge = _curve([0.2] * 4, [0.3, 0.3, 0.3, 0.22 + 1e-16 * 4])
    edge = LengthCurve(
        edge.lengths,
        edge.incorrect_accept,
        edge.incorrect_reject,
        edge.bound_accept,
        edge.bound_reject,
        edge.strong_freq,
        0.2,
        0.2,
        800,
        1,
    )
    assert control_length(edge, 0.02) == 800
    with pytest.raises(ValueError, match="no length"):
        control_length(late, 0.02, up_to=50)


def test_error_vs_length_errors() -> None:
    stream = make_stream("calibrated", 300, seed=0)
    with pytest.raises(ValueError, match="lengths"):
        error_vs_length(stream.scores, stream.labels, [400], _policy)
    with pytest.raises(ValueError, match="orders"):
        error_vs_length(stream.scores, stream.labels, [100], _policy, orders=0)
