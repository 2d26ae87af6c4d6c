"""The answer checker (exact and numeric) and the length router's fit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.adaptive_reasoning.answers import AnswerChecker, parse_number
from icml26.adaptive_reasoning.baselines import fit_length_router
from icml26.adaptive_reasoning.tasks import Problem


def test_checker_exact_and_numeric() -> None:
    check = AnswerChecker()
    assert check("18", "18")
    assert check("18.0", 18)
    assert check("$1,234", "1234")
    assert check("7.", "7")
    assert not check("7.1", "7")
    assert not check(None, "7")
    assert check(" Paris ", "paris")
    assert not check("Paris", "London")
    assert AnswerChecker(abs_tol=0.2)("7.1", "7")
    assert AnswerChecker(rel_tol=0.01)("1005", "1000")
    assert not AnswerChecker()("1005", "1000")
    assert not AnswerChecker(numeric=False)("18.0", "18")
    assert parse_number("1e3") == 1000
    assert parse_number("abc") is None
    with pytest.raises(ValueError, match="abs_tol"):
        AnswerChecker(abs_tol=-1)


@settings(max_examples=50, deadline=None)
@given(x=st.integers(-(10**6), 10**6))
def test_checker_numbers_match_their_formats(x: int) -> None:
    check = AnswerChecker()
    assert check(f"{x:,}", str(x))
    assert check(f"{x}.0", x)
    assert not check(str(x + 1), x)


def test_length_router_fits_the_separating_threshold() -> None:
    problems = [Problem("x" * n, 1, 1, n > 10) for n in (3, 5, 8, 12, 15, 20)]
    router = fit_length_router(problems, lambda p: len(p.text))
    assert 8 <= router.threshold < 12
    assert router(problems) == ["no_think"] * 3 + ["think"] * 3
    with pytest.raises(ValueError, match="needs problems"):
        fit_length_router([], len)  # type: ignore[arg-type]
