from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.shared.claims import Claim, RuleError, check_rule, evaluate_rule

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(a=finite, b=finite)
def test_comparison_matches_python(a: float, b: float) -> None:
    holds, measured, note = evaluate_rule("x.a < x.b", {"x.a": a, "x.b": b})
    assert holds is (a < b)
    assert measured == {"x.a": a, "x.b": b}
    assert note == ""


@given(a=st.floats(0.1, 100), k=st.floats(0.1, 10))
def test_arithmetic_and_chains(a: float, k: float) -> None:
    metrics = {"err": a, "base": a * k, "k": k}
    holds, _, _ = evaluate_rule("0 < err <= base / k * 1.000001", metrics)
    assert holds is True


def test_aggregates_over_globs() -> None:
    metrics = {"drift.fput.rohnn": 0.01, "drift.wave.rohnn": 0.04, "drift.wave.node": 5.0}
    holds, measured, _ = evaluate_rule('max_of("drift.*.rohnn") < 0.05', metrics)
    assert holds is True
    assert set(measured) == {"drift.fput.rohnn", "drift.wave.rohnn"}
    assert evaluate_rule('count_of("drift.*") == 3', metrics)[0] is True
    assert evaluate_rule('mean_of("drift.*.rohnn") == 0.025', metrics)[0] is True


def test_boolean_operators_record_every_metric() -> None:
    holds, measured, _ = evaluate_rule("a > 1 or b > 1", {"a": 2.0, "b": 0.0})
    assert holds is True
    assert measured == {"a": 2.0, "b": 0.0}
    assert evaluate_rule("not a > 1", {"a": 2.0})[0] is False


def test_quoted_keys_and_functions() -> None:
    metrics = {"acc.top-1": 0.9, "gap": -3.0}
    assert evaluate_rule('m("acc.top-1") > 0.5 and abs(gap) == 3', metrics)[0] is True
    assert evaluate_rule("log10(100) == 2", {})[0] is True


@pytest.mark.parametrize(
    ("metrics", "reason"),
    [
        ({}, "missing"),
        ({"a": None}, "not a number"),
        ({"a": math.inf}, "not finite"),
        ({"a": "x"}, "not a number"),
    ],
)
def test_undecidable_rules_give_none(metrics: dict, reason: str) -> None:
    holds, measured, note = evaluate_rule("a < 1", metrics)
    assert holds is None
    assert reason in note
    assert measured == {"a": None}


def test_glob_with_no_match_is_undecidable() -> None:
    holds, _, note = evaluate_rule('max_of("nothing.*") < 1', {"a": 1.0})
    assert holds is None
    assert "no metric matches" in note


@pytest.mark.parametrize(
    "rule",
    [
        "__import__('os').system('true')",
        "a.b()",
        "open('x')",
        "a if b else c",
        "[a, b]",
        "a < 'text'",
        "True",
        "m(a)",
        "lambda: 1",
        "",
        "a <",
    ],
)
def test_rules_outside_the_grammar_are_refused(rule: str) -> None:
    with pytest.raises(RuleError):
        check_rule(rule)


def test_claim_entry_is_computed_not_set() -> None:
    claim = Claim("fast", "It is fast.", "2x", "speedup >= 1.5")
    assert claim.evaluate({"speedup": 2.0})["holds"] is True
    entry = claim.evaluate({"speedup": 1.0})
    assert entry["holds"] is False
    assert set(entry) == {"id", "statement", "paper_value", "measured", "rule", "holds", "kind"}


def test_claim_validates_rule_and_id_at_definition() -> None:
    with pytest.raises(RuleError):
        Claim("bad", "x", "y", "import os")
    with pytest.raises(ValueError, match="identifier"):
        Claim("has space", "x", "y", "a < 1")
