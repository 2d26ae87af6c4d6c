"""EM / F1 with SQuAD normalisation on hand cases, and the Filter's precision and recall."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml26.decor.scoring import exact_match, kept_precision_recall, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("pred", "answers", "em", "f1"),
    [
        ("Paris", ["Paris"], 1.0, 1.0),
        ("the  Paris!", ["Paris"], 1.0, 1.0),
        ("Madrid", ["Paris"], 0.0, 0.0),
        ("New Delhi", ["Delhi"], 0.0, 2 / 3),  # P = 1/2, R = 1 -> F1 = 2/3
        ("Porto-Novo", ["Cotonou", "Porto-Novo"], 1.0, 1.0),
        ("", ["Paris"], 0.0, 0.0),
        ("an apple a day", ["apple day"], 1.0, 1.0),
    ],
)
def test_hand_cases(pred: str, answers: list[str], em: float, f1: float) -> None:
    assert exact_match(pred, answers) == em
    assert token_f1(pred, answers) == pytest.approx(f1)


def test_normalisation_matches_squad() -> None:
    assert normalize_answer("The Quick, Brown fox.") == "quick brown fox"


def test_filter_precision_recall_hand_cases() -> None:
    # kept a, b; gold a, c; retrieved a, b, c: P = 1/2, R = 1/2
    assert kept_precision_recall(["a", "b"], {"a", "c"}, {"a", "b", "c"}) == (0.5, 0.5)
    # c was never retrieved: the Filter could not keep it, recall is over {a}
    assert kept_precision_recall(["a", "b"], {"a", "c"}, {"a", "b"}) == (0.5, 1.0)
    assert kept_precision_recall([], {"a"}, {"a"}) == (1.0, 0.0)
    assert kept_precision_recall(["a"], {"a"}) == (1.0, 1.0)


@given(st.text(max_size=30), st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=3))
def test_em_implies_full_f1(pred: str, answers: list[str]) -> None:
    f1 = token_f1(pred, answers)
    assert 0.0 <= f1 <= 1.0
    if exact_match(pred, answers):
        assert f1 == 1.0
