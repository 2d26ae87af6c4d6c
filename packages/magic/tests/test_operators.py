"""Rewrite operators: every composition is invertible to its intent (the judge relies on it),
and bad compositions fail naming the problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.magic.intents import builtin_catalogue
from icml26.magic.judge import OracleJudge
from icml26.magic.operators import (
    OPERATORS,
    TRAIN_OPERATORS,
    UNSEEN_OPERATORS,
    OperatorError,
    compose,
    format_ops,
    parse_ops,
    recover,
)

CATALOGUE = builtin_catalogue()
JUDGE = OracleJudge(CATALOGUE)
NAMES = sorted(OPERATORS)


@given(
    index=st.integers(0, len(CATALOGUE) - 1),
    ops=st.lists(st.sampled_from(NAMES), min_size=0, max_size=4, unique=True),
)
def test_composition_is_invertible_to_its_intent(index: int, ops: list[str]) -> None:
    intent = CATALOGUE.intents[index]
    conv = compose(intent.description, ops)
    assert conv[-1]["role"] == "user"
    assert recover(conv, ops) == intent.description
    assert JUDGE.intent_of(conv, ops) == intent


@given(ops=st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
def test_format_and_parse_round_trip(ops: list[str]) -> None:
    assert parse_ops(format_ops(ops)) == tuple(ops)


def test_operators_change_the_prompt_and_split_makes_turns() -> None:
    text = CATALOGUE.intents[0].description
    for name in NAMES:
        conv = compose(text, [name])
        assert conv != [{"role": "user", "content": text}], name
    split = compose(text, ["split"])
    assert [m["role"] for m in split] == ["user", "assistant", "user"]
    assert "zq" in compose(text, ["translate"])[0]["content"]
    assert any(c.isdigit() for c in compose(text, ["leet"])[0]["content"])


def test_train_and_unseen_vocabularies_are_disjoint_and_cover_all_operators() -> None:
    assert not set(TRAIN_OPERATORS) & set(UNSEEN_OPERATORS)
    assert set(TRAIN_OPERATORS) | set(UNSEEN_OPERATORS) == set(OPERATORS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("roleplay + jailbreakify", "unknown operator 'jailbreakify'"),
        ("roleplay + roleplay", "repeat"),
        ("roleplay + leet + split", "at most 2"),
        ("", "cannot read"),
        ("persona", "not allowed"),
    ],
)
def test_bad_compositions_fail_clearly(text: str, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        parse_ops(text, TRAIN_OPERATORS, max_ops=2)


def test_unknown_operator_in_compose() -> None:
    with pytest.raises(OperatorError, match="unknown operator 'base64'"):
        compose("asks for x", ["base64"])


def test_recover_refuses_a_prompt_the_operators_did_not_build() -> None:
    conv = compose(CATALOGUE.intents[0].description, ["roleplay"])
    with pytest.raises(OperatorError):
        recover(conv, ["hypothetical"])
    with pytest.raises(OperatorError):
        recover(conv, ["split"])


def test_leet_refuses_digits() -> None:
    with pytest.raises(OperatorError, match="digit-free"):
        compose("asks for 7 things", ["leet"])
