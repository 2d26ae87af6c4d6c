"""Metric keys: the number encoding, its inverse, key parts, and keys in claim rules."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.shared.claims import evaluate_rule, rule_keys
from icml26.shared.keys import (
    is_rule_name,
    metric_key,
    number_part,
    parse_number_part,
    rule_ref,
)


@pytest.mark.parametrize(
    ("value", "part"),
    [
        (25, "25"),
        (0, "0"),
        (-3, "m3"),
        (0.25, "0p25"),
        (0.1, "0p1"),
        (2.5, "2p5"),
        (1.0, "1"),
        (-0.5, "m0p5"),
        (-0.0, "0"),
        (1e-4, "0p0001"),
        (1e-05, "1em5"),
        (2.5e-10, "2p5em10"),
        (1.5e20, "1p5e20"),
        (1e16, "1e16"),
        (1e15, "1000000000000000"),
        (0.1 + 0.2, "0p30000000000000004"),
        (np.int64(7), "7"),
        (np.float64(0.25), "0p25"),
        (np.float32(0.1), "0p1"),
    ],
)
def test_number_part_examples(value: float, part: str) -> None:
    assert number_part(value) == part
    assert parse_number_part(part) == float(str(value))  # NumPy floats: their own shortest form


def test_parse_gives_ints_for_digits_and_floats_otherwise() -> None:
    assert parse_number_part("25") == 25
    assert isinstance(parse_number_part("25"), int)
    assert isinstance(parse_number_part("0p25"), float)
    assert isinstance(parse_number_part("1e16"), float)
    assert parse_number_part("m1em5") == -1e-05


finite_floats = st.floats(allow_nan=False, allow_infinity=False)


@given(st.one_of(st.integers(), finite_floats))
def test_number_part_round_trips(value: float) -> None:
    part = number_part(value)
    assert metric_key(part) == part  # a valid text part: no dots, signs or spaces
    back = parse_number_part(part)
    assert back == value
    assert number_part(back) == part


@given(finite_floats, finite_floats)
def test_equal_numbers_give_equal_parts(x: float, y: float) -> None:
    assert (number_part(x) == number_part(y)) == (x == y)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), math.nan, math.inf, -math.inf])
def test_number_part_rejects_bools_and_non_finite(bad: object) -> None:
    with pytest.raises(ValueError, match=r"int or a float|finite"):
        number_part(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["0.5", "1p0", "007", "m0", "1em05", "1e+5", "", "p5", "x", "1e"])
def test_parse_rejects_what_number_part_never_writes(bad: str) -> None:
    with pytest.raises(ValueError, match=r"number part|not how number_part writes"):
        parse_number_part(bad)


def test_parse_names_the_canonical_spelling() -> None:
    with pytest.raises(ValueError, match="use '1'"):
        parse_number_part("1p0")
    with pytest.raises(ValueError, match=re.escape("number_part(0.5) is '0p5'")):
        parse_number_part("0.5")


def test_metric_key_examples() -> None:
    assert (
        metric_key("ndcg10", "sim_iid", "blitzrank_k10", 0.25)
        == "ndcg10.sim_iid.blitzrank_k10.0p25"
    )
    assert metric_key("fd", "t" + number_part(0.25)) == "fd.t0p25"
    assert metric_key("acc", "sim-iid", 10, -1.5) == "acc.sim-iid.10.m1p5"
    assert metric_key("loss") == "loss"


@pytest.mark.parametrize("bad", ["a.b", "", "x y", "a/b", "é", "0.25"])
def test_metric_key_rejects_bad_text_parts(bad: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"part {bad!r} is not allowed")) as info:
        metric_key("acc", bad)
    assert "number_part" in str(info.value)


def test_metric_key_suggests_the_number_encoding() -> None:
    with pytest.raises(ValueError, match=re.escape("number_part(0.25) is '0p25'")):
        metric_key("acc", "0.25")


@pytest.mark.parametrize("bad", [None, True, math.nan, [1], b"x"])
def test_metric_key_rejects_other_parts(bad: object) -> None:
    with pytest.raises(ValueError, match=r"text, ints or floats|finite"):
        metric_key("acc", bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one part"):
        metric_key()


@pytest.mark.parametrize(
    ("key", "bare"),
    [
        ("fd.t0p25", True),
        ("acc.m0p5", True),
        ("speedup.n512", True),
        ("ndcg10.sim_iid.blitzrank_k10.0p25", False),
        ("acc.sim-iid", False),
        ("x.if", False),
        ("None", False),
        ("", False),
        ("a..b", False),
    ],
)
def test_is_rule_name(key: str, bare: bool) -> None:
    assert is_rule_name(key) is bare


@pytest.mark.parametrize(
    "key", ["fd.t0p25", "ndcg10.sim_iid.blitzrank_k10.0p25", "acc.sim-iid", "x.if"]
)
def test_rule_ref_reads_the_key_in_a_claim_rule(key: str) -> None:
    rule = f"{rule_ref(key)} > 0.5"
    assert rule_keys(rule).keys == {key}
    holds, measured, _ = evaluate_rule(rule, {key: 0.75})
    assert holds is True
    assert measured == {key: 0.75}


def test_rule_ref_refuses_quotes() -> None:
    with pytest.raises(ValueError, match="cannot be named"):
        rule_ref('a"b')
