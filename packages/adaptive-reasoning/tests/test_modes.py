"""Reply parsing survives malformed output; targets parse back to themselves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.adaptive_reasoning.modes import (
    NO_THINK,
    THINK,
    THINK_END,
    direct_target,
    parse_reply,
    think_target,
)


def test_targets_parse_back() -> None:
    assert parse_reply(think_target("5+3=8,", 8)).answer == "8"
    assert parse_reply(think_target("5+3=8,", 8)).mode == "think"
    assert parse_reply(direct_target(7)) == parse_reply(f"  {NO_THINK}7 ")
    assert parse_reply(direct_target(7)).mode == "no_think"


def test_malformed_replies() -> None:
    assert parse_reply("").mode is None
    assert parse_reply("8").answer is None  # no mode token
    assert parse_reply(f"{THINK}5+3=8,").answer is None  # reasoning never closed
    assert parse_reply(f"{THINK}5+3=8,{THINK_END}").answer is None  # no answer
    assert parse_reply(f"{THINK}x{THINK_END}eight").answer == "eight"  # the checker decides
    assert parse_reply(f"{NO_THINK}{THINK}3").answer is None  # mixed modes
    assert parse_reply(f"{THINK}{THINK_END}-2,").answer == "-2,"
    assert parse_reply(None).mode is None  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([*"0123456789+-=,. ab", THINK, THINK_END, NO_THINK]), max_size=40).map(
        "".join
    )
)
def test_parse_never_raises(text: str) -> None:
    r = parse_reply(text)
    assert r.mode in (None, "think", "no_think")
    assert r.answer is None or isinstance(r.answer, str)
