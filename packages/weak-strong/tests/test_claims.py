"""Each claim that was changed can come out false: its rule fed metrics that break it."""

from __future__ import annotations

import pytest

from icml26.weak_strong.config import SYNTHETIC_STREAMS
from icml26.weak_strong.paper import PAPER


def _claim(cid: str):
    return next(c for c in PAPER.claims if c.id == cid)


def _at_target(excess: float = 0.0) -> dict[str, float]:
    return {
        f"excess_{side}.{stream}.online.a{a}": excess
        for stream in SYNTHETIC_STREAMS
        for side in ("accept", "reject")
        for a in ("0.05", "0.1", "0.2")
    }


def test_online_at_target_holds_when_every_stream_is_at_target() -> None:
    assert _claim("online_at_target_synthetic").evaluate(_at_target(0.01))["holds"] is True


@pytest.mark.parametrize("stream", SYNTHETIC_STREAMS)
@pytest.mark.parametrize("side", ["accept", "reject"])
def test_online_at_target_fails_on_any_single_stream(stream: str, side: str) -> None:
    """The statement names every synthetic stream: one stream off target breaks the claim
    (before, the over- and under-confident streams were not checked at all)."""
    metrics = _at_target(0.0)
    metrics[f"excess_{side}.{stream}.online.a0.2"] = 0.03
    assert _claim("online_at_target_synthetic").evaluate(metrics)["holds"] is False


def test_online_at_target_is_undecided_without_a_stream() -> None:
    metrics = {k: v for k, v in _at_target().items() if ".underconfident." not in k}
    assert _claim("online_at_target_synthetic").evaluate(metrics)["holds"] is None


def test_online_at_target_math_needs_every_target_controlled() -> None:
    claim = _claim("online_at_target_math")
    ok = {f"control_length.math.online.a{a}": 1600.0 for a in ("0.05", "0.1", "0.2")}
    assert claim.evaluate(ok)["holds"] is True
    # -1: the full real stream misses the target at 0.05 (repeated passes do not count).
    missed = dict(ok, **{"control_length.math.online.a0.05": -1.0})
    missed["control_length_passes.math.online.a0.05"] = 12800.0
    assert claim.evaluate(missed)["holds"] is False
